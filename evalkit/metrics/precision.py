"""Precision at a cutoff."""
from __future__ import annotations

import numpy as np

from evalkit.metrics import register
from evalkit.metrics.base import Judged, Metric, safe_divide
from evalkit.metrics.parameters import RANK_CUTOFF, REL


@register
class Precision(Metric):
    """P@k(q) = |relevant in top k| / k (trec_eval ``P_k``: divides by k even if fewer were retrieved).

    Without k: relevant retrieved / number retrieved (0 for an empty list).

    Ties follow the ranking rule (:mod:`evalkit.data.ranking`); a gold query absent from
    the run scores 0 under ``--missing zero`` and is left out under ``skip``.
    """

    name = "P"
    aliases = ("p", "precision")
    set_aliases = ("set_p", "setp")
    cutoff_aliases = ("p_avgjg",)
    trec = ("set_P", "P_")
    ir_measures = ("SetP", "P@k")
    ranx = ("precision@k",)
    parameters = (RANK_CUTOFF, REL)

    def per_query(self, judged: Judged) -> np.ndarray:
        hits = judged.per_query_count(judged.relevant & self.within_cutoff(judged))
        if self.k is None:
            return safe_divide(hits, judged.num_ret)
        return hits / self.k
