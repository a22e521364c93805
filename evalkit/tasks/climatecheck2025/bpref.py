"""Bpref as the ClimateCheck 2025 scorer computes it."""
from __future__ import annotations

import numpy as np

from evalkit.metrics import register
from evalkit.metrics.base import Judged, Metric, safe_divide
from evalkit.metrics.bpref import judged_nonrelevant_above


@register(after="GM-Bpref")  # listed beside the other Bprefs
class ClimateCheckBpref(Metric):
    """CC-Bpref(q) = (1/R) * sum over retrieved relevant r of (1 - min(n_r, R) / R).

    Differs from trec_eval's bpref in the denominator (R, not min(R, N)).
    Relevant = Supports or Refutes; the judged non-relevant set is the abstracts
    judged Not Enough Information; unjudged abstracts are ignored. A claim
    without relevant or without NEI-judged abstracts, or absent from the
    predictions, is undefined (NaN) and left out of the mean whatever the
    missing-query policy. Reference: ClimateCheck 2025 shared task scorer.
    """

    name = "CC-Bpref"
    aliases = ("climatecheck_bpref", "cc_bpref", "ccbpref")
    cutoff = "none"
    params = ()  # relevance is ClimateCheck's label mapping, not a grade level
    parameters = ()

    def per_query(self, judged: Judged) -> np.ndarray:
        mask, q, n_r = judged_nonrelevant_above(judged)
        R = judged.num_rel[q]
        contribution = 1.0 - safe_divide(np.minimum(n_r, R), R)
        values = safe_divide(judged.per_query_sum(contribution, mask), judged.num_rel)
        defined = judged.in_run & (judged.num_rel > 0) & (judged.num_nonrel > 0)
        return np.where(defined, values, np.nan)
