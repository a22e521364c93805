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

import math
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np


@dataclass(frozen=True, eq=False)
class Judged:
    """A ranked run joined with qrels, restricted to the evaluated queries.

    The row arrays hold the **judged rows** of the rankings only: documents
    with a grade >= 0 for their query, at their first position when repeated;
    grouped by query, rank ascending within a query. Unjudged rows play no
    part in any metric but through ``num_ret`` (rows retrieved, repeats
    included), so they are not kept: a run of millions of rows gives as many
    rows here as it has judged documents. Per-query arrays have one entry per
    evaluated query, in the order of ``query_ids``.
    """

    query_ids: np.ndarray  # evaluated queries
    qpos: np.ndarray  # per judged row: index into query_ids
    rank: np.ndarray  # per judged row: 1-based position in the ranked list
    grade: np.ndarray  # per judged row: its grade (>= 0)
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

    def retrieved_within(self, k: float | None) -> np.ndarray:
        """Per query: rows retrieved in the top ``k`` (all retrieved without ``k``), judged or not."""
        return self.num_ret.copy() if k is None else np.minimum(self.num_ret, float(k))

    def cumulative_within_query(self, flags: np.ndarray) -> np.ndarray:
        """For each row, how many rows of its query up to and including it have ``flags``."""
        counts = np.cumsum(flags, dtype=np.int64)
        if len(counts) == 0:
            return counts
        starts = np.flatnonzero(np.r_[True, self.qpos[1:] != self.qpos[:-1]])
        before = np.r_[0, counts][starts]  # count before each group start
        lengths = np.diff(np.r_[starts, len(counts)])
        return counts - np.repeat(before, lengths)

    def at_level(self, relevance_level: float) -> "Judged":
        """The same ranking judged with another relevance level (R and N recounted)."""
        if relevance_level == self.relevance_level:
            return self
        num_rel, num_nonrel = counts_at_level(self.judged_qpos, self.judged_gain, relevance_level, self.n_queries)
        return replace(self, relevance_level=relevance_level, num_rel=num_rel, num_nonrel=num_nonrel)

    def first_relevant_rank(self) -> np.ndarray:
        """Per query: rank of the first relevant row, ``inf`` when none."""
        out = np.full(self.n_queries, np.inf)
        rows = np.flatnonzero(self.relevant)
        queries, first = np.unique(self.qpos[rows], return_index=True)
        out[queries] = self.rank[rows[first]]
        return out


def counts_at_level(qpos: np.ndarray, grades: np.ndarray, relevance_level: float, n_queries: int) -> tuple[np.ndarray, np.ndarray]:
    """Per query: R (judged grade >= level) and N (0 <= grade < level); negative grades count in neither."""
    judged = grades >= 0
    relevant = judged & (grades >= relevance_level)
    num_rel = np.bincount(qpos[relevant], minlength=n_queries).astype(np.float64)
    num_nonrel = np.bincount(qpos[judged & ~relevant], minlength=n_queries).astype(np.float64)
    return num_rel, num_nonrel


def safe_divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """Element-wise ``numerator / denominator`` with 0 where the denominator is 0."""
    numerator = np.asarray(numerator, dtype=np.float64)
    denominator = np.asarray(denominator, dtype=np.float64)
    out = np.zeros(np.broadcast(numerator, denominator).shape)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


class Metric:
    """A per-query measure. Subclasses set ``name``/``aliases`` and implement ``per_query``.

    ``k`` is the rank cutoff (``None``: the whole list; for ``cutoff_kind
    "level"`` metrics a recall level in [0, 1]). ``rel`` is the metric's own
    relevance level (ir_measures' ``rel=``): its relevant set and R use it
    instead of the evaluation's level. A per-query value of NaN means
    "undefined for this query": it is left out of the aggregate, which is the
    mean unless a metric says otherwise (sums, geometric means).
    """

    name: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]] = ()
    cutoff_aliases: ClassVar[tuple[str, ...]] = ()  # names that need a cutoff (trec_eval families: ndcg_cut)
    set_aliases: ClassVar[tuple[str, ...]] = ()  # names that refuse one (trec_eval set measures: set_P)
    cutoff: ClassVar[str] = "optional"  # "optional", "required" or "none"
    cutoff_kind: ClassVar[str] = "rank"  # "rank" (a positive integer) or "level" (a recall level in [0, 1])
    params: ClassVar[tuple[str, ...]] = ("rel",)  # parameters accepted as name(param=value)
    binary: ClassVar[bool] = False  # per-query values are 0/1 (McNemar-ready)
    aggregation: ClassVar[str] = "mean"  # how per-query values combine: "mean", "sum" or "gmean"
    summary_only: ClassVar[bool] = False  # trec_eval prints no per-query value (num_q, gm_map)
    trec: ClassVar[tuple[str | None, str | None]] = (None, None)  # trec_eval name without a cutoff, prefix with one

    def __init__(self, k: float | None = None, rel: float | None = None):
        self.k = k
        self.rel = rel

    @property
    def label(self) -> str:
        params = f"(rel={_number(self.rel)})" if self.rel is not None else ""
        cut = "" if self.k is None else f"@{self.k}" if self.cutoff_kind == "rank" else f"@{float(self.k)!r}"
        return f"{self.name}{params}{cut}"

    def trec_name(self) -> str | None:
        """trec_eval's name for this measure (``None`` when trec_eval has none, or with a ``rel=`` level)."""
        whole, prefix = self.trec
        if self.rel is not None:
            return None
        if self.k is None:
            return whole
        if prefix is None:
            return None
        return f"{prefix}{self.k:.2f}" if self.cutoff_kind == "level" else f"{prefix}{self.k}"

    def __repr__(self) -> str:
        return self.label

    def __eq__(self, other) -> bool:
        return isinstance(other, Metric) and self.label == other.label

    def __hash__(self) -> int:
        return hash(self.label)

    def within_cutoff(self, judged: Judged) -> np.ndarray:
        """Mask of the judged rows ranked within the cutoff."""
        return judged.rank <= self.k if self.k is not None else np.ones(len(judged.rank), dtype=bool)

    def compute(self, judged: Judged) -> np.ndarray:
        """Per-query values, under the metric's own relevance level when it has one."""
        view = judged if self.rel is None else judged.at_level(self.rel)
        return np.asarray(self.per_query(view), dtype=np.float64)

    def aggregate(self, values: np.ndarray) -> float:
        """The summary of per-query values (NaN ones left out): mean, sum or geometric mean.

        Values are added one after the other in the order given, as trec_eval
        accumulates them (numpy's pairwise sum can differ in the last bit, and
        so in the 4th printed decimal when a mean falls on a half).
        """
        defined = values[~np.isnan(values)]
        if len(defined) == 0:
            return float("nan")
        if self.aggregation == "gmean":
            defined = np.log(np.maximum(defined, MIN_GEO_MEAN))
        total = float(np.cumsum(defined)[-1])
        if self.aggregation == "sum":
            return total
        mean = total / len(defined)
        return float(np.exp(mean)) if self.aggregation == "gmean" else mean

    def per_query(self, judged: Judged) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError


MIN_GEO_MEAN = 1e-5  # trec_eval's floor for values entering a geometric mean (MIN_GEO_MEAN)


def _number(value: float) -> str:
    """``10`` for 10.0, ``0.5`` for 0.5: labels print numbers as typed, without a trailing ``.0``."""
    return str(int(value)) if float(value).is_integer() and math.isfinite(value) else repr(float(value))
