"""Unranked set average precision."""
from __future__ import annotations

import numpy as np

from evalkit.metrics import register
from evalkit.metrics.base import Judged, Metric, safe_divide
from evalkit.metrics.parameters import REL


@register
class SetAP(Metric):
    """SetAP(q) = set_P * set_recall = |rel ret|^2 / (|ret| * R); 0 when nothing is retrieved or R = 0.

    trec_eval ``set_map``, ir_measures ``SetAP``: average precision of the
    retrieved set taken as unranked. Reference: trec_eval ``m_set_map.c``.
    """

    name = "SetAP"
    aliases = ("set_map", "setap", "set_ap")
    cutoff = "none"
    trec = ("set_map", None)
    ir_measures = ("SetAP",)
    parameters = (REL,)

    def per_query(self, judged: Judged) -> np.ndarray:
        hits = judged.per_query_count(judged.relevant)
        return safe_divide(hits * hits, judged.num_ret * judged.num_rel)
