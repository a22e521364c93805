"""Aligning per-query scores of several runs for paired tests: the one place it is done.

Every run must have been evaluated against the same gold query set under the
same missing-query policy; the values of each run are then read with
:meth:`~evalkit.metrics.evaluation.Evaluation.values_for` in one common query order.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from evalkit.core.errors import UsageError
from evalkit.metrics.evaluation import Evaluation


@dataclass(frozen=True, eq=False)
class PairedValues:
    """Per-query values of one metric for several runs, one row per run."""

    metric: str
    names: list[str]
    query_ids: list[str]
    matrix: np.ndarray  # shape (runs, queries); NaN where the metric is undefined

    def index(self, name: str) -> int:
        return self.names.index(name)

    def pair(self, run: int, baseline: int) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """Values of ``run`` and ``baseline`` on the queries where both are defined."""
        a, b = self.matrix[run], self.matrix[baseline]
        keep = ~(np.isnan(a) | np.isnan(b))
        return a[keep], b[keep], [q for q, k in zip(self.query_ids, keep.tolist()) if k]


def align(
    evaluations: Sequence[Evaluation], metric: str, names: Sequence[str] | None = None, common: bool = False
) -> PairedValues:
    """Stack ``metric`` of every evaluation in the query order of the first.

    Raises :class:`UsageError` when the runs were scored under different
    missing-query policies or on different query sets (e.g. ``--missing skip``
    with runs answering different queries): a paired test needs the same
    queries for every run. With ``common=True`` the queries evaluated for
    every run are kept instead (the leaderboard under ``--missing skip``).
    """
    if not evaluations:
        raise UsageError("no runs to align")
    names = list(names) if names is not None else [ev.run_name for ev in evaluations]
    first = evaluations[0]
    policies = {ev.missing for ev in evaluations}
    if len(policies) > 1:
        raise UsageError(f"runs were scored under different missing-query policies ({', '.join(sorted(policies))})")
    reference = set(first.query_ids.tolist())
    if common:
        for ev in evaluations[1:]:
            reference &= set(ev.query_ids.tolist())
    for name, ev in zip(names, evaluations):
        if metric not in ev.per_query:
            raise UsageError(f"{name}: metric {metric} was not computed")
        if not common and set(ev.query_ids.tolist()) != reference:
            raise UsageError(
                f"paired tests need the same queries for every run: {names[0]} is evaluated on "
                f"{len(reference)} queries, {name} on {len(ev.query_ids)} (missing policy {first.missing}; "
                "use --missing zero to count unanswered queries as 0)"
            )
    query_ids = [q for q in first.query_ids.tolist() if q in reference]
    matrix = np.vstack([ev.values_for(query_ids, metric) for ev in evaluations])
    return PairedValues(metric=metric, names=names, query_ids=query_ids, matrix=matrix)
