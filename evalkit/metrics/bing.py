"""binG: trec_eval's binary gain measure."""
from __future__ import annotations

import numpy as np

from evalkit.metrics import clib, register
from evalkit.metrics.base import Judged, Metric, safe_divide
from evalkit.metrics.parameters import REL


@register
class BinG(Metric):
    """binG(q) = (1/R) * sum over retrieved relevant documents of 1 / log2(2 + documents ranked above it that are not relevant).

    Each relevant document is worth 1, discounted by the non-relevant (or
    unjudged) documents before it. trec_eval ``binG`` (an experimental
    measure of 2008, the binary case of ``G``).
    """

    name = "binG"
    aliases = ("bing",)
    cutoff = "none"
    trec = ("binG", None)
    parameters = (REL,)

    def per_query(self, judged: Judged) -> np.ndarray:
        relevant = judged.relevant
        hits = judged.cumulative_within_query(relevant)[relevant]
        terms = 1.0 / clib.log2_of(2 + judged.rank[relevant] - hits)  # 3 + i - rel_so_far, i = rank - 1
        total = judged.per_query_sum(terms, relevant)
        return np.where(judged.per_query_count(relevant) > 0, safe_divide(total, judged.num_rel), 0.0)
