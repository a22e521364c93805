"""Wilcoxon signed-rank test for paired per-query scores (scipy.stats.wilcoxon)."""
from __future__ import annotations

import warnings

import numpy as np

from evalkit.stats import TestResult

ZERO_METHODS = {
    "wilcox": "zero differences are dropped before ranking (Wilcoxon 1945)",
    "pratt": "zero differences are ranked, then their ranks dropped (Pratt 1959)",
    "zsplit": "zero differences are ranked and their ranks split between R+ and R-",
}


def effective_method(diffs: np.ndarray) -> str:
    """What scipy's ``method="auto"`` does with these differences (scipy >= 1.13).

    n > 50: normal approximation; otherwise the exact distribution when there
    are no ties and no zeros, an exact permutation distribution when n <= 13,
    else the normal approximation.
    """
    n = len(diffs)
    if n > 50:
        return "normal approximation"
    magnitudes = np.abs(diffs)
    has_ties = len(np.unique(magnitudes)) < n
    if not has_ties and not np.any(diffs == 0):
        return "exact"
    if n <= 13:
        return "exact permutation distribution"
    return "normal approximation"


def wilcoxon_test(run: np.ndarray, baseline: np.ndarray, zero_method: str = "wilcox") -> TestResult:
    """Two-sided Wilcoxon signed-rank test of ``d = run - baseline``.

    The statistic is scipy's: ``min(R+, R-)``, the smaller sum of the ranks of
    ``|d|`` of positive and negative differences (ties get average ranks,
    zeros are treated by ``zero_method``; no continuity correction). When no
    difference is non-zero the test is undefined and ``p = 1`` is returned.
    Reference: Wilcoxon (1945), Biometrics Bulletin 1(6); scipy.stats.wilcoxon.
    """
    from scipy import stats

    if zero_method not in ZERO_METHODS:
        raise ValueError(f"zero_method must be one of {', '.join(ZERO_METHODS)}")
    run = np.asarray(run, dtype=np.float64)
    baseline = np.asarray(baseline, dtype=np.float64)
    diffs = run - baseline
    nonzero = int(np.count_nonzero(diffs))
    details = {"zero_method": zero_method, "n": len(diffs), "n_nonzero": nonzero}
    if nonzero == 0:
        return TestResult("wilcoxon", 0.0, 1.0, {**details, "method": "none (all differences are zero)"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.simplefilter("ignore", UserWarning)
        result = stats.wilcoxon(run, baseline, zero_method=zero_method, correction=False, method="auto")
    p_value = float(result.pvalue)
    if np.isnan(p_value):  # pragma: no cover - defensive: scipy gives NaN only without non-zero diffs
        p_value = 1.0
    return TestResult("wilcoxon", float(result.statistic), p_value, {**details, "method": effective_method(diffs)})
