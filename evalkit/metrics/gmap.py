"""Geometric mean average precision (GMAP)."""
from __future__ import annotations

from evalkit.metrics import register
from evalkit.metrics.average_precision import MAP
from evalkit.metrics.parameters import REL


@register
class GMAP(MAP):
    """GMAP = exp(mean over queries of log(max(AP(q), 1e-5))).

    Per query the value is AP (as ``map``); only the aggregate differs: a
    geometric mean with trec_eval's floor MIN_GEO_MEAN = 1e-5, so a query with
    AP = 0 weighs in as 1e-5 (trec_eval ``gm_map``, printed only for ``all``;
    with ``--missing zero`` a missing query enters as 1e-5, as under ``-c``).
    Reference: Robertson, "On GMAP", CIKM 2006.
    """

    name = "GMAP"
    aliases = ("gm_map", "gmap", "gm_ap")
    cutoff_aliases = ()
    cutoff = "none"
    aggregation = "gmean"
    summary_only = True
    trec = ("gm_map", None)
    ir_measures = ()
    ranx = ()
    parameters = (REL,)
