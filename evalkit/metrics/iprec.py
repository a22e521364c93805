"""Interpolated precision at recall levels, and its 11-point average."""
from __future__ import annotations

import numpy as np

from evalkit.metrics import register
from evalkit.metrics.base import Judged, Metric
from evalkit.metrics.ranked_lists import ieee
from evalkit.metrics.trec_names import c_values
from evalkit.metrics.parameters import RECALL_LEVEL, REL, Param

ELEVEN_POINTS = tuple(i / 10 for i in range(11))
AVERAGED_LEVEL = Param("level", "a recall level averaged over (11pt_avg.0.2,0.5,0.8)", low=0, high=1, default="0.0, 0.1, ..., 1.0",
                       spelling="11pt_avg(0.2,0.5,0.8); 11pt_avg.0.2,0.5,0.8")


def interpolated_precision(judged: Judged, level: float) -> np.ndarray:
    """Per query: max over j >= c of j / rank_j, rank_j the rank of the j-th relevant retrieved document.

    c = round(level * R) (half away from zero, C's ``lround`` as in trec_eval
    10); c = 0 takes the maximum over all relevant retrieved documents; a level
    whose c exceeds the relevant retrieved documents gets 0, as does a query
    with none retrieved.
    """
    c = c_lround(level * judged.num_rel)
    rows = np.flatnonzero(judged.relevant)
    q = judged.qpos[rows]
    j = judged.cumulative_within_query(judged.relevant)[rows]
    precision = j / judged.rank[rows]
    out = np.zeros(judged.n_queries)
    keep = j >= np.maximum(c[q], 1)
    np.maximum.at(out, q[keep], precision[keep])
    out[(judged.list_length() == 0) & (c == 0)] = np.nan  # trec_eval's 0/0 for an empty list (-J)
    return out


def c_lround(values: np.ndarray) -> np.ndarray:
    """C's ``lround``: to the nearest integer, halves away from zero (values >= 0)."""
    return np.where(values - np.floor(values) >= 0.5, np.ceil(values), np.floor(values))


def eleven_point_loop(judged: Judged, levels: list[float]) -> np.ndarray:
    """trec_eval's ``11pt_avg`` loop for levels in any order: the cut of each level is met walking up from the list's end.

    For levels in ascending order it equals the mean of IPrec at the levels
    (added from the last level down); in another order trec_eval's walk
    skips some levels, which this follows.
    """
    out = np.zeros(judged.n_queries)
    rows = np.flatnonzero(judged.relevant)
    rows = rows[np.argsort(judged.qpos[rows], kind="stable")]  # by query, rank order kept
    starts = np.searchsorted(judged.qpos[rows], np.arange(judged.n_queries + 1))
    lengths = judged.list_length()
    for q in range(judged.n_queries):
        ranks = judged.rank[rows[starts[q]:starts[q + 1]]].tolist()
        found = len(ranks)
        cuts = c_lround(np.asarray(levels) * judged.num_rel[q]).tolist()
        current = len(cuts) - 1
        while current >= 0 and cuts[current] > found:
            current -= 1
        best = ieee(found, lengths[q])
        total = 0.0
        for so_far in range(found, 0, -1):  # relevant documents from the bottom: precision peaks at them
            precision = so_far / ranks[so_far - 1]
            if best < precision:
                best = precision
            while current >= 0 and so_far == cuts[current]:
                total += best
                current -= 1
        while current >= 0:
            total += best
            current -= 1
        out[q] = total / len(cuts)
    return out


@register
class IPrec(Metric):
    """IPrec@x(q) = max precision at any rank whose recall is at least x (interpolated precision).

    Computed as trec_eval 10's ``iprec_at_recall_x``: at the c-th relevant
    retrieved document, c = round(x * R), precision is interpolated as the
    maximum precision at or below that rank; x is a recall level in [0, 1]
    (ir_measures ``IPrec@x``). Reference: Manning et al., Introduction to IR
    (2008), 8.4; trec_eval ``m_iprec_at_recall.c``.
    """

    name = "IPrec"
    aliases = ("iprec", "iprec_at_recall")
    cutoff = "required"
    cutoff_kind = "level"
    trec = (None, "iprec_at_recall_")
    ir_measures = ("IPrec@k",)
    parameters = (RECALL_LEVEL, REL)

    def per_query(self, judged: Judged) -> np.ndarray:
        assert self.k is not None  # cutoff = "required": parse_metric refuses IPrec without one
        return interpolated_precision(judged, float(self.k))


@register
class ElevenPointAP(Metric):
    """11pt_avg(q) = mean of IPrec@x over x = 0.0, 0.1, ..., 1.0 (eleven-point interpolated average precision).

    trec_eval ``11pt_avg``, in its order: the eleven values are added from
    recall 1.0 down to 0.0, then divided by 11 (0.5937 where adding from 0.0
    up gives 0.5938). Other levels: ``11pt_avg(0.2,0.5,0.8)`` (trec_eval
    ``11pt_avg.0.2,0.5,0.8``, version 8's 3-point average). An empty list
    (judged-only scoring with nothing judged retrieved) is NaN, trec_eval's 0/0.
    Reference: Manning et al., Introduction to IR (2008), 8.4.
    """

    name = "11pt_avg"
    aliases = ("11pt", "11-pt", "11pt-avg", "elevenpt")
    cutoff = "none"
    spec_kind = "values"
    trec = ("11pt_avg", None)
    parameters = (REL, AVERAGED_LEVEL)

    def configure(self, spec: str) -> None:
        self.levels = c_values(spec, self.name)

    def spec_values(self) -> list[tuple[str, float]]:
        return [("level", level) for level in self.levels]

    def per_query(self, judged: Judged) -> np.ndarray:
        levels = getattr(self, "levels", None)
        if levels is not None:
            return eleven_point_loop(judged, levels)
        total = np.zeros(judged.n_queries)
        for level in reversed(ELEVEN_POINTS):  # trec_eval adds from recall 1.0 down to 0.0
            total = total + interpolated_precision(judged, level)
        return total / len(ELEVEN_POINTS)
