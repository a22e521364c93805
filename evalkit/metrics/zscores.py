"""Standardised scores (trec_eval ``-Z``): each per-query value as standard deviations from a reference mean.

Webber, Moffat and Zobel ("Score standardization for inter-collection
comparison of retrieval systems", SIGIR 2008) score a run on a query
relative to how a reference set of runs did on it: z = (value - mean) / sd,
the mean and standard deviation per (query, measure) coming from a file of
lines ``query measure mean stddev`` (trec_eval's ``-Z`` file, made by its
``test/make_zscore_file.py`` from the reference runs' ``-q`` output; measures
under their trec_eval names). As trec_eval: a query or measure missing from
the file gives -1000000, a standard deviation of 0 gives 0 when the value
equals the mean and -1000000 otherwise, and the summary is the mean of the z
values (gm_map: exp of the mean of the z-scored log values).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, replace

import numpy as np

from evalkit.core.errors import InputError
from evalkit.io.formats.tables import data_lines, parse_score
from evalkit.io.textio import load

MISSING = -1000000.0  # trec_eval's MISSING_ZSCORE_VALUE


@dataclass(frozen=True)
class ZScores:
    """Reference means and standard deviations per (query, trec_eval measure name)."""

    table: dict[tuple[str, str], tuple[float, float]]
    queries: frozenset[str]
    path: str = ""

    def standardize(self, query: str, measure: str, value: float) -> float:
        if query not in self.queries:
            return MISSING
        found = self.table.get((query, measure))
        if found is None:
            return MISSING
        mean, sd = found
        if sd:
            return (value - mean) / sd
        return 0.0 if value == mean else MISSING


def read_zscores(path: str | os.PathLike) -> ZScores:
    """Read a ``query measure mean stddev`` file (blank and ``#`` lines skipped); one line per (query, measure)."""
    loaded = load(path)
    table: dict[tuple[str, str], tuple[float, float]] = {}
    for number, fields in data_lines(loaded):
        if len(fields) != 4:
            raise InputError(loaded.label, f"expected 4 whitespace-separated fields (query measure mean stddev), found {len(fields)}", number)
        query, measure = fields[0].decode("utf-8"), fields[1].decode("utf-8")
        mean = parse_score(fields[2].decode("utf-8"), loaded.label, number, "mean")
        sd = parse_score(fields[3].decode("utf-8"), loaded.label, number, "standard deviation")
        if (query, measure) in table:
            raise InputError(loaded.label, f"query {query!r} measure {measure!r} is given twice", number)
        table[(query, measure)] = (mean, sd)
    return ZScores(table, frozenset(q for q, _ in table), str(path))


def standardized(evaluation, zscores: ZScores):
    """``evaluation`` with every per-query value replaced by its z-score (by the metric's trec_eval name, else its label).

    A geometric-mean metric (gm_map, gm_bpref) is standardised on
    log(max(value, 1e-5)), the value trec_eval accumulates for it; ``num_q``
    and text measures are left as they are.
    """
    from evalkit.metrics import clib
    from evalkit.metrics.base import MIN_GEO_MEAN

    queries = [str(q) for q in evaluation.query_ids.tolist()]
    per_query = dict(evaluation.per_query)
    for metric in evaluation.metrics:
        if metric.text or metric.name == "NumQ":
            continue
        name = metric.trec_name() or metric.label
        values = per_query[metric.label]
        if metric.aggregation == "gmean":
            values = clib.log(np.maximum(values, MIN_GEO_MEAN))
        per_query[metric.label] = np.array([zscores.standardize(q, name, float(v)) for q, v in zip(queries, values.tolist())])
    return replace(evaluation, per_query=per_query, standardized=True)
