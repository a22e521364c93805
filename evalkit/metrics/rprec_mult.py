"""Precision at multiples of R."""
from __future__ import annotations

import numpy as np

from evalkit.metrics import register
from evalkit.metrics.base import Judged, Metric
from evalkit.metrics.parameters import REL, R_MULTIPLE


@register
class RPrecMult(Metric):
    """Rprec_mult@x(q) = P@k with k = floor(x * R + 0.9): precision at a multiple x of the relevant count.

    R-Prec at 0.2 R, 0.4 R, ..., 2 R (trec_eval's defaults) shows whether a
    run is precision- or recall-oriented; k = 0 (R = 0) gives 0, and beyond
    the end of the list the missing documents count as non-relevant.
    trec_eval ``Rprec_mult_x`` (``-m Rprec_mult`` for its ten defaults).
    """

    name = "Rprec_mult"
    aliases = ("rprec_mult", "rprecmult", "rprec_mult_avgjg")
    cutoff = "required"
    cutoff_kind = "multiple"
    trec = (None, "Rprec_mult_")
    parameters = (R_MULTIPLE, REL)

    def per_query(self, judged: Judged) -> np.ndarray:
        assert self.k is not None  # cutoff = "required": parse_metric refuses Rprec_mult without one
        k = (float(self.k) * judged.num_rel + 0.9).astype(np.int64)  # C's (long) (x * R + 0.9)
        hits = judged.per_query_count(judged.relevant & (judged.rank <= k[judged.qpos]))
        out = np.zeros(judged.n_queries)
        np.divide(hits, k, out=out, where=k > 0)
        return out
