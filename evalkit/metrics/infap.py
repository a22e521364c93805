"""Inferred average precision (infAP) for sampled judgments."""
from __future__ import annotations

import numpy as np

from evalkit.metrics import register
from evalkit.metrics.base import Judged, Metric
from evalkit.metrics.ranked_lists import ranked_lists
from evalkit.metrics.parameters import REL

INFAP_EPSILON = 0.00001  # trec_eval's INFAP_EPSILON


@register
class InfAP(Metric):
    """infAP(q) = (1/R) * sum over retrieved relevant documents at 0-based position j of E[precision at j+1].

    For j = 0 the term is 1; otherwise
    ``1/(j+1) + (j/(j+1)) * ((r-1 + n + u)/j) * ((r-1 + eps)/(r-1 + n + 2 eps))``
    with r, n the judged relevant and non-relevant documents down to j
    (r counting this one), u those in the pool but not judged (a grade < 0 in
    the qrels: the part of the pool not sampled), eps = 0.00001; documents
    outside the qrels are skipped. The precision above a relevant document is
    estimated from the judged sample (Yilmaz and Aslam, "Estimating Average
    Precision with Incomplete and Imperfect Judgments", CIKM 2006), as
    trec_eval ``infAP`` computes it, in its floating-point order. With every
    pooled document judged it is close to, not equal to, AP.
    """

    name = "infAP"
    aliases = ("infap", "inf_ap")
    cutoff = "none"
    needs_pool = True
    trec = ("infAP", None)
    ir_measures = ("infAP",)
    parameters = (REL,)

    def per_query(self, judged: Judged) -> np.ndarray:
        out = np.zeros(judged.n_queries)
        level = judged.relevance_level
        for q, ranked in enumerate(ranked_lists(judged)):
            if not len(ranked.ranks):
                continue
            events = sorted([(r, g) for r, g in zip(ranked.ranks.tolist(), ranked.grades.tolist())]
                            + [(r, None) for r in ranked.pool_ranks.tolist()], key=lambda event: event[0])
            relevant = nonrelevant = unjudged = 0
            total = 0.0
            for rank, grade in events:
                if grade is None:
                    unjudged += 1
                elif grade < level:
                    nonrelevant += 1
                else:
                    relevant += 1
                    j = rank - 1
                    if j == 0:
                        total += 1.0
                    else:
                        fj = float(j)
                        total += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((relevant - 1 + nonrelevant + unjudged) / fj) * (
                            (relevant - 1 + INFAP_EPSILON) / (relevant - 1 + nonrelevant + 2 * INFAP_EPSILON))
            out[q] = total / judged.num_rel[q] if judged.num_rel[q] else total
        return out
