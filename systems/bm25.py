"""BM25 (Okapi) lexical retrieval, the first stage of every pipeline.

Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25 and Beyond"
(2009), in the variant of rank-bm25's ``BM25Okapi`` (Trotman et al., 2014)::

    score(q, d) = sum_{t in q} idf(t) * tf(t,d) * (k1 + 1) / (tf(t,d) + k1 * (1 - b + b * |d| / avgdl))
    idf(t)      = ln((N - df(t) + 0.5) / (df(t) + 0.5))

Variant choices, stated because BM25 implementations differ in them
(Kamphuis et al., ECIR 2020):

* idf is Robertson's, which is negative for terms in more than half of the
  documents; such terms get ``0.25 * mean idf`` (rank-bm25's epsilon floor).
  Lucene/Anserini/Elasticsearch use ``ln(1 + (N - df + .5) / (df + .5))``
  instead (never negative), bm25s's ``robertson`` clips at 0, ATIRE uses
  ``ln(N / df)``. With the ``stem`` analyzer (stop words removed) hardly any
  term is that common, so the choice rarely matters there.
* the ``(k1 + 1)`` factor is kept (ATIRE/rank-bm25); Lucene drops it (a
  constant, same ranking).
* a query term repeated counts once per repetition; |d| and avgdl count the
  analyzer's tokens of the chosen fields, joined with a space (one flat field,
  as Anserini's "flat" BEIR index; BEIR's Elasticsearch baseline scored title
  and text as separate fields).
* documents sharing no term with the query are not returned (their score is
  0); a query with no hits is still listed in the run, with nothing.

Backends (same formula and analyzer; ``bench/bm25_speed.py`` compares them):
``sparse`` (default) precomputes the per-(term, document) weights in a
scipy.sparse matrix and scores a batch of queries with one sparse product
(float32); ``rank-bm25`` is the reference implementation (float64, one Python
pass over the corpus per query term). Ties are broken by document id
descending, evalkit's ranking rule, already when the top ``k`` is cut.

Analyzers: see :mod:`evalkit.systems.analyzers` (whitespace, simple, stem,
spacy-lemma). Indexes are cached on disk (:mod:`evalkit.systems.bm25_index`).

>>> from evalkit.pipelines.registry import load_system
>>> run = load_system("bm25", analyzer="stem").retrieve(corpus, queries, k=100)  # doctest: +SKIP
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from evalkit.data.corpus import Corpus, Queries
from evalkit.data import Run
from evalkit.data.ranking import id_positions
from evalkit.core.errors import UsageError
from evalkit.pipelines.registry import register_system
from evalkit.pipelines.stages import LOCAL, Engine, Retriever, option

from . import bm25_index
from .analyzers import ANALYZERS, get_analyzer


@dataclass
class BM25Options:
    analyzer: str = option("stem", "whitespace | simple | stem (lower-case, Lucene stop words, Snowball) | spacy-lemma")
    k1: float = option(1.5, "term-frequency saturation k1 (>= 0)")
    b: float = option(0.75, "document-length normalisation b (0..1)")
    backend: str = option("sparse", "sparse (scipy, fast) | rank-bm25 (reference BM25Okapi); same scores")
    fields: list[str] = option(["title", "text"], "document fields joined with a space into the indexed text")
    cache: bool = option(True, "keep the index on disk ($EVALKIT_CACHE/bm25) keyed by corpus, analyzer, fields, k1, b, backend")


@register_system
class BM25(Retriever):
    """Okapi BM25 over chosen fields with a chosen analyzer (rank-bm25's BM25Okapi formula)."""

    name = "bm25"
    distributed = "query shards as Ray tasks, the index put in the object store once"
    description = (
        "Okapi BM25 (rank-bm25 BM25Okapi formula: idf ln((N-df+.5)/(df+.5)), negative idf -> 0.25 * mean idf, "
        "tf*(k1+1)/(tf+k1*(1-b+b*|d|/avgdl))); backends sparse (fast) and rank-bm25 (reference) give the same scores; "
        "Lucene/Anserini differ in idf (ln(1+...)) and drop (k1+1)"
    )
    Options = BM25Options

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        o = self.options
        if o.analyzer not in ANALYZERS:
            raise UsageError(f"unknown analyzer {o.analyzer!r} (known: {', '.join(sorted(ANALYZERS))})")
        if o.backend not in bm25_index.BACKENDS:
            raise UsageError(f"unknown bm25 backend {o.backend!r} (known: {', '.join(bm25_index.BACKENDS)})")
        if not o.k1 >= 0 or not 0 <= o.b <= 1:
            raise UsageError(f"bm25 needs k1 >= 0 and 0 <= b <= 1 (got k1={o.k1}, b={o.b})")
        if isinstance(o.fields, str):
            o.fields = [o.fields]
        if not o.fields:
            raise UsageError("bm25 needs at least one field (fields=title,text)")
        self.index = None  # the last index used, for inspection and tests

    # ------------------------------------------------------------- indexing
    def index_key(self, corpus: Corpus) -> str:
        o = self.options
        return bm25_index.cache_key(
            {"corpus": corpus.fingerprint(), "analyzer": o.analyzer, "fields": list(o.fields),
             "k1": float(o.k1), "b": float(o.b), "backend": o.backend}
        )

    def build_index(self, corpus: Corpus):
        """Analyze the chosen fields of every document and build the backend's index."""
        o = self.options
        analyzer = get_analyzer(o.analyzer)
        texts = (corpus.text(i, o.fields) for i in range(len(corpus)))
        tokens = analyzer.many(texts, total=len(corpus), desc="bm25 indexing")
        return bm25_index.BACKENDS[o.backend].build(tokens, len(corpus), float(o.k1), float(o.b))

    def get_index(self, corpus: Corpus):
        """The index of ``corpus``: from the cache when it holds one, else built (and cached)."""
        o = self.options
        key = self.index_key(corpus) if o.cache else None
        meta = {"corpus": corpus.fingerprint(), "documents": len(corpus), "analyzer": o.analyzer,
                "fields": list(o.fields), "k1": o.k1, "b": o.b} if o.cache else {}
        self.index = bm25_index.load_or_build(o.backend, key, lambda: self.build_index(corpus), meta)
        return self.index

    # ------------------------------------------------------------- retrieval
    def retrieve(self, corpus: Corpus, queries: Queries, k: int = 1000, *, engine: Engine = LOCAL) -> Run:
        """Top ``k`` documents per query by BM25 score (every query listed, possibly with no hits); the
        search runs on ``engine`` (blocks of queries over one copy of the index)."""
        if k <= 0:
            raise UsageError(f"k must be positive (got {k})")
        present = [f for f in self.options.fields if f in corpus.fields]
        if len(corpus) and not present:
            raise UsageError(
                f"bm25: the corpus has none of the fields {', '.join(self.options.fields)} (it has: {', '.join(corpus.field_names)})"
            )
        analyzer = get_analyzer(self.options.analyzer)
        query_tokens = list(analyzer.many(queries.texts, total=len(queries), desc="bm25 queries"))
        qids: list[str] = []
        docs: list[np.ndarray] = []
        scores: list[np.ndarray] = []
        if len(corpus) and any(query_tokens):
            index = self.get_index(corpus)
            tie_rank = id_positions(corpus.ids)  # ties as the ranking rule orders them
            ids = np.asarray(corpus.ids, dtype=object)
            search = bm25_index.Search(index, k, tie_rank, progress=len(queries) >= 1000, name=self.name)
            hits = np.asarray(engine.run(search.work(query_tokens)))
            for qid, row in zip(queries.ids, hits):
                found = row["row"][row["row"] >= 0]
                qids.extend([qid] * len(found))
                docs.append(ids[found])
                scores.append(row["score"][: len(found)].astype(np.float64))
        run = Run.from_rows(
            qids,
            np.concatenate(docs).tolist() if docs else [],
            np.concatenate(scores) if scores else np.zeros(0),
            name=self.name,
        )
        return with_all_queries(run, queries.ids)


def with_all_queries(run: Run, query_ids: list[str]) -> Run:
    """``run`` listing every query of ``query_ids``, those without rows included."""
    have = set(run.query_ids.tolist())
    missing = [q for q in dict.fromkeys(query_ids) if q not in have]
    if not missing:
        return run
    return dataclasses.replace(run, query_ids=np.concatenate([run.query_ids, np.array(missing, dtype=object)]))
