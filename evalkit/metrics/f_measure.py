"""F1: the harmonic mean of precision and recall."""
from __future__ import annotations

import numpy as np

from evalkit.metrics import register
from evalkit.metrics.base import Judged, Metric, safe_divide


@register
class F1(Metric):
    """F1@k(q) = 2 P R / (P + R) = 2 |rel in top k| / (k + R); 0 when nothing relevant is retrieved.

    P and R are P@k (divided by k, as trec_eval ``P_k`` and ranx ``precision@k``)
    and Recall@k: ranx ``f1@k``. Without k, P and R are over the whole list:
    trec_eval ``set_F`` (beta = 1), ir_measures ``SetF``, F1 = 2 |rel ret| / (|ret| + R).
    Reference: van Rijsbergen, Information Retrieval (1979), ch. 7.
    """

    name = "F1"
    aliases = ("f1", "f", "f_measure", "f1_score")
    set_aliases = ("set_f", "setf")
    trec = ("set_F", None)

    def per_query(self, judged: Judged) -> np.ndarray:
        hits = judged.per_query_count(judged.relevant & self.within_cutoff(judged))
        retrieved = judged.num_ret if self.k is None else np.full(judged.n_queries, float(self.k))
        return safe_divide(2 * hits, retrieved + judged.num_rel)
