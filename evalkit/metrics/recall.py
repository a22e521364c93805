"""Recall at a cutoff."""
from __future__ import annotations

import numpy as np

from evalkit.metrics import register
from evalkit.metrics.base import Judged, Metric, safe_divide
from evalkit.metrics.parameters import RANK_CUTOFF, REL


@register
class Recall(Metric):
    """Recall@k(q) = |relevant in top k| / R, with R the number of judged relevant documents.

    A query with R = 0 scores 0 (trec_eval ``recall_k``). Reference:
    trec_eval documentation; Manning et al., Introduction to IR (2008), 8.3.

    Ties follow the ranking rule (:mod:`evalkit.data.ranking`); a gold query absent from
    the run scores 0 under ``--missing zero`` and is left out under ``skip``.
    """

    name = "Recall"
    aliases = ("r", "recall")
    set_aliases = ("set_recall", "setr")
    trec = ("set_recall", "recall_")
    ir_measures = ("SetR", "R@k")
    ranx = ("recall@k",)
    parameters = (RANK_CUTOFF, REL)

    def per_query(self, judged: Judged) -> np.ndarray:
        hits = judged.per_query_count(judged.relevant & self.within_cutoff(judged))
        return safe_divide(hits, judged.num_rel)
