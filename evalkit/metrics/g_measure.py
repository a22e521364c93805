"""G: trec_eval's normalised gain, where a document's worth depends on the gain already collected."""
from __future__ import annotations

import math

import numpy as np

from evalkit.metrics import register
from evalkit.metrics.base import Judged, Metric
from evalkit.metrics.gains import GainParams, ideal_walk, position_gains
from evalkit.metrics.ranked_lists import ranked_lists
from evalkit.metrics.parameters import GAIN

MIN_COST = 1.0


@register
class G(GainParams, Metric):
    """G(q) = (sum over retrieved documents at position i of gain_i / log2(2 + cost_i - collected_i)) / (ideal total gain).

    collected_i is the gain of the run's documents down to i, cost_i the
    ideal ranking's gain down to i (each position counting at least 1): a
    document is worth more when the run has kept up with the ideal. Gain
    tables as ``nDCG``. trec_eval ``G`` (experimental, 2008), in its
    floating-point order.
    """

    name = "G"
    cutoff = "none"
    params = ()
    trec = ("G", None)
    parameters = (GAIN,)

    def per_query(self, judged: Judged) -> np.ndarray:
        out = np.zeros(judged.n_queries)
        for q, ranked in enumerate(ranked_lists(judged)):
            table = self.table_for(ranked)
            walk, gains = ideal_walk(table), position_gains(ranked, table)
            first = min(ranked.length, len(walk))
            at = dict(gains)
            value = collected = ideal = cost = 0.0
            for pos in range(first):
                gain = at.get(pos, 0.0)
                collected += gain
                if walk[pos] > 0.0:
                    ideal += walk[pos]
                cost += walk[pos] if walk[pos] >= MIN_COST else MIN_COST
                if gain != 0:
                    value += gain / math.log2(2 + cost - collected)
            later = [(pos, gain) for pos, gain in gains if pos >= first]
            if later:  # beyond the ideal ranking every position costs MIN_COST, added one by one as trec_eval does
                costs = np.cumsum(np.r_[cost, np.full(later[-1][0] - first + 1, MIN_COST)])
                for pos, gain in later:
                    collected += gain
                    value += gain / math.log2(2 + float(costs[pos - first + 1]) - collected)
            for pos in range(first, len(walk)):
                if walk[pos] > 0.0:
                    ideal += walk[pos]
            if ideal > 0.0:
                out[q] = value / ideal
        return out
