"""(Mean) average precision, optionally cut at k."""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from evalkit.metrics import register
from evalkit.metrics.base import Judged, Metric, safe_divide
from evalkit.metrics.parameters import RANK_CUTOFF, REL, Param


@register
class MAP(Metric):
    """AP@k(q) = (1 / R) * sum over relevant docs at rank i <= k of P@i.

    Divides by R, all judged relevant documents of the query, also with a
    cutoff (trec_eval ``map`` and ``map_cut_k``, ranx ``map@k``). R = 0 gives 0.
    Reference: Buckley & Voorhees, SIGIR 2000.

    Ties follow the ranking rule (:mod:`evalkit.data.ranking`); a gold query absent from
    the run scores 0 under ``--missing zero`` and is left out under ``skip``.
    """

    # Metric's declared types, so that GMAP's own values fit
    name = "MAP"
    aliases: ClassVar[tuple[str, ...]] = ("ap", "map", "average_precision", "map_avgjg")
    cutoff_aliases: ClassVar[tuple[str, ...]] = ("map_cut",)
    trec: ClassVar[tuple[str | None, str | None]] = ("map", "map_cut_")
    ir_measures: ClassVar[tuple[str, ...]] = ("AP", "AP@k")
    ranx: ClassVar[tuple[str, ...]] = ("map", "map@k")
    parameters: ClassVar[tuple[Param, ...]] = (RANK_CUTOFF, REL)

    def per_query(self, judged: Judged) -> np.ndarray:
        relevant = judged.relevant
        hits_so_far = judged.cumulative_within_query(relevant)
        mask = relevant & self.within_cutoff(judged)
        precision_at_hit = hits_so_far[mask] / judged.rank[mask]
        return safe_divide(judged.per_query_sum(precision_at_hit, mask), judged.num_rel)
