"""Normalised discounted cumulative gain with graded relevance."""
from __future__ import annotations

import numpy as np

from evalkit.metrics import clib, register
from evalkit.metrics.base import Judged, Metric, safe_divide
from evalkit.metrics.dcg import dcg_pair
from evalkit.metrics.gains import GainParams
from evalkit.data.ranking import group_positions
from evalkit.metrics.parameters import GAIN, RANK_CUTOFF


@register
class NDCG(GainParams, Metric):
    """nDCG@k(q) = DCG@k / IDCG@k with DCG@k = sum_{i<=k} gain_i / log2(i + 1).

    Linear gains: gain = grade for judged documents with grade > 0, else 0
    (trec_eval ``ndcg_cut_k``; ranx ``ndcg``). IDCG@k sorts all judged grades
    of the query descending. A query without positive grades scores 0.
    Reference: Jaervelin & Kekaelaeinen, TOIS 20(4), 2002.

    A gain table ``nDCG(1=3,2=9)`` (trec_eval ``ndcg.1=3,2=9``) gives
    level 1 gain 3 and level 2 gain 9; levels not named keep their grade
    (:mod:`evalkit.metrics.gains`, trec_eval's ``setup_gains``).

    Ties follow the ranking rule (:mod:`evalkit.data.ranking`); a gold query absent from
    the run scores 0 under ``--missing zero`` and is left out under ``skip``.
    """

    name = "nDCG"
    aliases = ("ndcg",)
    cutoff_aliases = ("ndcg_cut",)
    params = ()  # gains are the grades; the relevance level plays no part (trec_eval ndcg ignores -l too)
    trec = ("ndcg", "ndcg_cut_")
    ir_measures = ("nDCG", "nDCG@k")
    ranx = ("ndcg", "ndcg@k")
    parameters = (RANK_CUTOFF, GAIN)

    def per_query(self, judged: Judged) -> np.ndarray:
        if self.spec is not None:  # a gain table: trec_eval's ndcg.1=3,2=9
            dcg, ideal = dcg_pair(self, judged, self.k)
            return np.where(ideal > 0.0, safe_divide(dcg, ideal), 0.0)
        keep = self.within_cutoff(judged) & (judged.grade > 0)
        gains = judged.grade[keep] / clib.log2_of(judged.rank[keep] + 1)
        dcg = judged.per_query_sum(gains, keep)
        # ideal: judged gains are sorted by query then grade descending
        jq, jg = judged.judged_qpos, judged.judged_gain
        ideal_rank = group_positions(jq)
        ok = jg > 0
        if self.k is not None:
            ok &= ideal_rank <= self.k
        idcg = np.bincount(jq[ok], weights=jg[ok] / clib.log2_of(ideal_rank[ok] + 1), minlength=judged.n_queries)
        return safe_divide(dcg, idcg)
