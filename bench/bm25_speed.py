"""How fast is the sparse BM25 backend against rank-bm25, and how does it scale?

1. SciFact (5,183 abstracts, the 300 test claims), one process: the corpus
   and queries are analyzed once (shared, timed apart), then each backend
   builds its index and retrieves the top 100 of every claim, best of
   ``--repeat``. Prints both times, the speed ratio (backend work alone and end
   to end, analysis included) and nDCG@10 of both runs (they must agree).
2. A synthetic corpus of ``--docs`` documents (default 400,000, ClimateCheck
   scale): Zipfian vocabulary (``p(rank r) ~ 1/r^1.07`` over ``--vocab`` words),
   lognormal lengths of mean ~150 tokens; the sparse backend's index time
   (analysis included), peak resident memory (``ru_maxrss``) and query latency
   (``--queries`` queries of 4-20 words, top 100; batched and one by one).

    python bench/bm25_speed.py [--analyzer stem] [--repeat 3] [--docs 400000] [--skip-synthetic]

No index cache is used (``cache=False``). Numbers are printed, never asserted.
"""
from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SCIFACT = REPO.parent / "shared" / "data" / "scifact"


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1024 / (1024 if sys.platform == "darwin" else 1)


def scifact(analyzer_name: str, repeat: int) -> None:
    from evalkit.io.formats.collections import read_corpus, read_queries
    from evalkit.metrics.evaluation import evaluate
    from evalkit.io.reading import read_qrels
    from evalkit.metrics import parse_metrics
    from evalkit.systems import bm25_index
    from evalkit.systems.analyzers import get_analyzer
    from evalkit.data.ranking import id_positions as id_ranks
    from evalkit.systems.bm25 import BM25

    qrels = read_qrels(str(SCIFACT / "qrels" / "test.tsv"))
    corpus = read_corpus(SCIFACT / "corpus.jsonl")
    queries = read_queries(SCIFACT / "queries.jsonl").subset(qrels.query_ids.tolist())
    analyzer = get_analyzer(analyzer_name)
    fields = ["title", "text"]

    start = time.perf_counter()
    doc_tokens = [analyzer(corpus.text(i, fields)) for i in range(len(corpus))]
    query_tokens = [analyzer(text) for text in queries.texts]
    analysis = time.perf_counter() - start
    tie_rank = id_ranks(corpus.ids)
    print(f"SciFact: {len(corpus):,} documents, {len(queries)} test claims, analyzer {analyzer_name}: "
          f"analysis {analysis:.3f} s (shared by both backends; cold stemmer cache, warm for the end-to-end runs)")

    backend_s: dict[str, float] = {}
    end_to_end_s: dict[str, float] = {}
    ndcg: dict[str, float] = {}
    for backend in ("rank-bm25", "sparse"):
        cls = bm25_index.BACKENDS[backend]
        best = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            index = cls.build(iter(doc_tokens), len(corpus), 1.5, 0.75)
            for _hits in index.search(query_tokens, 100, tie_rank):
                pass
            best = min(best, time.perf_counter() - start)
        backend_s[backend] = best
        start = time.perf_counter()
        run = BM25(analyzer=analyzer_name, backend=backend, cache=False).retrieve(corpus, queries, k=100)
        end_to_end_s[backend] = time.perf_counter() - start
        ndcg[backend] = evaluate(run, qrels, parse_metrics("ndcg@10")).means["nDCG@10"]
        print(f"  {backend:<10} index + top-100: {best:7.3f} s (best of {repeat})   "
              f"end to end (analysis + index + top-100): {end_to_end_s[backend]:7.3f} s   nDCG@10 {ndcg[backend]:.4f}")
    print(f"  sparse vs rank-bm25: {backend_s['rank-bm25'] / backend_s['sparse']:.1f}x faster (index + top-100), "
          f"{end_to_end_s['rank-bm25'] / end_to_end_s['sparse']:.1f}x end to end; "
          f"nDCG@10 difference {abs(ndcg['sparse'] - ndcg['rank-bm25']):.4f}")


