"""The one ranking rule every evalkit number is computed under, and its one home.

:func:`reference_order` writes the rule out plainly; the fast paths follow it
and ``tests/data/test_ranking_rule.py`` holds them to it: :func:`rank_run`
(numpy), the compiled readers' ``ranks_before`` (``native/csrc/judge.h``, the
C twin of this module) and BM25's top k (:func:`id_positions`,
:func:`order_of`). Changing the rule means changing this module and
``judge.h``, and that test says whether they agree.

RANKING_RULE (printed with every result):

* Runs with scores: within a query, documents are ordered by score
  descending; equal scores are ordered by document id descending (byte-wise
  string comparison), exactly as trec_eval does. The order of input lines and
  any rank column are ignored.
* List submissions (no scores): the order of the list as written.
* A document listed twice for one query keeps its first (best) position; the
  later copy still occupies its position but counts as non-relevant.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import overload

import numpy as np

from evalkit.native import kernels

RANKING_RULE = (
    "scored runs: score descending, ties by doc id descending (trec_eval); "
    "list submissions: list order as written; a repeated doc counts once, at its first position"
)


@dataclass(frozen=True, eq=False)
class RankedRun:
    """Rows sorted by (query, rank); ``rank`` is the 1-based position."""

    qidx: np.ndarray
    didx: np.ndarray
    rank: np.ndarray
    scores: np.ndarray | None
    labels: np.ndarray | None
    first: np.ndarray  # False for a repeated (query, doc) after its first position
    row: np.ndarray  # index of each ranked row in the source run
    starts: np.ndarray  # the first row of each query

    def rows_per_query(self, n_queries: int) -> np.ndarray:
        """Rows retrieved per query code (repeated documents included); 0 for a query without rows."""
        out = np.zeros(n_queries, dtype=np.int64)
        out[self.qidx[self.starts]] = np.diff(np.append(self.starts, len(self.qidx)))
        return out

    def duplicated_queries(self) -> np.ndarray:
        """Codes of queries whose list names some document more than once."""
        repeated = self.qidx[~self.first]  # rows are grouped by query code, ascending
        return repeated[np.r_[True, repeated[1:] != repeated[:-1]]] if len(repeated) else repeated


def reference_order(rows) -> list[str]:
    """One query's ``(doc id, score)`` rows (distinct ids) as doc ids in rank order: score descending, ties by doc id
    descending, byte-wise (UTF-8). The rule written plainly, for tests to hold the fast paths to."""
    return [doc for doc, _ in sorted(rows, key=lambda row: (row[1], row[0].encode("utf-8")), reverse=True)]


def id_positions(doc_ids) -> np.ndarray:
    """Position of each document id among all ids sorted ascending (code point order, which is UTF-8 byte order):
    among equal scores the larger position ranks first."""
    ids = list(doc_ids)
    order = sorted(range(len(ids)), key=ids.__getitem__)
    positions = np.empty(len(ids), dtype=np.int64)
    positions[order] = np.arange(len(ids))
    return positions


def order_of(scores: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """The indices of one query's rows in rank order, given their scores and their ids' :func:`id_positions`."""
    return np.lexsort((-positions, -scores))


def doc_descending_key(doc_ids: np.ndarray) -> np.ndarray:
    """Integer key per unique doc id: larger for ids that sort earlier (descending)."""
    as_text = np.asarray(doc_ids, dtype=str)
    order = np.argsort(as_text, kind="stable")
    key = np.empty(len(order), dtype=np.int64)
    key[order] = np.arange(len(order) - 1, -1, -1, dtype=np.int64)
    return key


def _score_ordered(qidx: np.ndarray, scores: np.ndarray) -> tuple[bool, np.ndarray]:
    """(rows grouped by query with scores non-increasing, mask of adjacent ties)."""
    if len(qidx) < 2:
        return True, np.zeros(0, dtype=bool)
    same_q = qidx[1:] == qidx[:-1]
    grouped = not np.any(qidx[1:] < qidx[:-1])
    descending = bool(np.all((scores[:-1] >= scores[1:]) | ~same_q))
    return grouped and descending, same_q & (scores[:-1] == scores[1:])


def _tie_moves(ties: np.ndarray, didx: np.ndarray, doc_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For rows already in (query, score) order: ``(rows, sources)``, the rows of blocks of equal (query, score)
    and the row each takes so that every block is ordered by doc id descending (the other rows stay)."""
    in_block = np.zeros(len(ties) + 1, dtype=bool)
    in_block[:-1] |= ties
    in_block[1:] |= ties
    rows = np.flatnonzero(in_block)
    starts = np.ones(len(rows), dtype=bool)  # a row opens a block unless it ties with the row before it
    later = rows > 0
    starts[later] = ~ties[rows[later] - 1]
    block = np.cumsum(starts)
    names = np.asarray(doc_ids[didx[rows]], dtype=str)
    _, ascending = np.unique(names, return_inverse=True)
    return rows, rows[np.lexsort((-ascending.ravel(), block))]


