"""Normalised discounted cumulative gain with graded relevance."""
from __future__ import annotations

import numpy as np

from evalkit.metrics import register
from evalkit.metrics.base import Judged, Metric, safe_divide
from evalkit.ranking import group_positions


@register
class NDCG(Metric):
    """nDCG@k(q) = DCG@k / IDCG@k with DCG@k = sum_{i<=k} gain_i / log2(i + 1).

    Linear gains: gain = grade for judged documents with grade > 0, else 0
    (trec_eval ``ndcg_cut_k``; ranx ``ndcg``). IDCG@k sorts all judged grades
    of the query descending. A query without positive grades scores 0.
    Reference: Jaervelin & Kekaelaeinen, TOIS 20(4), 2002.

    Ties follow the ranking rule (:mod:`evalkit.ranking`); a gold query absent from
    the run scores 0 under ``--missing zero`` and is left out under ``skip``.
    """

    name = "nDCG"
    aliases = ("ndcg",)
    cutoff_aliases = ("ndcg_cut",)
    params = ()  # gains are the grades; the relevance level plays no part (trec_eval ndcg ignores -l too)
    trec = ("ndcg", "ndcg_cut_")

    def per_query(self, judged: Judged) -> np.ndarray:
        keep = self.within_cutoff(judged) & (judged.grade > 0)
        gains = judged.grade[keep] / np.log2(judged.rank[keep] + 1.0)
        dcg = judged.per_query_sum(gains, keep)
        # ideal: judged gains are sorted by query then grade descending
        jq, jg = judged.judged_qpos, judged.judged_gain
        ideal_rank = group_positions(jq)
        ok = jg > 0
        if self.k is not None:
            ok &= ideal_rank <= self.k
        idcg = np.bincount(jq[ok], weights=jg[ok] / np.log2(ideal_rank[ok] + 1.0), minlength=judged.n_queries)
        return safe_divide(dcg, idcg)

