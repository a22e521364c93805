"""Discounted cumulative gain with trec_eval's gain tables: dcg, ideal_dcg, and ndcg with gains."""
from __future__ import annotations

import math

import numpy as np

from evalkit.metrics import register
from evalkit.metrics.base import Judged, Metric
from evalkit.metrics.gains import GainParams, ideal_walk, position_gains
from evalkit.metrics.ranked_lists import ranked_lists
from evalkit.metrics.parameters import GAIN


def dcg_pair(metric: GainParams, judged: Judged, k: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per query: (DCG of the run, DCG of the ideal ranking) under the metric's gain table, as trec_eval's ``ndcg`` adds them.

    DCG = sum over positions i (0-based) of gain_i / log2(i + 2); the ideal
    ranking is the table's walk (:func:`~evalkit.metrics.gains.ideal_walk`).
    ``k`` cuts both at the top k (evalkit's nDCG(gains)@k; trec_eval has no such measure).
    """
    dcg, ideal = np.zeros(judged.n_queries), np.zeros(judged.n_queries)
    for q, ranked in enumerate(ranked_lists(judged)):
        table = metric.table_for(ranked)
        total = 0.0
        for pos, gain in position_gains(ranked, table):
            if k is not None and pos >= k:
                break
            total += gain / math.log2(pos + 2)
        best = 0.0
        for pos, gain in enumerate(ideal_walk(table)):
            if gain <= 0.0 or (k is not None and pos >= k):
                break
            best += gain / math.log2(pos + 2)
        dcg[q], ideal[q] = total, best
    return dcg, ideal


@register
class DCG(GainParams, Metric):
    """DCG(q) = sum over retrieved documents at rank i of gain / log2(i + 1), gain = the grade or the given table's.

    Unnormalised (its scale depends on the query's judgments); a gain table
    ``DCG(1=3,2=9)`` (trec_eval ``dcg.1=3,2=9``) sets a level's gain, levels
    not named keep their grade. trec_eval ``dcg`` (not in ``all_trec``).
    Reference: Jaervelin & Kekaelaeinen, TOIS 20(4), 2002.
    """

    name = "dcg"
    cutoff = "none"
    params = ()
    trec = ("dcg", None)
    parameters = (GAIN,)

    def per_query(self, judged: Judged) -> np.ndarray:
        return dcg_pair(self, judged)[0]


@register
class IdealDCG(GainParams, Metric):
    """ideal_dcg(q) = the DCG of the best ranking of the query's judged documents (the normaliser of nDCG).

    trec_eval ``ideal_dcg`` (not in ``all_trec``); gain tables as ``dcg``.
    """

    name = "ideal_dcg"
    cutoff = "none"
    params = ()
    trec = ("ideal_dcg", None)
    parameters = (GAIN,)

    def per_query(self, judged: Judged) -> np.ndarray:
        return dcg_pair(self, judged)[1]
