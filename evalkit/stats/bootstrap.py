"""Bootstrap confidence interval of the mean per-query difference (scipy.stats.bootstrap's draws and quantiles).

The percentile and basic intervals are computed with numpy alone, with the
same random draws and the same arithmetic as ``scipy.stats.bootstrap`` (so
the same interval to the last bit, tested); the BCa interval calls scipy.
:func:`bootstrap_cis` does several difference vectors of the same length at
once: scipy re-seeds per call, so vectors of one length share every resample
index and the indices are drawn once instead of once per comparison.
"""
from __future__ import annotations

import warnings
from typing import Callable, Sequence

import numpy as np

BATCH_VALUES = 4_000_000  # resampled values held at once (32 MB)
CI_METHODS = {
    "percentile": "percentile bootstrap",
    "basic": "basic (reverse percentile) bootstrap",
    "bca": "bias-corrected and accelerated bootstrap",
}


def _check(method: str, confidence: float) -> None:
    if method not in CI_METHODS:
        raise ValueError(f"method must be one of {', '.join(CI_METHODS)}")
    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1")


def _batch(resamples: int, n: int) -> int:
    return max(1, min(resamples, BATCH_VALUES // n))


def _scipy_ci(d: np.ndarray, resamples: int, confidence: float, method: str, seed: int) -> tuple[float, float]:
    from scipy import stats

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = stats.bootstrap(
            (d,),
            np.mean,
            n_resamples=resamples,
            confidence_level=confidence,
            method="BCa" if method == "bca" else method,
            rng=np.random.default_rng(seed),
            vectorized=True,
            batch=_batch(resamples, len(d)),  # bounded memory; the same draws as unbatched
        )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def percentile_interval(theta: np.ndarray, confidence: float) -> tuple[np.float64, np.float64]:
    """The ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles of ``theta`` (bootstrap replicates).

    ``scipy.stats.quantile(theta, [alpha, 1 - alpha])`` (method ``linear``), scipy's operations.
    """
    alpha = np.asarray((1 - confidence) / 2, dtype=np.float64)
    p = np.stack([alpha, 1 - alpha])
    y = np.sort(theta)
    n = np.asarray(y.shape[-1], dtype=np.float64)
    jg = p * n + (1 - p)
    j = jg // 1 - 1
    jp1 = jg // 1
    g = jg % 1
    g[j < 0] = 0
    j = np.clip(j, 0.0, n - 1)
    jp1 = np.clip(jp1, 0.0, n - 1)
    res = (1 - g) * y[j.astype(np.int64)] + g * y[jp1.astype(np.int64)]
    return res[0], res[1]


def bootstrap_cis(
    diffs: Sequence[np.ndarray], resamples: int = 10_000, confidence: float = 0.95, method: str = "percentile", seed: int = 42
) -> list[tuple[float, float]]:
    """:func:`bootstrap_ci` of every vector in ``diffs``; vectors of one length share their resample indices."""
    _check(method, confidence)
    out: list[tuple[float, float] | None] = [None] * len(diffs)
    by_length: dict[int, list[int]] = {}
    for i, d in enumerate(diffs):
        d = np.asarray(d, dtype=np.float64)
        if len(d) == 0:
            out[i] = (float("nan"), float("nan"))
        elif np.all(d == d[0]):
            out[i] = (float(d[0]), float(d[0]))
        elif method == "bca":
            out[i] = _scipy_ci(d, resamples, confidence, method, seed)
        else:
            by_length.setdefault(len(d), []).append(i)
    for n, members in by_length.items():
        samples = [np.asarray(diffs[i], dtype=np.float64) for i in members]
        for i, ci in zip(members, _percentile_cis(samples, n, resamples, confidence, method, seed)):
            out[i] = ci
    return out  # type: ignore[return-value]


def _percentile_cis(
    samples: list[np.ndarray], n: int, resamples: int, confidence: float, method: str, seed: int
) -> list[tuple[float, float]]:
    """scipy.stats.bootstrap's percentile / basic interval for each sample of length ``n``, one set of draws."""
    rng = np.random.default_rng(seed)
    size = _batch(resamples, n)
    theta: list[list[np.ndarray]] = [[] for _ in samples]  # per sample: the resample means of each batch
    for start in range(0, resamples, size):
        index = rng.integers(0, n, (min(size, resamples - start), n))  # scipy's rng_integers(rng, 0, n, (b, n))
        for k, sample in enumerate(samples):
            theta[k].append(np.mean(sample[..., index], axis=-1))
    cis = []
    for sample, parts in zip(samples, theta):
        low, high = percentile_interval(np.concatenate(parts, axis=-1), confidence)
        if method == "basic":
            estimate = np.mean(sample, axis=-1)
            low, high = 2 * estimate - high, 2 * estimate - low
        cis.append((float(low), float(high)))
    return cis


def bootstrap_means(matrix: np.ndarray, resamples: int = 10_000, seed: int = 42,
                    advance: Callable[[int], object] | None = None) -> np.ndarray:
    """Each row's mean over ``resamples`` resamples of the columns (runs x queries in, resamples x runs out);
    ``advance(n)`` is told of every ``n`` resamples done (a progress bar's ``update``).

    The resamples are the ones :func:`bootstrap_cis` draws for vectors of the
    same length and seed (``rng.integers(0, n, (batch, n))``, scipy's draws),
    so a pair's replicates ``means[:, i] - means[:, j]`` resample the same
    queries as the bootstrap CI of that pair's differences; each resample's
    means are one product of its query counts with the matrix.
    """
    matrix = np.asarray(matrix, dtype=np.float64)
    k, n = matrix.shape
    out = np.empty((resamples, k))
    if n == 0:
        out[:] = np.nan
        return out
    rng = np.random.default_rng(seed)
    size = _batch(resamples, n)
    for start in range(0, resamples, size):
        rows = min(size, resamples - start)
        index = rng.integers(0, n, (rows, n))
        cells = (index + (np.arange(rows) * n)[:, None]).ravel()
        counts = np.bincount(cells, minlength=rows * n).reshape(rows, n).astype(np.float64)
        out[start:start + rows] = counts @ matrix.T / n
        if advance is not None:
            advance(rows)
    return out


def bootstrap_ci(
    diffs: np.ndarray, resamples: int = 10_000, confidence: float = 0.95, method: str = "percentile", seed: int = 42
) -> tuple[float, float]:
    """Two-sided ``confidence`` interval of ``mean(d)`` by resampling queries with replacement.

    The interval of ``scipy.stats.bootstrap((d,), np.mean, method=method,
    rng=numpy.random.default_rng(seed))``, so it is reproducible from the
    seed. A constant ``d`` (e.g. identical runs) gives the degenerate
    interval ``[d, d]``. Reference: Efron & Tibshirani (1993), An
    Introduction to the Bootstrap; Sakai (2006), SIGIR, for IR use.
    """
    return bootstrap_cis([diffs], resamples, confidence, method, seed)[0]
