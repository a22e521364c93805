"""Bootstrap confidence interval of the mean per-query difference (scipy.stats.bootstrap)."""
from __future__ import annotations

import warnings

import numpy as np

BATCH_VALUES = 4_000_000  # resampled values held at once (32 MB)
CI_METHODS = {
    "percentile": "percentile bootstrap",
    "basic": "basic (reverse percentile) bootstrap",
    "bca": "bias-corrected and accelerated bootstrap",
}


def bootstrap_ci(
    diffs: np.ndarray, resamples: int = 10_000, confidence: float = 0.95, method: str = "percentile", seed: int = 42
) -> tuple[float, float]:
    """Two-sided ``confidence`` interval of ``mean(d)`` by resampling queries with replacement.

    Calls ``scipy.stats.bootstrap((d,), np.mean, method=method,
    rng=numpy.random.default_rng(seed))``, so the interval is reproducible
    from the seed. A constant ``d`` (e.g. identical runs) gives the
    degenerate interval ``[d, d]``. Reference: Efron & Tibshirani (1993),
    An Introduction to the Bootstrap; Sakai (2006), SIGIR, for IR use.
    """
    from scipy import stats

    if method not in CI_METHODS:
        raise ValueError(f"method must be one of {', '.join(CI_METHODS)}")
    if not 0 < confidence < 1:
        raise ValueError("confidence must be between 0 and 1")
    d = np.asarray(diffs, dtype=np.float64)
    if len(d) == 0:
        return float("nan"), float("nan")
    if np.all(d == d[0]):
        return float(d[0]), float(d[0])
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
            batch=max(1, min(resamples, BATCH_VALUES // len(d))),  # bounded memory; the same draws as unbatched
        )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)
