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
from dataclasses import dataclass, field, replace
from typing import ClassVar

import numpy as np

from evalkit.core.errors import UsageError
from evalkit.metrics import clib
from evalkit.metrics.parameters import Param, check
from evalkit.data.ranking import group_positions


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
    # retrieved documents judged with a negative grade (in the pool, not judged: trec_eval's -2, infAP's
    # sample), first positions, grouped by query, rank ascending; empty unless a metric asks (needs_pool)
    pool_qpos: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    pool_rank: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    judged_only: bool = False  # condensed lists (trec_eval -J): unjudged documents removed, ranks closed up
    num_docs: int = 0  # documents in the collection (trec_eval -N), for utility's fourth coefficient

    @property
    def n_queries(self) -> int:
        return int(self.query_ids.shape[0])

    def condensed(self) -> "Judged":
        """The judged-only view (trec_eval ``-J``; Sakai 2007's condensed lists).

        Every unjudged document (absent from the qrels, judged with a negative
        grade, or a repeat) is removed from each ranking before any metric:
        ranks close up over the judged documents, ``num_ret`` counts them.
        """
        if self.judged_only:
            return self
        empty = np.zeros(0, dtype=np.int64)
        return replace(self, rank=group_positions(self.qpos), num_ret=self.per_query_count(np.ones(len(self.qpos), dtype=bool)),
                       pool_qpos=empty, pool_rank=empty, judged_only=True)

    def list_length(self) -> np.ndarray:
        """Per query: the length of the ranked list trec_eval computes with.

        ``num_ret``, except for a query the run does not answer (scored as 0
        under ``--missing zero``, trec_eval ``-c``): trec_eval evaluates it on
        a placeholder list of one unjudged document, which some measures see
        (11pt_avg divides by it); under ``-J`` that document is removed too.
        """
        return self.num_ret if self.judged_only else np.where(self.in_run, self.num_ret, np.maximum(self.num_ret, 1.0))

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
    cutoff_kind: ClassVar[str] = "rank"  # "rank" (a positive integer), "level" (a recall level in [0, 1]), "multiple" (x >= 0)
    params: ClassVar[tuple[str, ...]] = ("rel",)  # parameters accepted as name(param=value)
    spec_kind: ClassVar[str | None] = None  # trec_eval's parameter text: "values" (1,-1,0,0) or "pairs" (1=3,2=9)
    binary: ClassVar[bool] = False  # per-query values are 0/1 (McNemar-ready)
    aggregation: ClassVar[str] = "mean"  # how per-query values combine: "mean", "sum" or "gmean"
    summary_only: ClassVar[bool] = False  # trec_eval prints no per-query value (num_q, gm_map)
    text: ClassVar[bool] = False  # per-query values are text, printed by --output trec_eval only (relstring, runid)
    needs_pool: ClassVar[bool] = False  # reads where the pooled-but-unjudged documents (negative grades) rank (infAP)
    trec: ClassVar[tuple[str | None, str | None]] = (None, None)  # trec_eval name without a cutoff, prefix with one
    # the same measure as ir_measures and ranx spell it ("@k": with a cutoff, or a recall level); () where they have none
    ir_measures: ClassVar[tuple[str, ...]] = ()
    ranx: ClassVar[tuple[str, ...]] = ()
    # what each parameter may be (evalkit.metrics.parameters): every metric declares its own, beside its formula
    parameters: ClassVar[tuple[Param, ...]] = ()

    def __init__(self, k: float | None = None, rel: float | None = None, spec: str | None = None, **options: float):
        self.k = k
        self.rel = rel
        self.options = {key: float(value) for key, value in options.items()}
        self.spec = spec  # trec_eval's parameter text as typed (ndcg.1=3,2=9: "1=3,2=9"); None: the defaults
        if spec is not None:
            self.configure(spec)
        check(self)  # the declared types and ranges (evalkit.metrics.parameters), on every path that makes a metric

    def parameter_values(self) -> list[tuple[str, float]]:
        """Every parameter value of this metric as ``(declared name, value)``: the cutoff, rel, options, then the
        values read from trec_eval's parameter text (:meth:`spec_values`)."""
        out = [] if self.k is None else [("k", self.k)]
        out += [] if self.rel is None else [("rel", self.rel)]
        return out + list(self.options.items()) + (self.spec_values() if self.spec is not None else [])

    def spec_values(self) -> list[tuple[str, float]]:
        """The values read from trec_eval's parameter text (``spec_kind`` metrics override this)."""
        return []

    def configure(self, spec: str) -> None:
        """Read trec_eval's parameter text (``spec_kind`` metrics override this)."""
        raise UsageError(f"metric {self.name} takes no parameter text ({spec!r})")

    @property
    def label(self) -> str:
        inside = [] if self.spec is None else [self.spec]
        inside += [f"{key}={_number(value)}" for key, value in self.options.items()]
        if self.rel is not None:
            inside.append(f"rel={_number(self.rel)}")
        params = f"({', '.join(inside)})" if inside else ""
        cut = "" if self.k is None else f"@{self.k}" if self.cutoff_kind == "rank" else f"@{float(self.k)!r}"
        return f"{self.name}{params}{cut}"

    def trec_spec(self) -> str | None:
        """The parameter text trec_eval appends to the name (``ndcg_1=3,2=9``), as typed; ``None``: defaults."""
        return self.spec

    def trec_name(self) -> str | None:
        """trec_eval's name for this measure (``None`` when trec_eval has none, or with a ``rel=`` level)."""
        whole, prefix = self.trec
        if self.rel is not None:
            return None
        spec = self.trec_spec()
        if self.k is None:
            return whole if spec is None or whole is None else f"{whole}_{spec}"
        if prefix is None or spec is not None:
            return None
        return f"{prefix}{self.k}" if self.cutoff_kind == "rank" else f"{prefix}{self.k:.2f}"

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
        return np.asarray(self.per_query(view), dtype=object if self.text else np.float64)

    def aggregate(self, values: np.ndarray, standardized: bool = False) -> float:
        """The summary of per-query values (NaN ones left out): mean, sum or geometric mean.

        Values are added one after the other in the order given, as trec_eval
        accumulates them (numpy's pairwise sum can differ in the last bit, and
        so in the 4th printed decimal when a mean falls on a half). A geometric
        mean takes the C library's ``log`` and ``exp`` (Python's ``math``), as
        trec_eval does: numpy's own vectorised ``exp`` can be one ulp off.
        """
        defined = values[~np.isnan(values)]
        if len(defined) == 0:
            return float("nan")
        if self.aggregation == "gmean" and not standardized:  # z-scores are of the log values already
            defined = clib.log(np.maximum(defined, MIN_GEO_MEAN))
        total = float(np.cumsum(defined)[-1])
        if self.aggregation == "sum":
            return total
        mean = total / len(defined)
        return math.exp(mean) if self.aggregation == "gmean" else mean

    def per_query(self, judged: Judged) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError


MIN_GEO_MEAN = 1e-5  # trec_eval's floor for values entering a geometric mean (MIN_GEO_MEAN)


def _number(value: float) -> str:
    """``10`` for 10.0, ``0.5`` for 0.5: labels print numbers as typed, without a trailing ``.0``."""
    return str(int(value)) if float(value).is_integer() and math.isfinite(value) else repr(float(value))
