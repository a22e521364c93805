"""``--output trec_eval``: the lines ``trec_eval -q`` prints, to the digit, so that ``diff`` against it is empty.

Measures come in trec_eval's order (that of its ``measures.c``, cutoffs
ascending within a family), whatever order they were asked in; evalkit's
measures that trec_eval lacks follow under evalkit's labels. Queries in byte
order, then ``all``. Values as trec_eval prints them: ``%6.4f``; counts as
integers; NaN (trec_eval's 0/0 on an empty condensed list) as ``-nan``; with
standardised scores (``-Z``) every name gets a ``Z`` and every value
``%6.4f``. The ``all`` line of a trec_eval measure is trec_eval's summary:
values added in query order from 0 and divided by the number of queries (a
NaN makes the mean NaN, where evalkit's own outputs leave undefined values
out), counts summed, ``num_q`` the number of queries, and under ``-c``
(``--missing zero``) ``num_rel`` the qrels' judgments with a grade above 0
whatever ``-l`` (trec_eval's ``te_calc_avg_num_rel``).
"""
from __future__ import annotations

import math

import numpy as np

from evalkit.metrics.judgment_groups import avgjg_name
from evalkit.metrics.base import Metric
from evalkit.metrics.trec_names import order_key


def trec_eval_name(metric: Metric, groups: int = 0) -> str | None:
    """The name trec_eval prints for ``metric`` (``map_avgjg`` under judgment groups); ``None`` when it has none."""
    name = metric.trec_name()
    return avgjg_name(name) if groups else name


def _family(metric: Metric, name: str | None, groups: int) -> int:
    """Where trec_eval prints the measure's family (``P`` for ``P_5``)."""
    if name is None:
        return order_key("")
    whole, prefix = metric.trec
    family = whole if metric.k is None else (prefix or "").rstrip("_")
    if groups and family in ("map", "P", "Rprec_mult"):
        family += "_avgjg"
    return order_key(family or "")


def trec_order(metrics: list[Metric], groups: int = 0) -> list[Metric]:
    """``metrics`` in trec_eval's print order; measures trec_eval does not have last, in the order given."""
    keyed = []
    for index, metric in enumerate(metrics):
        name = trec_eval_name(metric, groups)
        cut = float(metric.k) if (name is not None and metric.k is not None) else 0.0
        keyed.append(((_family(metric, name, groups), cut if name is not None else 0.0, index), metric))
    return [metric for _, metric in sorted(keyed, key=lambda pair: pair[0])]


def _value(metric: Metric, value: float, standardized: bool) -> str:
    if isinstance(value, float) and math.isnan(value):
        return f"{'-nan':>6}"
    if metric.aggregation == "sum" and not standardized:
        return str(int(value))  # C's (long) cast
    return f"{value:6.4f}"


def trec_summary(evaluation, metric: Metric) -> float:
    """trec_eval's ``all`` value: from 0, each query's value added in query order, then its averaging."""
    order = np.argsort(np.asarray(evaluation.query_ids, dtype=str), kind="stable")
    values = np.asarray(evaluation.per_query[metric.label], dtype=np.float64)[order]
    if metric.name == "NumQ":
        return float(len(values))
    if metric.name == "NumRel" and evaluation.missing == "zero" and metric.rel is None:
        return float(evaluation.qrels_relevant)  # -c: trec_eval counts the qrels' grades > 0, whatever -l
    if metric.aggregation == "gmean":
        return metric.aggregate(values, evaluation.standardized)
    total = float(np.cumsum(np.r_[0.0, values])[-1])
    if metric.aggregation == "sum":
        return total
    return total / len(values) if len(values) else total


def as_trec_eval(score) -> str:
    """``measure<TAB>query<TAB>value`` lines as ``trec_eval -q`` prints them (see the module docstring)."""
    ev = score.evaluation
    groups, z = ev.judgment_groups, ev.standardized
    metrics = trec_order(list(ev.metrics), groups)
    names = [trec_eval_name(m, groups) or m.label for m in metrics]
    prefix = "Z" if z else ""
    lines = []
    for i in sorted(range(len(ev.query_ids)), key=lambda i: str(ev.query_ids[i])):
        query = ev.query_ids[i]
        for metric, name in zip(metrics, names):
            if metric.summary_only:
                continue
            value = ev.per_query[metric.label][i]
            if metric.text:
                lines.append(f"{name:<22}\t{query}\t'{value}'")
            else:
                lines.append(f"{prefix}{name:<22}\t{query}\t{_value(metric, float(value), z)}")
    for metric, name in zip(metrics, names):
        if metric.name == "runid":
            lines.append(f"{'runid':<22}\tall\t{ev.run_tag or ev.run_name}")
        elif metric.text:
            continue
        elif trec_eval_name(metric, groups) is None:
            lines.append(f"{prefix}{name:<22}\tall\t{_value(metric, ev.mean(metric), z)}")
        else:
            lines.append(f"{prefix}{name:<22}\tall\t{_value(metric, trec_summary(ev, metric), z)}")
    return "\n".join(lines)
