"""Reciprocal rank with an optional cutoff (MRR when averaged)."""
from __future__ import annotations

import numpy as np

from evalkit.metrics import register
from evalkit.metrics.base import Judged, Metric
from evalkit.metrics.parameters import RANK_CUTOFF, REL


@register
class MRR(Metric):
    """RR@k(q) = 1 / rank of the first relevant document if that rank <= k, else 0.

    The mean over queries is MRR@k, the official CheckThat! 2025 Task 4b score
    (k = 5). Without k it is trec_eval's ``recip_rank``. Ties follow the
    ranking rule; a query absent from the run scores 0 (or is skipped, per the
    missing-query policy). Reference: Voorhees, TREC-8 QA track (1999).
    """

    name = "MRR"
    aliases = ("rr", "recip_rank", "mrr", "reciprocal_rank")
    trec = ("recip_rank", None)
    ir_measures = ("RR", "RR@k")
    ranx = ("mrr", "mrr@k")
    parameters = (RANK_CUTOFF, REL)

    def per_query(self, judged: Judged) -> np.ndarray:
        first = judged.first_relevant_rank()
        if self.k is not None:
            first = np.where(first <= self.k, first, np.inf)
        return 1.0 / first
