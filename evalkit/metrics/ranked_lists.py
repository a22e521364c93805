"""Each query's ranked list as trec_eval walks it, for the measures computed query by query.

Most metrics are a few vectorised lines over :class:`~evalkit.metrics.base.Judged`.
trec_eval's less common measures (G, Rndcg, ndcg_rel, infAP, rbp, ...) walk
one query's list position by position, and their floating-point results depend
on that order; they are ported here as loops over a :class:`RankedList`, which
holds only what can change a value: the judged documents (rank, grade), the
pooled-but-unjudged ones (negative grades), the list length and the query's
judged grades. Every other position is a document outside the pool, which
these measures skip. Work per query is bounded by its judgments, not by the
length of the run.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np

from evalkit.metrics.base import Judged

NONPOOL, UNJUDGED = -1, -2  # trec_eval's RELVALUE_NONPOOL and RELVALUE_UNJUDGED


@dataclass(frozen=True)
class RankedList:
    """One query's list: judged documents, pooled-but-unjudged ones, its length and its judgments."""

    length: int  # documents in the list trec_eval computes with (see Judged.list_length)
    ranks: np.ndarray  # 1-based ranks of the judged documents, ascending
    grades: np.ndarray  # their grades (>= 0)
    pool_ranks: np.ndarray  # 1-based ranks of retrieved documents judged with a negative grade
    judgments: np.ndarray  # every judged grade (>= 0) of the query, retrieved or not, descending

    def relevance_at(self) -> dict[int, float]:
        """``{0-based position: trec_eval's relevance value}`` for the positions that are not outside the pool."""
        values = {int(r) - 1: float(g) for r, g in zip(self.ranks.tolist(), self.grades.tolist())}
        values.update({int(r) - 1: float(UNJUDGED) for r in self.pool_ranks.tolist()})
        return values


def _bounds(sorted_qpos: np.ndarray, n_queries: int) -> np.ndarray:
    return np.searchsorted(sorted_qpos, np.arange(n_queries + 1))


def ranked_lists(judged: Judged) -> Iterator[RankedList]:
    """The evaluated queries' lists, in the order of ``judged.query_ids``."""
    n = judged.n_queries
    by_query = np.argsort(judged.qpos, kind="stable")  # rows come grouped by query in the run's order: stable keeps rank order
    qpos, rank, grade = judged.qpos[by_query], judged.rank[by_query], judged.grade[by_query]
    pool_order = np.argsort(judged.pool_qpos, kind="stable")
    pool_qpos, pool_rank = judged.pool_qpos[pool_order], judged.pool_rank[pool_order]
    rows, pool, levels = _bounds(qpos, n), _bounds(pool_qpos, n), _bounds(judged.judged_qpos, n)
    lengths = judged.list_length().astype(np.int64).tolist()
    judgments = [judged.judged_gain[levels[q]:levels[q + 1]] for q in range(n)]
    # trec_eval keeps the level counts of the query evaluated before (byte order) when a query has no judgment >= 0
    # (form_res_rels.c leaves num_rel_levels and rel_levels as they were): its gain table, ideal_dcg included
    previous = np.zeros(0)
    for q in sorted(range(n), key=lambda i: str(judged.query_ids[i])):
        if len(judgments[q]) == 0:
            judgments[q] = previous
        previous = judgments[q]
    for q in range(n):
        yield RankedList(
            length=lengths[q],
            ranks=rank[rows[q]:rows[q + 1]],
            grades=grade[rows[q]:rows[q + 1]],
            pool_ranks=pool_rank[pool[q]:pool[q + 1]],
            judgments=judgments[q],
        )


def level_counts(judgments: np.ndarray) -> tuple[list[float], list[int]]:
    """trec_eval's ``rel_levels``: the levels 0, 1, ..., up to the highest judged grade, and how many judgments each has.

    Integer grades give trec_eval's table exactly; a fractional grade is one
    more level, in order.
    """
    if len(judgments) == 0:
        return [], []
    values, counts = np.unique(judgments, return_counts=True)
    top = float(values[-1])
    levels = sorted(set(float(i) for i in range(int(top) + 1)) | set(values.tolist()))
    by_value = dict(zip(values.tolist(), counts.tolist()))
    return levels, [int(by_value.get(level, 0)) for level in levels]


def ieee(a: float, b: float) -> float:
    """``a / b`` as C computes it: a zero divisor gives inf or nan, never an exception."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.float64(a) / np.float64(b))
