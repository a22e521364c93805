"""Two-sided Fisher randomization (sign-flip permutation) test for paired scores."""
from __future__ import annotations

import numpy as np

from evalkit.stats import TestResult

RELATIVE_TOLERANCE = 1e-9  # |permuted sum| within this of |observed| counts as "as extreme"


def _sign_matrix_exact(m: int) -> np.ndarray:
    """All 2**m sign vectors (rows), the identity (all +1) first."""
    codes = np.arange(2**m, dtype=np.int64)[:, None]
    bits = (codes >> np.arange(m, dtype=np.int64)[None, :]) & 1
    return (1 - 2 * bits).astype(np.float64)


def randomization_test(
    run: np.ndarray, baseline: np.ndarray, permutations: int = 10_000, seed: int = 42, batch: int = 1_000
) -> TestResult:
    """Paired randomization test of the mean difference ``mean(d)``, ``d = run - baseline``.

    Under the null hypothesis the labels "run" and "baseline" of each query are
    exchangeable, i.e. each ``d_i`` is equally likely to have either sign. The
    p-value is the share of sign assignments whose ``|mean(s * d)|`` is at least
    the observed ``|mean(d)|``:

    * exact, over all ``2**m`` assignments of the ``m`` non-zero differences,
      when ``2**m <= permutations`` (zeros do not change the statistic);
    * otherwise Monte Carlo with ``permutations`` random assignments drawn
      from ``numpy.random.default_rng(seed)``, ``p = (1 + b) / (1 + B)``
      (Phipson & Smyth 2010), so p is never 0.

    All differences zero gives ``p = 1``. Reference: Fisher (1935); Smucker,
    Allan & Carterette (2007), CIKM.
    """
    if permutations < 1:
        raise ValueError("permutations must be positive")
    diffs = np.asarray(run, dtype=np.float64) - np.asarray(baseline, dtype=np.float64)
    nonzero = diffs[diffs != 0]
    m = len(nonzero)
    observed_mean = float(diffs.mean()) if len(diffs) else 0.0
    details = {"permutations": permutations, "seed": seed, "n": len(diffs), "n_nonzero": m}
    if m == 0:
        return TestResult("randomization", observed_mean, 1.0, {**details, "method": "none (all differences are zero)"})
    observed = abs(float(nonzero.sum()))
    threshold = observed - RELATIVE_TOLERANCE * observed
    if m < 63 and 2**m <= permutations:
        sums = _sign_matrix_exact(m) @ nonzero
        hits = int(np.count_nonzero(np.abs(sums) >= threshold))
        p_value = hits / 2**m
        return TestResult("randomization", observed_mean, p_value, {**details, "method": f"exact ({2**m} sign assignments)"})
    rng = np.random.default_rng(seed)
    hits = 0
    done = 0
    while done < permutations:
        size = min(batch, permutations - done)
        signs = rng.integers(0, 2, size=(size, m), dtype=np.int8) * 2 - 1
        sums = signs.astype(np.float64) @ nonzero
        hits += int(np.count_nonzero(np.abs(sums) >= threshold))
        done += size
    p_value = (1 + hits) / (1 + permutations)
    return TestResult("randomization", observed_mean, p_value, {**details, "method": f"Monte Carlo ({permutations} sign assignments)"})