def synthetic_corpus(n_docs: int, vocab: int, seed: int = 0):
    """Documents of Zipf-distributed words ``w<rank>`` (base 36), lognormal lengths of mean ~150."""
    from evalkit.data.corpus import Corpus

    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, vocab + 1) ** 1.07
    cdf = np.cumsum(weights / weights.sum())
    words = np.array([f"w{np.base_repr(r, 36).lower()}" for r in range(vocab)], dtype=object)
    lengths = np.maximum(5, rng.lognormal(np.log(150) - 0.125, 0.5, size=n_docs).astype(np.int64))
    texts = []
    for start in range(0, n_docs, 10_000):
        chunk = lengths[start:start + 10_000]
        ranks = np.searchsorted(cdf, rng.random(int(chunk.sum())))
        bounds = np.concatenate([[0], np.cumsum(chunk)])
        texts.extend(" ".join(words[ranks[bounds[i]:bounds[i + 1]]]) for i in range(len(chunk)))
    query_lengths = rng.integers(4, 21, size=2000)
    ranks = np.searchsorted(cdf, rng.random(int(query_lengths.sum())))
    bounds = np.concatenate([[0], np.cumsum(query_lengths)])
    query_texts = [" ".join(words[ranks[bounds[i]:bounds[i + 1]]]) for i in range(len(query_lengths))]
    corpus = Corpus(ids=[f"doc{i}" for i in range(n_docs)], fields={"text": texts})
    return corpus, query_texts, int(lengths.sum())


def synthetic(n_docs: int, vocab: int, n_queries: int, analyzer_name: str) -> None:
    from evalkit.data.ranking import id_positions as id_ranks
    from evalkit.systems.bm25 import BM25
    from evalkit.systems.analyzers import get_analyzer

    start = time.perf_counter()
    corpus, query_texts, n_tokens = synthetic_corpus(n_docs, vocab)
    query_texts = query_texts[:n_queries]
    made = time.perf_counter() - start
    before = peak_rss_mb()
    print(f"\nsynthetic: {n_docs:,} documents, {n_tokens:,} tokens ({n_tokens / n_docs:.0f}/doc), "
          f"Zipf vocabulary of {vocab:,} words; generated in {made:.1f} s, peak RSS so far {before:,.0f} MB")

    system = BM25(analyzer=analyzer_name, fields=["text"], backend="sparse", cache=False)
    start = time.perf_counter()
    index = system.build_index(corpus)
    built = time.perf_counter() - start
    after = peak_rss_mb()
    w = index.weights
    matrix_mb = (w.data.nbytes + w.indices.nbytes + w.indptr.nbytes) / 2**20
    print(f"  sparse index ({analyzer_name}, analysis included): {built:.1f} s ({n_docs / built:,.0f} docs/s); "
          f"{len(index.vocab):,} terms, {w.nnz:,} postings, matrix {matrix_mb:,.0f} MB; "
          f"peak RSS {after:,.0f} MB (+{after - before:,.0f} MB while indexing)")

    analyzer = get_analyzer(analyzer_name)
    tokens = [analyzer(t) for t in query_texts]
    tie_rank = id_ranks(corpus.ids)
    start = time.perf_counter()
    hits = sum(len(found) for found, _ in index.search(tokens, 100, tie_rank))
    batched = time.perf_counter() - start
    single = []
    for one in tokens[:200]:
        start = time.perf_counter()
        list(index.search([one], 100, tie_rank))
        single.append(time.perf_counter() - start)
    print(f"  top-100 for {len(tokens):,} queries (avg {np.mean([len(t) for t in tokens]):.1f} terms): "
          f"{batched:.2f} s batched = {1000 * batched / len(tokens):.1f} ms/query ({hits / len(tokens):.0f} hits/query); "
          f"one at a time: median {1000 * np.median(single):.1f} ms, p95 {1000 * np.percentile(single, 95):.1f} ms")
    print(f"  peak RSS of the process: {peak_rss_mb():,.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--analyzer", default="stem")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--docs", type=int, default=400_000, help="synthetic corpus size")
    parser.add_argument("--vocab", type=int, default=500_000, help="synthetic vocabulary size")
    parser.add_argument("--queries", type=int, default=1000, help="synthetic queries")
    parser.add_argument("--skip-synthetic", action="store_true")
    args = parser.parse_args()
    if (SCIFACT / "corpus.jsonl").exists():
        scifact(args.analyzer, args.repeat)
    else:
        print(f"SciFact not found at {SCIFACT}; skipping the backend comparison")
    if not args.skip_synthetic:
        synthetic(args.docs, args.vocab, args.queries, args.analyzer)


if __name__ == "__main__":
    main()
