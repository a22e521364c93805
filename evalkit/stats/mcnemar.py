"""McNemar's test on a binary per-query outcome (statsmodels' formulas, without importing statsmodels)."""
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
    (Edwards' correction). Both as
    ``statsmodels.stats.contingency_tables.mcnemar`` computes them (exact:
    ``scipy.stats.binom.cdf``; chi-square: ``scipy.stats.chi2.sf``), through
    the same scipy.special functions, without importing statsmodels (and
    pandas) or scipy.stats; with no discordant query (``b + c = 0``, e.g.
    identical runs) both give ``p = 1``. Reference: McNemar (1947), Psychometrika 12(2).
    """
    from evalkit.stats.distributions import binomial_half_cdf, chi2_sf

    table = contingency(run, baseline)
    b, c = int(table[0, 1]), int(table[1, 0])
    details = {"only_baseline": b, "only_run": c, "both": int(table[0, 0]), "neither": int(table[1, 1])}
    if b + c == 0:
        return (
            TestResult("mcnemar_exact", 0.0, 1.0, details),
            TestResult("mcnemar_chi2", 0.0, 1.0, details),
        )
    n1, n2 = float(b), float(c)
    exact_statistic = min(n1, n2)
    exact_p = min(binomial_half_cdf(exact_statistic, b + c) * 2, 1.0)
    chi2_statistic = (abs(n1 - n2) - 1) ** 2 / (1.0 * (n1 + n2))
    return (
        TestResult("mcnemar_exact", exact_statistic, exact_p, details),
        TestResult("mcnemar_chi2", chi2_statistic, chi2_sf(chi2_statistic, 1), details),
    )
