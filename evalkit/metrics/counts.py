"""Counts trec_eval reports per query and sums over queries: num_q, num_ret, num_rel, num_rel_ret."""
from __future__ import annotations

import numpy as np

from evalkit.metrics import register
from evalkit.metrics.base import Judged, Metric
from evalkit.metrics.parameters import RANK_CUTOFF, REL


@register
class NumQ(Metric):
    """NumQ = the number of evaluated queries (each query counts 1; summed).

    trec_eval ``num_q`` (printed only for ``all``), ir_measures ``NumQ``.
    """

    name = "NumQ"
    aliases = ("num_q",)
    cutoff = "none"
    params = ()
    aggregation = "sum"
    summary_only = True
    trec = ("num_q", None)
    ir_measures = ("NumQ",)
    parameters = ()

    def per_query(self, judged: Judged) -> np.ndarray:
        return np.ones(judged.n_queries)


@register
class NumRet(Metric):
    """NumRet(q) = documents retrieved for q (after ``--depth``); summed over queries.

    trec_eval ``num_ret``, ir_measures ``NumRet``. A query missing from the run retrieves 0.
    """

    name = "NumRet"
    aliases = ("num_ret",)
    cutoff = "none"
    params = ()
    aggregation = "sum"
    trec = ("num_ret", None)
    ir_measures = ("NumRet",)
    parameters = ()

    def per_query(self, judged: Judged) -> np.ndarray:
        return judged.num_ret.copy()


@register
class NumRel(Metric):
    """NumRel(q) = R, judged documents with grade >= the relevance level; summed over queries.

    trec_eval ``num_rel``, ir_measures ``NumRel``. Counted from the qrels, whatever the run retrieved.
    """

    name = "NumRel"
    aliases = ("num_rel",)
    cutoff = "none"
    aggregation = "sum"
    trec = ("num_rel", None)
    ir_measures = ("NumRel",)
    parameters = (REL,)

    def per_query(self, judged: Judged) -> np.ndarray:
        return judged.num_rel.copy()


@register
class NumRelRet(Metric):
    """NumRelRet@k(q) = relevant documents among the top k retrieved (all retrieved without k); summed.

    trec_eval ``num_rel_ret`` (no cutoff), ir_measures ``NumRelRet``. A document
    repeated in one list counts once, at its first position.
    """

    name = "NumRelRet"
    aliases = ("num_rel_ret",)
    aggregation = "sum"
    trec = ("num_rel_ret", None)
    ir_measures = ("NumRelRet",)
    parameters = (RANK_CUTOFF, REL)

    def per_query(self, judged: Judged) -> np.ndarray:
        return judged.per_query_count(judged.relevant & self.within_cutoff(judged))
