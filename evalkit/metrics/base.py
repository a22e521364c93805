"""The judged ranking every metric is computed from, and the metric base class.

:func:`judge` joins a ranked run with the qrels once: every ranked row gets the
position of its query among the evaluated queries, its 1-based rank and its
grade (NaN when unjudged). Metrics are then a few vectorised numpy lines each.

Grade conventions (those of trec_eval): a document is relevant when its grade
is at least ``relevance_level`` (default 1); judged non-relevant when
``0 <= grade < relevance_level``; a negative grade counts as unjudged. A
document repeated in one list counts only at its first position.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np


@dataclass(frozen=True, eq=False)
class Judged:
    """A ranked run joined with qrels, restricted to the evaluated queries.

    Row arrays are sorted by (query position, rank). Per-query arrays have
    one entry per evaluated query, in the order of ``query_ids``.
    """

    query_ids: np.ndarray  # evaluated queries
    qpos: np.ndarray  # per row: index into query_ids
    rank: np.ndarray  # per row: 1-based position in the ranked list
    grade: np.ndarray  # per row: grade, NaN when unjudged or a repeated doc
    relevance_level: float
    num_rel: np.ndarray  # per query: R, judged relevant documents
    num_nonrel: np.ndarray  # per query: N, judged non-relevant documents
    num_ret: np.ndarray  # per query: retrieved rows
    in_run: np.ndarray  # per query: bool, the run answers this query
    judged_qpos: np.ndarray  # per judgment row (grade >= 0), sorted by query then grade desc
    judged_gain: np.ndarray

    @property
    def n_queries(self) -> int:
        return int(self.query_ids.shape[0])

    @property
    def relevant(self) -> np.ndarray:
        cached = self.__dict__.get("_relevant")
        if cached is None:
            cached = self.grade >= self.relevance_level  # NaN compares False
            object.__setattr__(self, "_relevant", cached)
        return cached

    @property
    def nonrelevant_judged(self) -> np.ndarray:
        return (self.grade >= 0) & (self.grade < self.relevance_level)

    def per_query_sum(self, weights: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """Sum ``weights`` per query over the rows selected by ``mask``."""
        qpos = self.qpos if mask is None else self.qpos[mask]
        return np.bincount(qpos, weights=weights, minlength=self.n_queries).astype(np.float64)

    def per_query_count(self, mask: np.ndarray) -> np.ndarray:
        return np.bincount(self.qpos[mask], minlength=self.n_queries).astype(np.float64)

    def cumulative_within_query(self, flags: np.ndarray) -> np.ndarray:
        """For each row, how many rows of its query up to and including it have ``flags``."""
        counts = np.cumsum(flags, dtype=np.int64)
        if len(counts) == 0:
            return counts
        starts = np.flatnonzero(np.r_[True, self.qpos[1:] != self.qpos[:-1]])
        before = np.r_[0, counts][starts]  # count before each group start
        lengths = np.diff(np.r_[starts, len(counts)])
        return counts - np.repeat(before, lengths)

    def first_relevant_rank(self) -> np.ndarray:
        """Per query: rank of the first relevant row, ``inf`` when none."""
        out = np.full(self.n_queries, np.inf)
        rows = np.flatnonzero(self.relevant)
        queries, first = np.unique(self.qpos[rows], return_index=True)
        out[queries] = self.rank[rows[first]]
        return out


def safe_divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """Element-wise ``numerator / denominator`` with 0 where the denominator is 0."""
    numerator = np.asarray(numerator, dtype=np.float64)
    denominator = np.asarray(denominator, dtype=np.float64)
    out = np.zeros(np.broadcast(numerator, denominator).shape)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


class Metric:
    """A per-query measure. Subclasses set ``name``/``aliases`` and implement ``per_query``.

    ``k`` is the rank cutoff (``None``: the whole list). A per-query value of
    NaN means "undefined for this query": it is left out of the mean.
    """

    name: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]] = ()
    cutoff: ClassVar[str] = "optional"  # "optional", "required" or "none"
    binary: ClassVar[bool] = False  # per-query values are 0/1 (McNemar-ready)

    def __init__(self, k: int | None = None):
        self.k = k

    @property
    def label(self) -> str:
        return f"{self.name}@{self.k}" if self.k is not None else self.name

    def __repr__(self) -> str:
        return self.label

    def __eq__(self, other) -> bool:
        return isinstance(other, Metric) and self.label == other.label

    def __hash__(self) -> int:
        return hash(self.label)

    def within_cutoff(self, judged: Judged) -> np.ndarray:
        return judged.rank <= self.k if self.k is not None else np.ones(len(judged.rank), dtype=bool)

    def per_query(self, judged: Judged) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError
