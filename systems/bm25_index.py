"""BM25 indexes for :mod:`evalkit.systems.bm25`: built once, cached on disk, scored in batches.

Two backends compute the same Okapi BM25 (rank-bm25's ``BM25Okapi``)::

    score(q, d) = sum_{t in q} idf(t) * tf(t,d) * (k1 + 1) / (tf(t,d) + k1 * (1 - b + b * |d| / avgdl))
    idf(t)      = ln((N - df(t) + 0.5) / (df(t) + 0.5)),  negative values replaced by eps * mean idf (eps = 0.25)

A query term repeated counts once per repetition (as in rank-bm25).

* ``rank-bm25`` -- the reference: ``rank_bm25.BM25Okapi``, one Python pass over
  all documents per query term (float64).
* ``sparse`` -- the same formula vectorised with scipy.sparse: the per-(term,
  document) weights are computed once at indexing (float32, an "eager" index as
  in bm25s, Lù 2024), a batch of queries is one sparse product.

Indexes are cached under ``$EVALKIT_CACHE/bm25/<key>/`` where the key hashes
the corpus fingerprint, analyzer, fields, k1, b, epsilon and backend; the
files are ``.npy`` arrays (loaded with ``allow_pickle=False``) and JSON, never
pickles, and a folder appears only complete (written aside, then renamed).
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import warnings
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from evalkit.data.ranking import order_of
from evalkit.systems._models.modelio import cache_dir

FORMAT_VERSION = 1
EPSILON = 0.25  # rank-bm25's floor for negative idf, as a fraction of the mean idf
QUERY_BATCH = 256  # queries scored by one sparse product ...
MAX_BATCH_CELLS = 4_000_000  # ... fewer on large corpora: at most this many (query, document) cells
ROW_CHUNK = 20_000  # documents whose weights are computed at once


def cache_key(parts: dict[str, Any]) -> str:
    """Stable hash of everything the index depends on."""
    from evalkit.systems._models.modelio import settings_key

    return settings_key({"format": FORMAT_VERSION, "epsilon": EPSILON, **parts})[:40]


def analyze_to_ids(token_lists: Iterable[list[str]]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """``(vocabulary, term ids of all documents concatenated, document offsets)``; ids in first-seen order."""
    vocab: dict[str, int] = {}
    get = vocab.setdefault
    ids = array("i")
    lengths = array("q", [0])
    for tokens in token_lists:
        ids.extend([get(t, len(vocab)) for t in tokens])
        lengths.append(len(tokens))
    offsets = np.cumsum(np.frombuffer(lengths, dtype=np.int64))
    if offsets[-1] < 2**31:  # int32 offsets keep scipy from copying the ids to int64
        offsets = offsets.astype(np.int32)
    return list(vocab), np.frombuffer(ids, dtype=np.int32), offsets


def idf_okapi(df: np.ndarray, n_docs: int, epsilon: float = EPSILON) -> np.ndarray:
    """rank-bm25's idf: ``ln(N - df + .5) - ln(df + .5)``, negatives set to ``epsilon * mean(idf)``."""
    idf = np.log(n_docs - df + 0.5) - np.log(df + 0.5)
    if idf.size:
        idf[idf < 0] = epsilon * idf.mean()
    return idf


