"""Wilcoxon signed-rank test for paired per-query scores (scipy.stats.wilcoxon)."""
from __future__ import annotations

import warnings

import numpy as np

from evalkit.stats import TestResult
from evalkit.stats.ranks import average_ranks

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


def _asymptotic(d: np.ndarray, zero_method: str) -> tuple[float, float]:
    """Statistic ``min(R+, R-)`` and normal-approximation p-value, scipy's operations in scipy's order.

    scipy >= 1.13 ``_wilcoxon_statistic`` + ``_get_pvalue(z, _SimpleNormal())``
    without continuity correction: zeros become NaN under ``wilcox``, ``|d|``
    is ranked, ``z = (R+ - n(n+1)/4) / sqrt((n(n+1)(2n+1) - sum(t^3 - t)/2) / 24)``
    (zeros' share removed under ``pratt``), ``p = 2 * ndtr(-|z|)``.
    """
    from evalkit.stats.distributions import normal_two_sided

    i_zeros = d == 0
    if zero_method == "wilcox":
        d = d.copy()
        d[i_zeros] = np.nan
    count = np.float64(d.shape[-1] - np.count_nonzero(np.isnan(d)))
    r, t = average_ranks(np.abs(d))
    r_plus = np.sum((d > 0).astype(np.float64) * r)
    r_minus = np.sum((d < 0).astype(np.float64) * r)
    if zero_method == "zsplit":
        r_zero_2 = np.sum(i_zeros.astype(np.float64) * r) / 2
        r_plus = r_plus + r_zero_2
        r_minus = r_minus + r_zero_2
    mn = count * (count + 1.0) * 0.25
    se = count * (count + 1.0) * (2.0 * count + 1.0)
    if zero_method == "pratt":
        n_zero = np.float64(np.count_nonzero(i_zeros))
        mn = mn - n_zero * (n_zero + 1.0) * 0.25
        se = se - n_zero * (n_zero + 1.0) * (2.0 * n_zero + 1.0)
        if np.any(i_zeros):
            t = t.copy()
            t[0] = 0.0  # zeros rank first: their tie group leaves the correction
    tie_correct = np.sum(t**3 - t)
    se = np.sqrt((se - tie_correct / 2) / 24)
    z = (r_plus - mn) / se
    return float(np.minimum(r_plus, r_minus)), normal_two_sided(float(z))


def wilcoxon_test(run: np.ndarray, baseline: np.ndarray, zero_method: str = "wilcox") -> TestResult:
    """Two-sided Wilcoxon signed-rank test of ``d = run - baseline``.

    The statistic is scipy's: ``min(R+, R-)``, the smaller sum of the ranks of
    ``|d|`` of positive and negative differences (ties get average ranks,
    zeros are treated by ``zero_method``; no continuity correction). When no
    difference is non-zero the test is undefined and ``p = 1`` is returned.
    The normal approximation (what scipy's ``method="auto"`` picks for more
    than 50 queries, or with ties or zeros beyond 13) is computed here with
    numpy and ``scipy.special.ndtr``, bit-identical to scipy.stats.wilcoxon;
    the exact and permutation distributions (small samples) call scipy.stats.
    Reference: Wilcoxon (1945), Biometrics Bulletin 1(6); scipy.stats.wilcoxon.
    """
    if zero_method not in ZERO_METHODS:
        raise ValueError(f"zero_method must be one of {', '.join(ZERO_METHODS)}")
    run = np.asarray(run, dtype=np.float64)
    baseline = np.asarray(baseline, dtype=np.float64)
    diffs = run - baseline
    nonzero = int(np.count_nonzero(diffs))
    details = {"zero_method": zero_method, "n": len(diffs), "n_nonzero": nonzero}
    if nonzero == 0:
        return TestResult("wilcoxon", 0.0, 1.0, {**details, "method": "none (all differences are zero)"})
    method = effective_method(diffs)
    if method == "normal approximation" and not np.isnan(diffs).any():
        statistic, p_value = _asymptotic(diffs, zero_method)
    else:
        from scipy import stats

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            warnings.simplefilter("ignore", UserWarning)
            result = stats.wilcoxon(run, baseline, zero_method=zero_method, correction=False, method="auto")
        statistic, p_value = float(result.statistic), float(result.pvalue)
    if np.isnan(p_value):  # pragma: no cover - defensive: scipy gives NaN only without non-zero diffs
        p_value = 1.0
    return TestResult("wilcoxon", statistic, p_value, {**details, "method": method})
