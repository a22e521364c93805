"""Relative precision: precision divided by the best precision possible for that many documents."""
from __future__ import annotations

import numpy as np

from evalkit.metrics import register
from evalkit.metrics.base import Judged, Metric, safe_divide
from evalkit.metrics.parameters import RANK_CUTOFF, REL


@register
class RelP(Metric):
    """RelP@k(q) = |relevant in top k| / min(k, R); 0 when R = 0.

    trec_eval ``relative_P_k``. Without k the whole list: |relevant retrieved|
    / min(|retrieved|, R), trec_eval ``set_relative_P`` (0 when nothing was
    retrieved). Reference: trec_eval ``m_rel_P.c``, ``m_set_rel_P.c``.
    """

    name = "RelP"
    aliases = ("relp", "relative_p", "relative_precision")
    set_aliases = ("set_relative_p", "setrelp")  # setrelp: ir_measures SetRelP
    trec = ("set_relative_P", "relative_P_")
    ir_measures = ("SetRelP",)
    parameters = (RANK_CUTOFF, REL)

    def per_query(self, judged: Judged) -> np.ndarray:
        hits = judged.per_query_count(judged.relevant & self.within_cutoff(judged))
        size = judged.num_ret if self.k is None else np.full(judged.n_queries, float(self.k))
        return safe_divide(hits, np.minimum(size, judged.num_rel))