class SparseIndex:
    """Eager BM25: ``weights`` is a (vocabulary x documents) CSR matrix of per-term document scores."""

    backend = "sparse"

    def __init__(self, vocab: list[str], weights) -> None:
        self.vocab = vocab
        self.term_id = {t: i for i, t in enumerate(vocab)}
        self.weights = weights

    @classmethod
    def build(cls, token_lists: Iterable[list[str]], n_docs: int, k1: float, b: float) -> "SparseIndex":
        import scipy.sparse as sp

        vocab, ids, offsets = analyze_to_ids(token_lists)
        n_terms = len(vocab)
        doc_len = np.diff(offsets).astype(np.float64)  # before sum_duplicates, which rewrites offsets in place
        tf = sp.csr_matrix((np.ones(ids.size, dtype=np.float32), ids, offsets), shape=(n_docs, n_terms))
        tf.sum_duplicates()  # one entry per (document, term), data = term frequency
        avgdl = doc_len.mean() if n_docs else 0.0
        idf = idf_okapi(np.bincount(tf.indices, minlength=n_terms), n_docs)
        norm = k1 * (1 - b + b * doc_len / avgdl) if avgdl > 0 else np.zeros(n_docs)
        weights = np.empty(tf.nnz, dtype=np.float32)
        for first in range(0, n_docs, ROW_CHUNK):  # float64 arithmetic in chunks (memory), float32 storage
            rows = slice(first, min(n_docs, first + ROW_CHUNK))
            lo, hi = tf.indptr[rows.start], tf.indptr[rows.stop]
            freq = tf.data[lo:hi].astype(np.float64)
            weights[lo:hi] = idf[tf.indices[lo:hi]] * freq * (k1 + 1) / (freq + np.repeat(norm[rows], np.diff(tf.indptr[rows.start:rows.stop + 1])))
        tf.data = weights
        return cls(vocab, tf.T.tocsr())

    def query_matrix(self, queries: Sequence[list[str]]):
        """(queries x vocabulary) term counts; unknown terms dropped, repeats counted."""
        import scipy.sparse as sp

        rows, cols = [], []
        for row, tokens in enumerate(queries):
            for token in tokens:
                term = self.term_id.get(token)
                if term is not None:
                    rows.append(row)
                    cols.append(term)
        data = np.ones(len(rows), dtype=np.float32)
        matrix = sp.csr_matrix((data, (rows, cols)), shape=(len(queries), len(self.vocab)))
        matrix.sum_duplicates()
        return matrix

    def search(self, queries: Sequence[list[str]], k: int, tie_rank: np.ndarray, progress: bool = False):
        """Yield ``(document indices, scores)`` of the top ``k`` of each query, best first."""
        from evalkit.core.progress import progress as progress_of

        size = max(1, min(QUERY_BATCH, MAX_BATCH_CELLS // max(1, self.weights.shape[1])))
        batches = range(0, len(queries), size)
        for start in progress_of(batches, desc="bm25 (sparse) queries", unit="batch", enabled=progress):
            scores = self.query_matrix(queries[start:start + size]) @ self.weights
            for row in range(scores.shape[0]):
                lo, hi = scores.indptr[row], scores.indptr[row + 1]
                yield top_k(scores.data[lo:hi], scores.indices[lo:hi], k, tie_rank)

    def save(self, folder: Path) -> None:
        (folder / "vocab.json").write_text(json.dumps(self.vocab, ensure_ascii=False, allow_nan=False), encoding="utf-8")
        for name in ("data", "indices", "indptr"):
            np.save(folder / f"{name}.npy", getattr(self.weights, name), allow_pickle=False)
        (folder / "shape.json").write_text(json.dumps(list(self.weights.shape), allow_nan=False), encoding="utf-8")

    @classmethod
    def load(cls, folder: Path) -> "SparseIndex":
        import scipy.sparse as sp

        vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
        arrays = [np.load(folder / f"{name}.npy", allow_pickle=False) for name in ("data", "indices", "indptr")]
        shape = tuple(json.loads((folder / "shape.json").read_text(encoding="utf-8")))
        return cls(vocab, sp.csr_matrix(tuple(arrays), shape=shape))


class RankBM25Index:
    """The reference: ``rank_bm25.BM25Okapi`` (state cached as JSON)."""

    backend = "rank-bm25"
    STATE = ("k1", "b", "epsilon", "corpus_size", "avgdl", "doc_len", "doc_freqs", "idf", "average_idf")

    def __init__(self, model) -> None:
        self.model = model  # None: no document has a token (rank-bm25 would divide by zero)

    @classmethod
    def build(cls, token_lists: Iterable[list[str]], n_docs: int, k1: float, b: float) -> "RankBM25Index":
        from rank_bm25 import BM25Okapi

        token_lists = list(token_lists)
        return cls(BM25Okapi(token_lists, k1=k1, b=b, epsilon=EPSILON) if any(token_lists) else None)

    def search(self, queries: Sequence[list[str]], k: int, tie_rank: np.ndarray, progress: bool = False):
        from evalkit.core.progress import progress as progress_of

        if self.model is None:
            yield from ((np.zeros(0, dtype=np.int64), np.zeros(0)) for _ in queries)
            return
        everyone = np.arange(self.model.corpus_size)
        for tokens in progress_of(queries, desc="bm25 (rank-bm25) queries", unit="query", enabled=progress):
            yield top_k(self.model.get_scores(tokens), everyone, k, tie_rank)

    def save(self, folder: Path) -> None:
        state = None if self.model is None else {name: getattr(self.model, name) for name in self.STATE}
        (folder / "rank_bm25.json").write_text(json.dumps(state, ensure_ascii=False, allow_nan=False), encoding="utf-8")

    @classmethod
    def load(cls, folder: Path) -> "RankBM25Index":
        from rank_bm25 import BM25Okapi

        state = json.loads((folder / "rank_bm25.json").read_text(encoding="utf-8"))
        if state is None:
            return cls(None)
        model = BM25Okapi.__new__(BM25Okapi)
        model.__dict__.update(state, tokenizer=None)
        return cls(model)


BACKENDS = {"sparse": SparseIndex, "rank-bm25": RankBM25Index}


def top_k(scores: np.ndarray, docs: np.ndarray, k: int, tie_rank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best non-zero scores: score descending, ties by document id descending (evalkit's rule).

    ``tie_rank[d]`` is the position of document ``d`` among the ids sorted
    ascending (:func:`evalkit.data.ranking.id_positions`), so ties at the cut
    keep the documents the ranking puts first.
    """
    keep = scores != 0
    scores, docs = scores[keep], docs[keep]
    if scores.size > k:
        kth = np.partition(scores, scores.size - k)[scores.size - k]
        keep = scores >= kth
        scores, docs = scores[keep], docs[keep]
    order = order_of(scores, tie_rank[docs])[:k]
    return docs[order], scores[order]


def load_or_build(backend: str, key: str | None, build, meta: dict[str, Any]):
    """The cached index for ``key`` or ``build()`` (then cached); ``key=None`` skips the cache."""
    cls = BACKENDS[backend]
    if key is None:
        return build()
    folder = cache_dir("bm25") / key
    if (folder / "meta.json").exists():
        try:
            return cls.load(folder)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            warnings.warn(f"bm25: unreadable cached index {folder} ({exc}); rebuilding", stacklevel=2)
            shutil.rmtree(folder, ignore_errors=True)
    index = build()
    tmp = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=folder.parent))
    try:
        index.save(tmp)
        (tmp / "meta.json").write_text(json.dumps({**meta, "backend": backend, "format": FORMAT_VERSION}, indent=1, allow_nan=False), encoding="utf-8")
        os.replace(tmp, folder)
    except OSError:  # another process cached it first, or the disk is full: the index is still usable
        shutil.rmtree(tmp, ignore_errors=True)
    return index


HIT = np.dtype([("row", np.int64), ("score", np.float64)])


@dataclass
class Search:
    """A BM25 index's top-``k`` search: the model work of BM25, handed to an engine as one
    :class:`~evalkit.pipelines.engine.Work` (a distributed engine ships this object, the index with it,
    to its workers once and searches blocks of queries there)."""

    index: Any
    k: int
    tie_rank: np.ndarray
    progress: bool = False
    name: str = "bm25"

    def width(self) -> int:
        return max(1, min(self.k, len(self.tie_rank)))

    def hits(self, query_tokens: Sequence[list[str]]) -> np.ndarray:
        """``(queries, width)`` hits, best first: document row and score (row -1: no more hits)."""
        out = np.zeros((len(query_tokens), self.width()), dtype=HIT)
        out["row"] = -1
        found = self.index.search(query_tokens, self.k, self.tie_rank, progress=self.progress)
        for position, (rows, scores) in enumerate(found):
            out["row"][position, :len(rows)] = rows
            out["score"][position, :len(rows)] = scores
        return out

    def work(self, query_tokens: Sequence[list[str]]):
        """The search of every query as one Work (blocks of one sparse product each; cheap to redo: not checkpointed)."""
        from evalkit.pipelines.engine import Work

        return Work(self.hits, ([list(q) for q in query_tokens],), batch_size=QUERY_BATCH, what="queries", checkpoint=False,
                    processes=False)
