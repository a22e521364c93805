"""Tail probabilities through scipy.special's ufuncs (the ones scipy.stats calls), without importing scipy.stats.

scipy.stats (and statsmodels, which imports pandas) are slow to import, and
every command would pay for them at start-up. The p-values of :mod:`evalkit.stats` call the same
special functions scipy.stats' distributions call, so they are bit-identical.
"""
from __future__ import annotations


def normal_two_sided(z: float) -> float:
    """``2 * P(Z >= |z|)``: scipy's ``_get_pvalue(z, _SimpleNormal(), "two-sided")`` = ``2 * ndtr(-|z|)``."""
    from scipy.special import ndtr

    return float(2 * ndtr(-abs(z)))


def student_t_two_sided(t: float, df: float) -> float:
    """``2 * P(T_df >= |t|)``: ``ttest_1samp``'s ``2 * stdtr(df, -|t|)``."""
    from scipy.special import stdtr

    return float(2 * stdtr(float(df), -abs(t)))


def chi2_sf(x: float, df: float) -> float:
    """``scipy.stats.chi2.sf(x, df)``: 1 at and below 0, else ``chdtrc(df, x)``."""
    from scipy.special import chdtrc

    return 1.0 if x <= 0 else float(chdtrc(float(df), x))


def binomial_half_cdf(k: float, n: int) -> float:
    """``scipy.stats.binom.cdf(k, n, 0.5)`` for ``0 <= k < n``: Boost's ``binom_cdf(floor(k), n, 0.5)`` clipped to [0, 1]."""
    import math

    try:
        from scipy.special._ufuncs import _binom_cdf  # what binom._cdf calls (scipy >= 1.12)
    except ImportError:  # pragma: no cover - older or reorganised scipy
        from scipy.stats import binom

        return float(binom.cdf(k, n, 0.5))
    return min(max(float(_binom_cdf(float(math.floor(k)), float(n), 0.5)), 0.0), 1.0)
