"""nDCG averaged at the R levels of the ideal ranking (trec_eval's Rndcg)."""
from __future__ import annotations

import math

import numpy as np

from evalkit.metrics import register
from evalkit.metrics.base import Judged, Metric
from evalkit.metrics.gains import GainParams, ideal_walk, position_gains
from evalkit.metrics.ranked_lists import ieee, ranked_lists
from evalkit.metrics.parameters import GAIN


@register
class RNDCG(GainParams, Metric):
    """Rndcg(q) = mean of nDCG@R_l over the R levels: the ranks where the ideal ranking's gain changes (and the list's end).

    With 5 documents of grade 3, 3 of grade 2 and 10 of grade 1 it averages
    nDCG at 5, 8 and 18 and at the end of the list; nDCG's expected value
    jumps at those points, so averaging there compares queries more fairly.
    Gain tables as ``nDCG``; R = 0 gives 0. trec_eval ``Rndcg``
    (experimental), in its floating-point order.
    """

    name = "Rndcg"
    aliases = ("rndcg",)
    cutoff = "none"
    params = ()
    trec = ("Rndcg", None)
    parameters = (GAIN,)

    def per_query(self, judged: Judged) -> np.ndarray:
        out = np.zeros(judged.n_queries)
        for q, ranked in enumerate(ranked_lists(judged)):
            if judged.num_rel[q] == 0:
                continue
            table = self.table_for(ranked)
            walk, gains = ideal_walk(table), position_gains(ranked, table)
            old = table[-1].gain if table else 0.0
            first = min(ranked.length, len(walk))
            at = dict(gains)
            dcg = ideal = total = 0.0
            changes = 0
            for pos in range(first):
                if old != walk[pos]:
                    if ideal > 0.0:
                        total += dcg / ideal
                        changes += 1
                    old = walk[pos]
                gain = at.get(pos, 0.0)
                if gain != 0:
                    dcg += gain / math.log2(pos + 2)
                if walk[pos] > 0.0:
                    ideal += walk[pos] / math.log2(pos + 2)
            if first < ranked.length:
                for pos, gain in gains:
                    if pos >= first:
                        dcg += gain / math.log2(pos + 2)
                if ideal > 0.0:
                    total += dcg / ideal
                    changes += 1
            for pos in range(first, len(walk)):  # the ideal ranking beyond the end of the list
                if old != walk[pos]:
                    if ideal > 0.0:
                        total += dcg / ideal
                        changes += 1
                    old = walk[pos]
                if walk[pos] > 0.0:
                    ideal += walk[pos] / math.log2(pos + 2)
            out[q] = ieee(total, changes)
        return out
