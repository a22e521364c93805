"""How much of a ranking the judgments cover."""
from __future__ import annotations

import numpy as np

from evalkit.metrics import register
from evalkit.metrics.base import Judged, Metric
from evalkit.metrics.parameters import RANK_CUTOFF, REL


@register
class Unjudged(Metric):
    """Unjudged@k(q) = |unjudged documents in the top k| / k (k even when fewer were retrieved).

    Unjudged: absent from the qrels or with a negative grade. trec_eval
    ``unj_k`` (a "red flag": high values mean the judgments barely cover the
    run); 1 - Unjudged@k is the judged share. A document repeated in one list
    counts as unjudged at its later positions. Reference: trec_eval ``m_unjudged.c``.
    """

    name = "Unjudged"
    aliases = ("unj", "unjudged")
    cutoff = "required"
    params = ()
    trec = (None, "unj_")
    parameters = (RANK_CUTOFF,)

    def per_query(self, judged: Judged) -> np.ndarray:
        return (judged.retrieved_within(self.k) - judged.per_query_count(self.within_cutoff(judged))) / self.k


@register
class NumNonRelJudgedRet(Metric):
    """NumNonRelJudgedRet(q) = retrieved documents judged non-relevant (0 <= grade < level); summed over queries.

    trec_eval ``num_nonrel_judged_ret``.
    """

    name = "NumNonRelJudgedRet"
    aliases = ("num_nonrel_judged_ret",)
    cutoff = "none"
    aggregation = "sum"
    trec = ("num_nonrel_judged_ret", None)
    parameters = (REL,)

    def per_query(self, judged: Judged) -> np.ndarray:
        return judged.per_query_count(judged.nonrelevant_judged)
