"""Two-sided Fisher randomization (sign-flip permutation) test for paired scores.

:func:`randomization_tests` runs several comparisons on one stream of random
signs: every comparison re-seeds the same generator, and numpy draws int8
values one byte at a time from 32-bit words, so the signs of a comparison with
``m`` non-zero differences are the first ``B * m`` values of one flat stream
(whole batches use ``1000 * m`` bytes, a multiple of 4, so nothing is
discarded between calls). The stream is drawn once for the longest ``m`` and
each comparison reads its prefix: the same signs, the same matrix products
batch by batch, the same p-values as one :func:`randomization_test` each.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from evalkit.stats import TestResult

RELATIVE_TOLERANCE = 1e-9  # |permuted sum| within this of |observed| counts as "as extreme"
SHARED_STREAM_BYTES = 64_000_000  # above this, each comparison draws its own signs (same values, bounded memory)
CELLS_PER_BLOCK = 2_000_000  # pairs x queries of differences held at once by randomization_all_pairs (16 MB)


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
    return randomization_tests([(run, baseline)], permutations, seed, batch)[0]


def randomization_tests(
    pairs: Sequence[tuple[np.ndarray, np.ndarray]], permutations: int = 10_000, seed: int = 42, batch: int = 1_000
) -> list[TestResult]:
    """:func:`randomization_test` of every ``(run, baseline)`` pair, the random signs drawn once for all."""
    if permutations < 1:
        raise ValueError("permutations must be positive")
    results: list[TestResult | None] = [None] * len(pairs)
    monte_carlo = []
    for i, (run, baseline) in enumerate(pairs):
        diffs = np.asarray(run, dtype=np.float64) - np.asarray(baseline, dtype=np.float64)
        nonzero = diffs[diffs != 0]
        m = len(nonzero)
        observed_mean = float(diffs.mean()) if len(diffs) else 0.0
        details = {"permutations": permutations, "seed": seed, "n": len(diffs), "n_nonzero": m}
        if m == 0:
            results[i] = TestResult("randomization", observed_mean, 1.0, {**details, "method": "none (all differences are zero)"})
            continue
        observed = abs(float(nonzero.sum()))
        threshold = observed - RELATIVE_TOLERANCE * observed
        if m < 63 and 2**m <= permutations:
            sums = _sign_matrix_exact(m) @ nonzero
            hits = int(np.count_nonzero(np.abs(sums) >= threshold))
            method = f"exact ({2**m} sign assignments)"
            results[i] = TestResult("randomization", observed_mean, hits / 2**m, {**details, "method": method})
            continue
        monte_carlo.append((i, nonzero, threshold, observed_mean, details))
    longest = max((len(item[1]) for item in monte_carlo), default=0)
    shared = None
    if len(monte_carlo) > 1 and batch % 4 == 0 and permutations * longest <= SHARED_STREAM_BYTES:
        shared = np.random.default_rng(seed).integers(0, 2, size=permutations * longest, dtype=np.int8)
    for i, nonzero, threshold, observed_mean, details in monte_carlo:
        hits = _monte_carlo_hits(nonzero, threshold, permutations, seed, batch, shared)
        p_value = (1 + hits) / (1 + permutations)
        method = f"Monte Carlo ({permutations} sign assignments)"
        results[i] = TestResult("randomization", observed_mean, p_value, {**details, "method": method})
    return results  # type: ignore[return-value]


def _monte_carlo_hits(
    nonzero: np.ndarray, threshold: float, permutations: int, seed: int, batch: int, shared: np.ndarray | None
) -> int:
    """Random sign assignments (rows of ``m`` values, in batches) whose ``|sum|`` reaches the threshold."""
    m = len(nonzero)
    rng = np.random.default_rng(seed) if shared is None else None
    hits = 0
    done = 0
    while done < permutations:
        size = min(batch, permutations - done)
        if rng is not None:
            bits = rng.integers(0, 2, size=(size, m), dtype=np.int8)
        else:
            assert shared is not None  # rng is None only when the shared stream is given
            bits = shared[done * m:(done + size) * m].reshape(size, m)
        signs = bits * 2 - 1
        sums = signs.astype(np.float64) @ nonzero
        hits += int(np.count_nonzero(np.abs(sums) >= threshold))
        done += size
    return hits


def randomization_tests_query_signs(diffs: np.ndarray, permutations: int = 10_000, seed: int = 42, batch: int = 500) -> list[TestResult]:
    """:func:`randomization_test` of many difference vectors over the same queries (rows of ``diffs``), one sign per query.

    For the all-pairs comparison of k runs (k (k - 1) / 2 vectors): each
    replicate draws one random sign per query (``default_rng(seed)``, int8
    bits) and flips every pair's difference on that query with it, so all
    pairs' permuted sums are one matrix product per batch. Each pair's
    p-value is a Monte Carlo randomization test as :func:`randomization_test`
    computes it (zeros flip to zero; ``p = (1 + hits) / (1 + B)``; exact
    enumeration where ``2^nonzero <= B``), with other draws than a
    comparison's own: they agree within Monte Carlo error, not to the bit.
    """
    if permutations < 1:
        raise ValueError("permutations must be positive")
    diffs = np.asarray(diffs, dtype=np.float64)
    pairs, n = diffs.shape
    results: list[TestResult | None] = [None] * pairs
    sampled = []
    for i, d in enumerate(diffs):
        m = int(np.count_nonzero(d))
        if m == 0 or (m < 63 and 2**m <= permutations):
            results[i] = randomization_test(d, np.zeros(n), permutations, seed)
        else:
            sampled.append(i)
    if sampled:
        chosen = diffs[sampled].T  # queries x pairs
        observed = np.abs(chosen.sum(axis=0))
        threshold = observed - RELATIVE_TOLERANCE * observed
        rng = np.random.default_rng(seed)
        hits = np.zeros(len(sampled), dtype=np.int64)
        for start in range(0, permutations, batch):
            size = min(batch, permutations - start)
            signs = rng.integers(0, 2, size=(size, n), dtype=np.int8) * 2 - 1
            hits += np.count_nonzero(np.abs(signs.astype(np.float64) @ chosen) >= threshold, axis=0)
        for j, i in enumerate(sampled):
            details = {"permutations": permutations, "seed": seed, "n": n, "n_nonzero": int(np.count_nonzero(diffs[i])),
                       "method": f"Monte Carlo ({permutations} sign assignments, one sign per query shared by all pairs)"}
            results[i] = TestResult("randomization", float(diffs[i].mean()), (1 + int(hits[j])) / (1 + permutations), details)
    return results  # type: ignore[return-value]


def randomization_all_pairs(matrix: np.ndarray, first: np.ndarray, second: np.ndarray, permutations: int = 10_000,
                            seed: int = 42) -> list[TestResult]:
    """:func:`randomization_tests_query_signs` of ``matrix[first] - matrix[second]``, a block of pairs at a time.

    Every block re-seeds the same stream, so each pair gets the signs it gets
    in one call over all pairs; the differences held at once are bounded
    (``CELLS_PER_BLOCK``) whatever the number of runs.
    """
    matrix = np.asarray(matrix, dtype=np.float64)
    step = max(1, CELLS_PER_BLOCK // max(matrix.shape[1], 1))
    results: list[TestResult] = []
    for start in range(0, len(first), step):
        f, s = first[start:start + step], second[start:start + step]
        results += randomization_tests_query_signs(matrix[f] - matrix[s], permutations, seed)
    return results
