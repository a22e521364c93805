"""nDCG averaged over the relevant documents (trec_eval's ndcg_rel)."""
from __future__ import annotations

import math

import numpy as np

from evalkit.metrics import register
from evalkit.metrics.base import Judged, Metric
from evalkit.metrics.gains import GainParams, ideal_walk, position_gains
from evalkit.metrics.ranked_lists import ieee, ranked_lists
from evalkit.metrics.parameters import GAIN


@register
class NDCGRel(GainParams, Metric):
    """ndcg_rel(q) = mean over the R_ideal ideal positions of nDCG at the rank of each retrieved relevant document.

    At each retrieved document with a positive gain, the DCG so far divided
    by the ideal DCG so far is added; each relevant document not retrieved
    adds the final DCG / ideal DCG; the sum is divided by the number of
    positions of the ideal ranking with a positive gain. Gain tables as
    ``nDCG``. trec_eval ``ndcg_rel`` (experimental), in its floating-point order.
    """

    name = "ndcg_rel"
    aliases = ("ndcgrel",)
    cutoff = "none"
    params = ()
    trec = ("ndcg_rel", None)
    parameters = (GAIN,)

    def per_query(self, judged: Judged) -> np.ndarray:
        out = np.zeros(judged.n_queries)
        for q, ranked in enumerate(ranked_lists(judged)):
            table = self.table_for(ranked)
            walk, gains = ideal_walk(table), position_gains(ranked, table)
            first = min(ranked.length, len(walk))  # positions of trec_eval's first loop (the ideal ranking still positive)
            dcg = ideal = total = 0.0
            num_rel = num_rel_ret = 0
            at = dict(gains)
            for pos in range(first):
                gain = at.get(pos, 0.0)
                if gain != 0:
                    dcg += gain / math.log2(pos + 2)
                if walk[pos] > 0.0:
                    num_rel += 1
                    ideal += walk[pos] / math.log2(pos + 2)
                if gain > 0:
                    total += ieee(dcg, ideal)
                    num_rel_ret += 1
            for pos, gain in gains:
                if pos < first:
                    continue
                dcg += gain / math.log2(pos + 2)
                if gain > 0:
                    total += ieee(dcg, ideal)
                    num_rel_ret += 1
            for pos in range(first, len(walk)):  # the ideal ranking beyond the end of the list
                if walk[pos] > 0.0:
                    num_rel += 1
                    ideal += walk[pos] / math.log2(pos + 2)
            total += ieee(float(num_rel - num_rel_ret) * dcg, ideal)
            if total > 0.0:
                out[q] = ieee(total, num_rel)
        return out
