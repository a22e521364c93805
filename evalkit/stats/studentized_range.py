"""The studentized range distribution as R computes it (``ptukey`` / ``qtukey``), vectorised with numpy.

The studentized range of ``k`` means on ``df`` degrees of freedom is
``Q = (max_i Y_i - min_i Y_i) / S`` with ``Y_i`` iid N(0, 1) and ``df S^2 ~ chi^2_df``.
Its distribution function is the double integral

    P(Q < q) = int_0^inf  W(q s)  f_S(s) ds,      W(w) = P(range of k normals < w)
    W(w) = (2 Phi(w/2) - 1)^k + 2 k int_{w/2}^{inf} phi(x) (Phi(x) - Phi(x - w))^(k-1) dx

evaluated as R's ``ptukey`` evaluates it (algorithm AS 190, Lund & Lund 1983,
Applied Statistics 32:204-210, with the Gauss-Legendre scheme of Copenhaver &
Holland 1988, J. Statist. Comput. Simul. 30:1-15): ``W`` by 12-point
Gauss-Legendre on two or three sub-intervals of ``[w/2, 8]``; the outer
integral, in ``u = 2 s^2``, by 16-point Gauss-Legendre on intervals of length
``2 * ulen`` (ulen 1, 1/2, 1/4 or 1/8 as df passes 100, 800, 5000), stopped at
the first interval past ``u = 2`` that adds at most 1e-14; **for df > 25,000 R
uses the infinite-df form ``W(q)``** and so does this module. ``qtukey`` is R's
secant search from the AS 190 starting value, stopped when two iterates are
within 1e-4 (its answer is the last iterate).

Why not ``scipy.stats.studentized_range``: it integrates to full precision,
so it is the better number, but it is not R's: it differs from ``ptukey`` by up
to 1.6e-4 (df > 25,000, where R switches to the infinite-df form, and df = 2,
where AS 190 is coarse), its quantile differs from ``qtukey`` by 5e-4 at
df > 25,000 and by up to 0.13 at df = 2, and it is much slower per value (an
adaptive integration per call, a root search per quantile). The
figures of ``TukeyHSD`` are R's, so these are. Tested against R to 1e-9
(tests/oracles/test_allpairs_r.py).
"""
from __future__ import annotations

import math

import numpy as np

LARGE_DF = 25_000.0  # above: the infinite-df form (R's dlarg)
CELLS_PER_BLOCK = 2_000_000  # inner-integral points (q x outer nodes x 12) evaluated at once (16 MB a temporary)
_LEG12 = np.polynomial.legendre.leggauss(12)  # nodes ascending, weights
_LEG16 = np.polynomial.legendre.leggauss(16)
_SQRT_2PI = math.sqrt(2 * math.pi)


def range_cdf(w: np.ndarray, k: int) -> np.ndarray:
    """``W(w)``: P(range of ``k`` iid standard normals < w), as R's ``wprob`` (one range, ``rr = 1``)."""
    from scipy.special import ndtr

    w = np.atleast_1d(np.asarray(w, dtype=np.float64))
    out = np.ones_like(w)
    half = w * 0.5
    todo = half < 8.0  # beyond: 1
    if not np.any(todo):
        return out
    w, half = w[todo], half[todo]
    cc, cc1 = float(k), float(k - 1)
    inside = 2.0 * ndtr(half) - 1.0  # all k values within [-w/2, w/2]
    inside = np.where(inside >= math.exp(-50.0 / cc), inside ** cc, 0.0)
    steps = np.where(w > 3.0, 2, 3)  # fewer sub-intervals where the second term is small
    step = (8.0 - half) / steps
    lower, upper = half.copy(), half + step
    nodes, weights = _LEG12
    tail = np.zeros_like(w)
    for i in range(1, 4):
        active = i <= steps
        a = 0.5 * (upper + lower)
        b = 0.5 * (upper - lower)
        x = a[:, None] + b[:, None] * nodes[None, :]
        squared = x * x
        # R's Phi(x) - Phi(x - w), as 2 Phi halved; terms with x^2 > 60 or a negligible difference are left out
        spread = (2.0 * ndtr(x)) * 0.5 - (2.0 * ndtr(x - w[:, None])) * 0.5
        keep = (squared <= 60.0) & (spread >= math.exp(-30.0 / cc1))
        with np.errstate(invalid="ignore", under="ignore"):
            terms = np.where(keep, weights[None, :] * np.exp(-(0.5 * squared)) * np.where(keep, spread, 1.0) ** cc1, 0.0)
        part = terms.sum(axis=1) * (((2.0 * b) * cc) / _SQRT_2PI)
        tail = tail + np.where(active, part, 0.0)
        lower, upper = upper, upper + step
    total = inside + tail
    total = np.where(total <= math.exp(-30.0), 0.0, np.minimum(total, 1.0))
    out[todo] = total
    return out


