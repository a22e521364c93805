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


def two_sample_t_test(a: np.ndarray, b: np.ndarray) -> TestResult:
    """Two-sided Student t-test of two independent samples (pooled variance; ``scipy.stats.ttest_ind``'s default).

    ``t = (mean(a) - mean(b)) / sqrt(s_p^2 (1/n_a + 1/n_b))`` with
    ``s_p^2 = ((n_a - 1) var(a) + (n_b - 1) var(b)) / (n_a + n_b - 2)`` and
    ``n_a + n_b - 2`` df. Degenerate cases are defined rather than NaN: equal
    means with no variance give ``t = 0, p = 1``; different means with no
    variance ``t = +-inf, p = 0``; fewer than three values in all, ``p = 1``.
    Reference: Student (1908); as used for replicability by Breuer et al. (2020), SIGIR.
    """
    from evalkit.stats.distributions import student_t_two_sided

    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    n_a, n_b = len(a), len(b)
    df = n_a + n_b - 2
    details = {"df": max(df, 0), "n": n_a, "n_other": n_b}
    if n_a < 1 or n_b < 1 or df < 1:
        return TestResult("ttest_unpaired", 0.0, 1.0, details)
    difference = np.mean(a) - np.mean(b)
    pooled = (np.sum((a - np.mean(a)) ** 2) + np.sum((b - np.mean(b)) ** 2)) / df
    if pooled == 0:
        if difference == 0:
            return TestResult("ttest_unpaired", 0.0, 1.0, details)
        return TestResult("ttest_unpaired", float(np.copysign(np.inf, difference)), 0.0, details)
    t = difference / np.sqrt(pooled * (1.0 / n_a + 1.0 / n_b))
    return TestResult("ttest_unpaired", float(t), student_t_two_sided(float(t), df), details)
