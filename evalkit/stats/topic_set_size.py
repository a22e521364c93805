"""Topic set size design: how many topics the next edition needs (Sakai 2016), and the power the current one had.

From pilot data (a leaderboard's runs x topics scores) the variance of the
scores is estimated: the residual variance ``V_E`` of the two-way ANOVA
without replication (:func:`evalkit.stats.anova.two_way_anova`) for m
systems, or the variance of the per-topic differences of two runs. Then, for
a minimum detectable difference ``minD``, a power ``1 - beta`` and a
significance level ``alpha``, the number of topics n is the smallest one with

* paired t-test (two-sided; R's ``power.t.test(type = "paired")``): with
  ``nu = n - 1`` and ``lambda = sqrt(n) minD / sigma_d``,
  ``power(n) = P(t'(nu, lambda) > t(nu; alpha / 2))`` >= 1 - beta;
* one-way ANOVA over m systems (noncentral F): with ``phi_A = m - 1``,
  ``phi_E = m (n - 1)`` and, for the worst case of a range ``minD`` between
  the best and the worst system, ``lambda = n minD^2 / (2 sigma^2)``,
  ``power(n) = P(F'(phi_A, phi_E; lambda) > F(phi_A, phi_E; alpha))`` >= 1 - beta;
* a confidence interval of a paired difference no wider than ``delta`` in
  expectation: ``2 t(n - 1; alpha / 2) sigma_d / sqrt(n) * c(n)`` <= delta with
  ``c(n) = E[s] / sigma = sqrt(2 / (n - 1)) Gamma(n / 2) / Gamma((n - 1) / 2)``.

The achieved power of an edition for a pair of runs is ``power(n)`` of the
paired t-test at the pair's observed difference and variance (a post-hoc
figure: it says how often a difference of that size would be detected).

Reference: Sakai (2016), "Topic set size design", Information Retrieval
Journal 19(3):256-283, https://doi.org/10.1007/s10791-015-9273-z.
"""
from __future__ import annotations

import math

import numpy as np

from evalkit.core.errors import UsageError

MAX_TOPICS = 10_000_000  # R's power.t.test searches n in [2, 1e7]


def _check(alpha: float, power: float | None = None, difference: float | None = None, variance: float | None = None) -> None:
    if not 0 < alpha < 1:
        raise UsageError(f"alpha must lie strictly between 0 and 1 (got {alpha})")
    if power is not None and not 0 < power < 1:
        raise UsageError(f"power must lie strictly between 0 and 1 (got {power})")
    if difference is not None and not (math.isfinite(difference) and difference > 0):
        raise UsageError(f"the minimum difference must be a positive number (got {difference})")
    if variance is not None and not (math.isfinite(variance) and variance > 0):
        raise UsageError(f"the variance must be a positive number (got {variance}); scores that never vary need no topics")


def paired_variance(a: np.ndarray, b: np.ndarray) -> float:
    """The variance (n - 1 denominator) of the per-topic differences ``a - b``."""
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    if len(d) < 2:
        raise UsageError(f"a paired variance needs at least 2 topics (got {len(d)})")
    return float(np.var(d, ddof=1))


def residual_variance(matrix: np.ndarray) -> float:
    """``V_E``: the residual mean square of the two-way ANOVA without replication of a runs x topics matrix."""
    from evalkit.stats.anova import two_way_anova

    return two_way_anova(matrix).residual_variance


def paired_t_power(n: float, difference: float, variance: float, alpha: float = 0.05) -> float:
    """Power of the two-sided paired t-test with n topics (R's ``power.t.test(type = "paired", strict = FALSE)``)."""
    from scipy.special import nctdtr, stdtrit

    nu = n - 1
    critical = stdtrit(nu, 1 - alpha / 2)
    return float(1 - nctdtr(nu, math.sqrt(n) * difference / math.sqrt(variance), critical))


def anova_power(n: float, systems: int, difference: float, variance: float, alpha: float = 0.05) -> float:
    """Power of the one-way ANOVA over ``systems`` systems and n topics each, at the worst case of a range ``difference``."""
    from scipy.special import fdtri, ncfdtr

    df_a, df_e = systems - 1, systems * (n - 1)
    critical = fdtri(df_a, df_e, 1 - alpha)
    return float(1 - ncfdtr(df_a, df_e, n * difference ** 2 / (2 * variance), critical))


def expected_ci_width(n: int, variance: float, alpha: float = 0.05) -> float:
    """Expected width of the ``1 - alpha`` CI of a paired difference over n topics (see the module docstring)."""
    from scipy.special import stdtrit

    c = math.sqrt(2 / (n - 1)) * math.exp(math.lgamma(n / 2) - math.lgamma((n - 1) / 2))
    return float(2 * stdtrit(n - 1, 1 - alpha / 2) * math.sqrt(variance / n) * c)


def _smallest(meets, start: int = 2) -> int:
    """The smallest n >= start with ``meets(n)`` (monotone in n): doubling, then bisection."""
    if meets(start):
        return start
    low, high = start, start * 2
    while not meets(high):
        low, high = high, high * 2
        if high > MAX_TOPICS:
            raise UsageError(f"more than {MAX_TOPICS:,} topics would be needed; ask for a larger difference or a lower power")
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if meets(middle) else (middle, high)
    return high


def paired_t_topics(difference: float, variance: float, power: float = 0.8, alpha: float = 0.05) -> int:
    """Topics a paired t-test needs to detect ``difference`` with ``power`` at ``alpha`` (``variance``: of the differences)."""
    _check(alpha, power, difference, variance)
    return _smallest(lambda n: paired_t_power(n, difference, variance, alpha) >= power)


def anova_topics(systems: int, difference: float, variance: float, power: float = 0.8, alpha: float = 0.05) -> int:
    """Topics a one-way ANOVA over ``systems`` systems needs to detect a range ``difference`` (``variance``: V_E)."""
    _check(alpha, power, difference, variance)
    if systems < 2:
        raise UsageError(f"the ANOVA design needs at least 2 systems (got {systems})")
    return _smallest(lambda n: anova_power(n, systems, difference, variance, alpha) >= power)


def ci_topics(width: float, variance: float, alpha: float = 0.05) -> int:
    """Topics for an expected ``1 - alpha`` CI of a paired difference no wider than ``width``."""
    _check(alpha, None, width, variance)
    return _smallest(lambda n: expected_ci_width(n, variance, alpha) <= width)


def achieved_power(a: np.ndarray, b: np.ndarray, alpha: float = 0.05) -> float:
    """The paired t-test's power at the observed difference and variance of two runs' per-topic scores."""
    _check(alpha)
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    if len(d) < 2:
        return float("nan")
    difference, variance = abs(float(np.mean(d))), float(np.var(d, ddof=1))
    if variance == 0:
        return 1.0 if difference > 0 else float(alpha)
    if difference == 0:
        return float(alpha)
    return paired_t_power(len(d), difference, variance, alpha)
