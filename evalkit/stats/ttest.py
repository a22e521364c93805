"""Paired t-test on per-query scores (scipy.stats.ttest_rel's arithmetic, numpy and scipy.special only)."""
from __future__ import annotations

import numpy as np

from evalkit.stats import TestResult


def paired_t_test(run: np.ndarray, baseline: np.ndarray) -> TestResult:
    """Two-sided paired t-test: ``t = mean(d) / (sd(d) / sqrt(n))`` with ``n - 1`` df.

    ``d = run - baseline``. Computed as ``scipy.stats.ttest_rel`` computes it
    (mean, ``var = mean((d - mean)^2) * n / (n - 1)``, ``p = 2 * stdtr(n - 1, -|t|)``),
    bit-identical, without importing scipy.stats. Degenerate cases are defined rather than NaN: all
    differences zero gives ``t = 0, p = 1``; a constant non-zero difference
    (zero variance) gives ``t = +-inf, p = 0``; fewer than two pairs gives
    ``p = 1``. Reference: Student (1908); Smucker, Allan & Carterette (2007),
    CIKM, for its use in IR.
    """
    from evalkit.stats.distributions import student_t_two_sided

    run = np.asarray(run, dtype=np.float64)
    baseline = np.asarray(baseline, dtype=np.float64)
    diffs = run - baseline
    n = len(diffs)
    details = {"df": max(n - 1, 0), "n": n}
    if n < 2 or not np.any(diffs != 0):
        return TestResult("ttest", 0.0, 1.0, details)
    if np.all(diffs == diffs[0]):
        return TestResult("ttest", float(np.copysign(np.inf, diffs[0])), 0.0, details)
    mean = np.mean(diffs)
    variance = np.mean((diffs - mean) ** 2) * (np.float64(n) / np.float64(n - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (mean - 0.0) / np.sqrt(variance / n)
    return TestResult("ttest", float(t), student_t_two_sided(float(t), n - 1), details)
