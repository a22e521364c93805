"""Interpolated precision at recall levels, and its 11-point average."""
from __future__ import annotations

import numpy as np

from evalkit.metrics import register
from evalkit.metrics.base import Judged, Metric

ELEVEN_POINTS = tuple(i / 10 for i in range(11))


def interpolated_precision(judged: Judged, level: float) -> np.ndarray:
    """Per query: max over j >= c of j / rank_j, rank_j the rank of the j-th relevant retrieved document.

    c = round(level * R) (half away from zero, C's ``lround`` as in trec_eval
    10); c = 0 takes the maximum over all relevant retrieved documents; a level
    whose c exceeds the relevant retrieved documents gets 0, as does a query
    with none retrieved.
    """
    x = level * judged.num_rel
    c = np.where(x - np.floor(x) >= 0.5, np.ceil(x), np.floor(x))
    rows = np.flatnonzero(judged.relevant)
    q = judged.qpos[rows]
    j = judged.cumulative_within_query(judged.relevant)[rows]
    precision = j / judged.rank[rows]
    out = np.zeros(judged.n_queries)
    keep = j >= np.maximum(c[q], 1)
    np.maximum.at(out, q[keep], precision[keep])
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

    def per_query(self, judged: Judged) -> np.ndarray:
        return interpolated_precision(judged, float(self.k))


@register
class ElevenPointAP(Metric):
    """11pt_avg(q) = mean of IPrec@x over x = 0.0, 0.1, ..., 1.0 (eleven-point interpolated average precision).

    trec_eval ``11pt_avg``. Reference: Manning et al., Introduction to IR (2008), 8.4.
    """

    name = "11pt_avg"
    aliases = ("11pt", "11-pt", "11pt-avg", "elevenpt")
    cutoff = "none"
    trec = ("11pt_avg", None)

    def per_query(self, judged: Judged) -> np.ndarray:
        return np.mean([interpolated_precision(judged, level) for level in ELEVEN_POINTS], axis=0)
