"""McNemar's test on a binary per-query outcome (statsmodels)."""
from __future__ import annotations

import numpy as np

from evalkit.stats import TestResult


def contingency(run: np.ndarray, baseline: np.ndarray) -> np.ndarray:
    """2x2 table ``[[both, only baseline], [only run, neither]]`` of 0/1 outcomes."""
    run = np.asarray(run) > 0
    baseline = np.asarray(baseline) > 0
    return np.array(
        [
            [int(np.sum(baseline & run)), int(np.sum(baseline & ~run))],
            [int(np.sum(~baseline & run)), int(np.sum(~baseline & ~run))],
        ]
    )


def check_binary(values: np.ndarray, label: str) -> None:
    finite = values[~np.isnan(values)]
    if not np.all((finite == 0) | (finite == 1)):
        raise ValueError(f"{label} is not a 0/1 outcome")


def mcnemar_tests(run: np.ndarray, baseline: np.ndarray) -> tuple[TestResult, TestResult]:
    """McNemar's exact (binomial) and chi-square (continuity-corrected) tests.

    Only the discordant queries matter: ``b`` = only the baseline correct,
    ``c`` = only the run correct. Exact: ``p = min(1, 2 * BinomCDF(min(b, c);
    b + c, 1/2))``. Chi-square: ``(|b - c| - 1)^2 / (b + c)`` on 1 df
    (Edwards' correction). Both via
    ``statsmodels.stats.contingency_tables.mcnemar``; with no discordant
    query (``b + c = 0``, e.g. identical runs) both give ``p = 1``.
    Reference: McNemar (1947), Psychometrika 12(2).
    """
    from statsmodels.stats.contingency_tables import mcnemar

    table = contingency(run, baseline)
    b, c = int(table[0, 1]), int(table[1, 0])
    details = {"only_baseline": b, "only_run": c, "both": int(table[0, 0]), "neither": int(table[1, 1])}
    if b + c == 0:
        return (
            TestResult("mcnemar_exact", 0.0, 1.0, details),
            TestResult("mcnemar_chi2", 0.0, 1.0, details),
        )
    exact = mcnemar(table, exact=True)
    chi2 = mcnemar(table, exact=False, correction=True)
    return (
        TestResult("mcnemar_exact", float(exact.statistic), float(exact.pvalue), details),
        TestResult("mcnemar_chi2", float(chi2.statistic), float(chi2.pvalue), details),
    )
