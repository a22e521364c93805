"""Bpref as trec_eval defines it."""
from __future__ import annotations

import numpy as np

from evalkit.metrics import register
from evalkit.metrics.base import Judged, Metric, safe_divide


@register
class Bpref(Metric):
    """bpref(q) = (1/R) * sum over retrieved relevant r of (1 - min(n_r, R) / min(R, N)).

    n_r counts judged non-relevant documents ranked above r; N is the number of
    judged non-relevant documents of the query; unjudged documents are
    ignored. A relevant document with n_r = 0 adds 1 (also when N = 0).
    R = 0 gives 0. This is trec_eval's ``bpref`` (ranx gives NaN or other
    values when N = 0). Reference: Buckley & Voorhees, SIGIR 2004.
    """

    name = "Bpref"
    aliases = ("bpref",)
    cutoff = "none"

    def per_query(self, judged: Judged) -> np.ndarray:
        nonrel_above = judged.cumulative_within_query(judged.nonrelevant_judged)
        mask = judged.relevant
        q = judged.qpos[mask]
        n_r = nonrel_above[mask].astype(np.float64)
        R, N = judged.num_rel[q], judged.num_nonrel[q]
        penalty = safe_divide(np.minimum(n_r, R), np.minimum(R, N))
        contribution = np.where(n_r > 0, 1.0 - penalty, 1.0)
        return safe_divide(judged.per_query_sum(contribution, mask), judged.num_rel)
