"""YAAP: Robertson's "yet another average precision", a logit of AP's parts."""
from __future__ import annotations

import numpy as np

from evalkit.metrics import clib, register
from evalkit.metrics.base import Judged, Metric
from evalkit.metrics.parameters import REL


@register
class YAAP(Metric):
    """yaap(q) = log((1 + S) / (1 + R - S)), S = sum over retrieved relevant documents of P@rank (AP's numerator).

    Monotonic with AP on one query but without AP's pile-up at 0 and 1, so it
    averages better over queries. Reference: S. Robertson, "On Smoothing
    Average Precision", ECIR 2012; trec_eval ``yaap`` (not in ``all_trec``).
    """

    name = "yaap"
    cutoff = "none"
    trec = ("yaap", None)
    parameters = (REL,)

    def per_query(self, judged: Judged) -> np.ndarray:
        relevant = judged.relevant
        hits = judged.cumulative_within_query(relevant)
        total = judged.per_query_sum(hits[relevant] / judged.rank[relevant], relevant)
        return clib.log((1.0 + total) / (1.0 + judged.num_rel - total))