def group_starts(sorted_qidx: np.ndarray) -> np.ndarray:
    """The first row of each (contiguous) query group."""
    if len(sorted_qidx) == 0:
        return np.zeros(0, dtype=np.int64)
    change = np.empty(len(sorted_qidx), dtype=bool)
    change[0] = True
    np.not_equal(sorted_qidx[1:], sorted_qidx[:-1], out=change[1:])
    return np.flatnonzero(change)


def group_positions(sorted_qidx: np.ndarray, starts: np.ndarray | None = None) -> np.ndarray:
    """1-based position of each row within its (contiguous) query group (``starts``: :func:`group_starts`, if known).

    A running sum of ones that drops back to 1 at each group start: one array, two passes.
    """
    n = len(sorted_qidx)
    starts = group_starts(sorted_qidx) if starts is None else starts
    position = np.ones(n, dtype=np.int64)
    if len(starts) > 1:
        position[starts[1:]] = 1 - np.diff(starts)
    return np.cumsum(position, out=position)


def _has_repeats(qidx: np.ndarray, didx: np.ndarray, rank: np.ndarray) -> bool:
    """Whether some query (contiguous group of ``qidx``) names a document twice.

    Each query's codes are sorted as one row of a matrix (rows padded with
    distinct negative codes when queries have different lengths) rather than
    one sort of all (query, doc) keys: each sort is short and in one place.
    """
    n_groups = int(np.count_nonzero(rank == 1))
    width = int(rank.max())
    if n_groups * width > 4 * len(rank):  # very uneven lengths: the padded matrix would be too large
        key = qidx.astype(np.int64) * (int(didx.max()) + 1) + didx
        return bool(np.any(np.diff(np.sort(key)) == 0))
    if n_groups * width == len(rank):
        matrix = didx.reshape(n_groups, width)
    else:
        matrix = np.broadcast_to(-np.arange(1, width + 1, dtype=didx.dtype), (n_groups, width)).copy()
        matrix[np.cumsum(rank == 1) - 1, rank - 1] = didx
    rows = np.sort(matrix, axis=1)
    return bool(np.any(rows[:, 1:] == rows[:, :-1]))


def _first_occurrences(qidx: np.ndarray, didx: np.ndarray, rank: np.ndarray, n_docs: int) -> np.ndarray:
    """False for rows repeating an earlier (query, doc) pair; rows grouped by query, ``rank`` their positions.

    One pass in C when :mod:`evalkit.native._native` was built (a stamp per document);
    else a sort of each query's codes, and of all keys
    only when some query repeats a document.
    """
    first = np.ones(len(qidx), dtype=bool)
    if len(qidx) < 2:
        return first
    compiled = kernels.first_occurrences(qidx, didx, n_docs)
    if compiled is not None:
        return compiled
    if not _has_repeats(qidx, didx, rank):
        return first
    key = qidx.astype(np.int64) * max(n_docs, 1) + didx
    order = np.argsort(key, kind="stable")
    repeated = np.r_[False, key[order][1:] == key[order][:-1]]
    first[order[repeated]] = False
    return first


def rank_run(run) -> RankedRun:
    """Sort a :class:`~evalkit.data.Run` by the ranking rule."""
    qidx, didx = run.qidx, run.didx
    moves: tuple[np.ndarray, np.ndarray] | None = None  # (rows, sources): already ordered but for equal scores
    if run.scores is None:
        order = np.argsort(qidx, kind="stable")
    else:
        ordered, ties = _score_ordered(qidx, run.scores)
        if ordered:  # the common case: only equal scores may need reordering
            order = None
            if ties.any():
                moves = _tie_moves(ties, didx, run.doc_ids)
        else:
            dkey = doc_descending_key(run.doc_ids)[didx]
            order = np.lexsort((dkey, -run.scores, qidx))
    identity = order is None or bool(len(order) == 0 or (order[0] == 0 and np.all(order[1:] > order[:-1])))

    @overload
    def reordered(values: np.ndarray, constant_in_ties: bool = ...) -> np.ndarray: ...
    @overload
    def reordered(values: None, constant_in_ties: bool = ...) -> None: ...
    def reordered(values: np.ndarray | None, constant_in_ties: bool = False) -> np.ndarray | None:
        """``values`` in ranked order; the input arrays themselves when already ranked (no copies of millions of rows)."""
        if values is None:
            return None
        if not identity:
            return values[order]
        if moves is not None and not constant_in_ties:
            out = values.copy()
            out[moves[0]] = values[moves[1]]
            return out
        view = values.view()
        view.flags.writeable = False  # shared with the run: never written through
        return view

    sq, sd = reordered(qidx, constant_in_ties=True), reordered(didx)
    starts = group_starts(sq)
    rank = group_positions(sq, starts)
    rows = np.arange(len(qidx)) if order is None else order
    if moves is not None:
        rows[moves[0]] = moves[1]
    return RankedRun(
        qidx=sq,
        didx=sd,
        rank=rank,
        scores=reordered(run.scores, constant_in_ties=True),
        labels=reordered(run.labels),
        first=_first_occurrences(sq, sd, rank, len(run.doc_ids)),
        row=rows,
        starts=starts,
    )
