"""R-precision."""
from __future__ import annotations

import numpy as np

from evalkit.metrics import register
from evalkit.metrics.base import Judged, Metric, safe_divide
from evalkit.metrics.parameters import REL


@register
class RPrec(Metric):
    """R-Prec(q) = |relevant in top R| / R, R = judged relevant documents (0 when R = 0).

    trec_eval ``Rprec``; ranx ``r-precision``.

    Ties follow the ranking rule (:mod:`evalkit.data.ranking`); a gold query absent from
    the run scores 0 under ``--missing zero`` and is left out under ``skip``.
    """

    name = "R-Prec"
    aliases = ("rprec", "r-precision", "r_precision", "rprecision", "r-prec", "r_prec")
    trec = ("Rprec", None)
    ir_measures = ("Rprec",)
    ranx = ("r-precision",)
    cutoff = "none"
    parameters = (REL,)

    def per_query(self, judged: Judged) -> np.ndarray:
        mask = judged.relevant & (judged.rank <= judged.num_rel[judged.qpos])
        return safe_divide(judged.per_query_count(mask), judged.num_rel)
