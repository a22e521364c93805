"""Success (hit rate) at a cutoff."""
from __future__ import annotations

import numpy as np

from evalkit.metrics import register
from evalkit.metrics.base import Judged, Metric
from evalkit.metrics.parameters import RANK_CUTOFF, REL


@register
class Success(Metric):
    """Success@k(q) = 1 if any relevant document is in the top k, else 0.

    Equals trec_eval ``success_k`` and ranx ``hit_rate@k``; with one relevant
    document per query it equals Recall@k. Per-query values are binary.

    Ties follow the ranking rule (:mod:`evalkit.data.ranking`); a gold query absent from
    the run scores 0 under ``--missing zero`` and is left out under ``skip``.
    """

    name = "Success"
    aliases = ("success", "hit_rate", "hitrate")
    trec = (None, "success_")
    ir_measures = ("Success@k",)
    ranx = ("hit_rate@k",)
    binary = True
    parameters = (RANK_CUTOFF, REL)

    def per_query(self, judged: Judged) -> np.ndarray:
        first = judged.first_relevant_rank()
        limit = self.k if self.k is not None else np.inf
        return (first <= limit).astype(np.float64)