def _outer_grid(df: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Nodes ``u`` (intervals x 16), their log weights (``-inf`` where R skips them), interval ends, ``ulen``."""
    ulen = 1.0 if df <= 100 else 0.5 if df <= 800 else 0.25 if df <= 5000 else 0.125
    half_df = df * 0.5
    log_const = half_df * math.log(df) - df * math.log(2.0) - math.lgamma(half_df) + math.log(ulen)
    nodes, weights = _LEG16
    centres = (2 * np.arange(1, 51) - 1) * ulen
    u = centres[:, None] + nodes[None, :] * ulen
    log_density = log_const + (half_df - 1.0) * np.log(u) - u * (df * 0.25)
    log_weight = np.where(log_density >= -30.0, log_density + np.log(weights)[None, :], -np.inf)
    return u, log_weight, np.arange(1, 51) * ulen, ulen


def ptukey_upper(q: np.ndarray | float, k: int, df: float) -> np.ndarray:
    """``P(Q >= q)`` for ``k`` means on ``df`` degrees of freedom: R's ``ptukey(q, k, df, lower.tail = FALSE)``.

    ``q <= 0`` gives 1, ``q = inf`` gives 0; ``df`` must be at least 2 and ``k`` at least 2.
    """
    return (0.5 - ptukey_lower(q, k, df)) + 0.5


def ptukey_lower(q: np.ndarray | float, k: int, df: float) -> np.ndarray:
    """``P(Q < q)``: R's ``ptukey(q, k, df)``."""
    if k < 2 or not df >= 2:
        raise ValueError(f"the studentized range needs k >= 2 means and df >= 2 (got k={k}, df={df})")
    q = np.atleast_1d(np.asarray(q, dtype=np.float64))
    lower = np.zeros_like(q)
    finite = (q > 0) & np.isfinite(q)
    lower[np.isposinf(q)] = 1.0
    lower[np.isnan(q)] = np.nan
    if np.any(finite):
        values = q[finite]
        out = np.empty_like(values)
        step = max(1, CELLS_PER_BLOCK // (len(_LEG12[0]) * _nodes_used(float(df))))  # bounded work whatever len(q)
        for start in range(0, len(values), step):
            out[start:start + step] = _integral(values[start:start + step], k, float(df))
        lower[finite] = out
    return lower


def _nodes_used(df: float) -> int:
    """Outer nodes of the integral per ``q`` (1: the infinite-df form)."""
    return 1 if df > LARGE_DF else max(1, int(np.isfinite(_outer_grid(df)[1]).sum()))


def _integral(q: np.ndarray, k: int, df: float) -> np.ndarray:
    if df > LARGE_DF:
        return range_cdf(q, k)
    u, log_weight, ends, _ = _outer_grid(df)
    used = np.isfinite(log_weight)
    sums = np.zeros((len(q), u.shape[0]))  # each interval's part of the integral, per q
    rows, cols = np.nonzero(used)
    if len(rows):
        scale = np.sqrt(u[rows, cols] * 0.5)
        values = range_cdf((q[:, None] * scale[None, :]).ravel(), k).reshape(len(q), len(rows))
        contributions = values * np.exp(log_weight[rows, cols])[None, :]
        np.add.at(sums.T, rows, contributions.T)
    # R stops at the first interval with i * ulen >= 1 whose part is <= 1e-14, and does not add that part
    stop = (ends[None, :] >= 1.0) & (sums <= 1e-14)
    first = np.where(stop.any(axis=1), stop.argmax(axis=1), sums.shape[1])
    keep = np.arange(sums.shape[1])[None, :] < first[:, None]
    return np.minimum(np.where(keep, sums, 0.0).sum(axis=1), 1.0)


def _qtukey_start(p: float, k: int, df: float) -> float:
    """AS 190's starting value (Odeh & Evans' normal quantile, corrected for k and df)."""
    ps = 0.5 - 0.5 * p
    yi = math.sqrt(math.log(1.0 / (ps * ps)))
    t = yi + ((((yi * -0.453642210148e-04 - 0.204231210125) * yi - 0.342242088547) * yi - 1.0) * yi + 0.322232421088) / (
        (((yi * 0.38560700634e-02 + 0.103537752850) * yi + 0.531103462366) * yi + 0.588581570495) * yi + 0.993484626060e-01)
    if df < 120.0:
        t += (t * t * t + t) / df / 4.0
    q = 0.8832 - 0.2368 * t
    if df < 120.0:
        q += -1.214 / df + 1.208 * t / df
    return t * (q * math.log(k - 1.0) + 1.4142)


def qtukey(p: float, k: int, df: float) -> float:
    """The ``p`` quantile of the studentized range: R's ``qtukey(p, k, df)`` (secant search, AS 190).

    ``p = 0`` gives 0, ``p = 1`` infinity. The search stops when two iterates
    are within 1e-4 and returns the last one, as R does (NaN where R's search
    meets two equal probabilities: p = 0.5 with 50 or more means).
    """
    if not 0 <= p <= 1:
        raise ValueError(f"p must lie in [0, 1] (got {p})")
    if k < 2 or not df >= 2:
        raise ValueError(f"the studentized range needs k >= 2 means and df >= 2 (got k={k}, df={df})")
    if p == 0:
        return 0.0
    if p == 1:
        return math.inf

    def below(x: np.float64) -> np.float64:
        return np.float64(ptukey_lower(x, k, df)[0])

    # numpy scalars: a secant step through two equal values gives inf or NaN as in C (R then returns NaN), not an error
    p = np.float64(p)
    x0 = np.float64(_qtukey_start(float(p), k, df))
    value0 = below(x0) - p
    x1 = max(np.float64(0.0), x0 - 1.0) if value0 > 0.0 else x0 + 1.0
    value1 = below(x1) - p
    answer = x1
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for _ in range(1, 50):
            answer = x1 - ((value1 * (x1 - x0)) / (value1 - value0))
            value0 = value1
            x0 = x1
            if answer < 0.0:
                answer = np.float64(0.0)
            value1 = below(answer) - p
            x1 = answer
            if abs(x1 - x0) < 0.0001:
                return float(answer)
    return float(answer)
