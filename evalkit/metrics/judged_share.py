"""Judged@k: the share of the top of a ranking that the judgments cover (ir_measures' ``Judged``)."""
from __future__ import annotations

import numpy as np

from evalkit.metrics import register
from evalkit.metrics.base import Judged, Metric, safe_divide
from evalkit.metrics.parameters import RANK_CUTOFF


@register
class JudgedShare(Metric):
    """Judged@k(q) = |judged documents in the top k| / min(k, retrieved); no cutoff: over the whole list.

    As ir_measures defines ``Judged@k`` ("percentage of results in the top k
    that have relevance judgments"; its provider divides by the retrieved
    count when a query has fewer than k documents). A query with nothing
    retrieved scores 0. Judged: in the qrels with a grade >= 0 (relevant or
    judged non-relevant); a negative grade counts as unjudged, as everywhere in
    evalkit (trec_eval's convention; ir_measures counts any qrels line), and a
    document repeated in one list counts as unjudged at its later positions
    (ir_measures reads a run as a dict, so it never sees the repeat).
    With k fixed and k retrieved, Judged@k = 1 - Unjudged@k.

    It tells how far a run's numbers can be trusted under incomplete
    judgments (pooled tasks such as ClimateCheck judge 10 abstracts per
    claim): a run scored on mostly unjudged documents is scored mostly on
    guesses. Reference: ir_measures ``judged_provider.py`` (after OpenNIR),
    MacAvaney et al. 2022, "Streamlining Evaluation with ir-measures".
    """

    name = "Judged"
    aliases = ("judged", "judged_at", "judgment_rate")
    ir_measures = ("Judged@k",)
    params = ()
    parameters = (RANK_CUTOFF,)

    def per_query(self, judged: Judged) -> np.ndarray:
        return safe_divide(judged.per_query_count(self.within_cutoff(judged)), judged.retrieved_within(self.k))
