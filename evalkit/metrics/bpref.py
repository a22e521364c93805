"""Bpref as trec_eval defines it."""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from evalkit.metrics import register
from evalkit.metrics.base import Judged, Metric, safe_divide
from evalkit.metrics.parameters import REL


def judged_nonrelevant_above(judged: Judged) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each retrieved relevant row: (row mask, its query position, n_r).

    n_r = judged non-relevant documents ranked above it (unjudged ones ignored).
    Shared by trec_eval's Bpref and ClimateCheck's variant.
    """
    above = judged.cumulative_within_query(judged.nonrelevant_judged)
    mask = judged.relevant
    return mask, judged.qpos[mask], above[mask].astype(np.float64)


@register
class Bpref(Metric):
    """bpref(q) = (1/R) * sum over retrieved relevant r of (1 - min(n_r, R) / min(R, N)).

    n_r counts judged non-relevant documents ranked above r; N is the number of
    judged non-relevant documents of the query; unjudged documents are
    ignored. A relevant document with n_r = 0 adds 1 (also when N = 0).
    R = 0 gives 0. This is trec_eval's ``bpref`` (ranx gives NaN when N = 0).
    Reference: Buckley & Voorhees, SIGIR 2004.

    Ties follow the ranking rule (:mod:`evalkit.data.ranking`); a gold query absent from
    the run scores 0 under ``--missing zero`` and is left out under ``skip``.
    """

    # Metric's declared types, so that GMBpref's own values fit
    name = "Bpref"
    aliases: ClassVar[tuple[str, ...]] = ("bpref",)
    trec: ClassVar[tuple[str | None, str | None]] = ("bpref", None)
    ir_measures: ClassVar[tuple[str, ...]] = ("Bpref",)
    ranx: ClassVar[tuple[str, ...]] = ("bpref",)
    cutoff = "none"
    parameters = (REL,)

    def per_query(self, judged: Judged) -> np.ndarray:
        mask, q, n_r = judged_nonrelevant_above(judged)
        R, N = judged.num_rel[q], judged.num_nonrel[q]
        penalty = safe_divide(np.minimum(n_r, R), np.minimum(R, N))
        contribution = np.where(n_r > 0, 1.0 - penalty, 1.0)
        return safe_divide(judged.per_query_sum(contribution, mask), judged.num_rel)


@register
class GMBpref(Bpref):
    """GM-Bpref = exp(mean over queries of log(max(bpref(q), 1e-5))): bpref under a geometric mean.

    trec_eval ``gm_bpref`` (printed only for ``all``); the floor is trec_eval's MIN_GEO_MEAN.
    """

    name = "GM-Bpref"
    aliases = ("gm_bpref", "gmbpref")
    aggregation = "gmean"
    summary_only = True
    trec = ("gm_bpref", None)
    ir_measures = ()
    ranx = ()
