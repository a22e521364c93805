"""Sakai's randomised Tukey HSD: all pairs of k runs, the range of permuted run means as the null distribution.

Under the null hypothesis that the k runs are equally effective, the k scores
of each topic (query) could have come from any of the runs: every topic's row
of the topic-by-run matrix is permuted across the runs, independently, ``B``
times. Each replicate gives k run means; the statistic is their range
``max - min``. A pair (i, j) with observed difference ``d_ij`` gets

    p_adjusted = (1 + #{b : range_b >= |d_ij|}) / (1 + B)

(family-wise over all pairs, as Tukey's HSD: the range bounds every pair at
once), its raw p the same count over ``|mean_i^b - mean_j^b|`` instead of the
range, and the simultaneous interval ``d_ij +- c`` where ``c`` is the critical
range: the (m+1)-th largest replicate range, m the most replicates a
significant pair may reach (``(1 + m) / (1 + B) < alpha``), so the interval
excludes 0 exactly when ``p_adjusted < alpha``. ``(1 + count) / (1 + B)``
(Phipson & Smyth 2010) where Sakai counts ``count / B``; the two differ by
less than ``1 / B``. References: Carterette (2012), "Multiple testing in
statistical analysis of systems-based information retrieval experiments",
ACM TOIS 30(1); Sakai (2018), Laboratory Experiments in Information
Retrieval, Springer, sect. 4.5.2.

The random stream (numpy's PCG64 of ``default_rng(seed)``, raw 64-bit
draws), fixed so that the compiled kernel and the numpy twin give the same
replicates to the last bit: topics whose k scores are all equal are left out
(they add the same to every run); for each replicate, for each remaining topic
in order, a Fisher-Yates shuffle of its row (for i = k-1 .. 1, swap positions
i and j, j uniform in 0..i) takes its digits j from one 64-bit draw per group
of radixes (k, k-1, ..., 2 grouped greedily while their product stays below
2^62): a group's digits are the mixed-radix digits of ``floor(u P / 2^64)``,
read by repeated ``(hi, lo) = u * radix``; a draw with ``(u * P) mod 2^64``
below ``2^64 mod P`` is rejected (Lemire 2019, ACM TOMACS 29(1)), and a topic
with a rejected draw takes the next draws for all its groups, so every
permutation is exactly uniform. Each run's sum accumulates topic by topic.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from evalkit.native import kernels
from evalkit.stats import PairTable

GROUP_LIMIT = 1 << 62  # the product of a group of radixes stays below this (a draw is rejected with probability < 1/4)
CELLS_PER_BATCH = 2_000_000  # topic scores permuted at once by the numpy twin (16 MB)
CELLS_PER_BLOCK = 2_000_000  # replicates x pairs compared at once by pair_counts (16 MB of float64, whatever k)
RELATIVE_TOLERANCE = 1e-9  # as the randomization test: a replicate within this of the observed value counts as reaching it


@dataclass(frozen=True)
class RandomisedTukey:
    """Replicate sums of the k runs and what the pairs need from them."""

    sums: np.ndarray  # (B, k) run sums over the permuted (non-constant) topics
    observed: np.ndarray  # (k,) observed sums over the same topics, accumulated in the same order
    n_topics: int  # every topic, constant ones included (means divide by it)
    n_permuted: int  # topics that were permuted

    @property
    def ranges(self) -> np.ndarray:
        return self.sums.max(axis=1) - self.sums.min(axis=1)


def radix_groups(k: int, limit: int = GROUP_LIMIT) -> list[list[int]]:
    """The radixes k, k-1, ..., 2 of a Fisher-Yates shuffle, grouped greedily while their product stays below ``limit``."""
    groups: list[list[int]] = []
    product = limit
    for radix in range(k, 1, -1):
        if product * radix >= limit:
            groups.append([])
            product = 1
        groups[-1].append(radix)
        product *= radix
    return groups


def permute(matrix: np.ndarray, permutations: int = 10_000, seed: int = 42, limit: int = GROUP_LIMIT,
            advance: Callable[[int], object] | None = None) -> RandomisedTukey:
    """Replicate sums of the runs (rows of ``matrix``, runs x topics) under ``permutations`` topic-wise shuffles;
    ``advance(n)`` is told of every ``n`` replicates done (a progress bar's ``update``)."""
    matrix = np.asarray(matrix, dtype=np.float64)
    k, n = matrix.shape
    by_topic = np.ascontiguousarray(matrix.T)
    varying = by_topic[np.any(by_topic != by_topic[:, :1], axis=1)]
    observed = np.zeros(k)
    for row in varying:  # topic by topic, as the replicates accumulate
        observed += row
    groups = radix_groups(k, limit)
    products = np.array([int(np.prod(g, dtype=object)) for g in groups], dtype=np.uint64)
    thresholds = np.array([(1 << 64) % int(p) for p in products], dtype=np.uint64)
    sizes = np.array([len(g) for g in groups], dtype=np.int64)
    bit_generator = np.random.default_rng(seed).bit_generator
    sums = np.zeros((permutations, k))
    if len(varying) and k > 1:
        # a batch of replicates at a time: the replicates draw from the stream in order, so batches change nothing
        batch = max(1, CELLS_PER_BATCH // (len(varying) * k))
        for start in range(0, permutations, batch):
            size = min(batch, permutations - start)
            compiled = kernels.permuted_sums(varying, bit_generator, products, thresholds, sizes, size)
            if compiled is not None:
                sums[start:start + size] = compiled
            else:
                _permuted_sums_numpy(varying, groups, products, thresholds, bit_generator, sums[start:start + size])
            if advance is not None:
                advance(size)
    elif len(varying):
        sums[:] = observed
    return RandomisedTukey(sums, observed, n, len(varying))


def _mul_hi_lo(u: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """High and low 64-bit words of ``u * m`` (uint64 ``u``, ``m < 2^31``), in uint64 arithmetic."""
    low_half = (u & np.uint64(0xFFFFFFFF)) * np.uint64(m)
    carry = (u >> np.uint64(32)) * np.uint64(m) + (low_half >> np.uint64(32))
    return carry >> np.uint64(32), u * np.uint64(m)


def _accepted_blocks(bit_generator, rows: int, products: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """``rows`` blocks of one draw per group, in stream order, every block whose draws all pass Lemire's test."""
    width = len(products)
    parts, have = [], 0
    while have < rows:
        block = bit_generator.random_raw((rows - have) * width).reshape(-1, width)
        good = block[np.all(block * products[None, :] >= thresholds[None, :], axis=1)]
        parts.append(good)
        have += len(good)
    return np.concatenate(parts) if len(parts) > 1 else parts[0]


def _permuted_sums_numpy(varying: np.ndarray, groups: list[list[int]], products: np.ndarray, thresholds: np.ndarray,
                         bit_generator, sums: np.ndarray) -> None:
    """The numpy twin of the compiled kernel (same draws, same shuffles, same order of additions).

    A batch of replicates is laid out topic-major (topics x replicates x runs), so that each topic's
    permuted rows are one contiguous block added to the replicates' sums in topic order, as the kernel adds.
    """
    n, k = varying.shape
    batch = max(1, CELLS_PER_BATCH // (n * k))
    for start in range(0, len(sums), batch):
        size = min(batch, len(sums) - start)
        rows = size * n
        blocks = _accepted_blocks(bit_generator, rows, products, thresholds)  # replicate-major, as drawn
        blocks = blocks.reshape(size, n, -1).transpose(1, 0, 2).reshape(rows, -1)  # topic-major, as laid out
        shuffled = np.repeat(varying, size, axis=0)  # row t * size + b: topic t's scores for replicate b
        flat = shuffled.reshape(-1)
        base = np.arange(rows, dtype=np.int64) * k
        for g, group in enumerate(groups):
            u = blocks[:, g].copy()
            for radix in group:
                j, u = _mul_hi_lo(u, radix)
                i = radix - 1
                where = base + j.astype(np.int64)
                taken = flat[where]
                flat[where] = shuffled[:, i]
                shuffled[:, i] = taken
        cube = shuffled.reshape(n, size, k)
        total = np.zeros((size, k))
        for t in range(n):  # topic by topic, as the kernel adds
            total += cube[t]
        sums[start:start + size] = total


def pair_counts(result: RandomisedTukey, tolerance: float = RELATIVE_TOLERANCE) -> tuple[np.ndarray, np.ndarray]:
    """For every pair (i, j), i < j (row-major): replicates whose range, and whose own |difference|, reach ``|d_ij|``."""
    k = len(result.observed)
    first, second = np.triu_indices(k, 1)
    observed = np.abs(result.observed[first] - result.observed[second])
    threshold = observed - tolerance * observed
    ranges = np.sort(result.ranges)
    over_range = len(ranges) - np.searchsorted(ranges, threshold, side="left")
    by_run = np.ascontiguousarray(result.sums.T)  # k x B: a run's replicates are one row
    over_own = np.empty(len(first), dtype=np.int64)
    step = max(1, CELLS_PER_BLOCK // max(by_run.shape[1], 1))  # pairs a block: the work is bounded whatever k
    for start in range(0, len(first), step):
        stop = min(start + step, len(first))
        own = np.abs(by_run[first[start:stop]] - by_run[second[start:stop]])
        over_own[start:stop] = np.count_nonzero(own >= threshold[start:stop, None], axis=1)
    return over_range, over_own


def critical_range(result: RandomisedTukey, alpha: float) -> float:
    """The sum-scale critical range ``c``: ``|d| > c`` exactly when ``(1 + #{range >= |d|}) / (1 + B) < alpha``."""
    permutations = len(result.sums)
    allowed = int(np.ceil(alpha * (1 + permutations))) - 2  # the most replicates a significant pair may reach
    if allowed < 0:
        return float("inf")  # B too small for alpha: nothing can be significant
    ranges = np.sort(result.ranges)[::-1]
    return float(ranges[allowed]) if allowed < len(ranges) else 0.0


def randomised_tukey_hsd(matrix: np.ndarray, alpha: float = 0.05, permutations: int = 10_000, seed: int = 42,
                         advance: Callable[[int], object] | None = None) -> PairTable:
    """Every pair of the runs (rows of ``matrix``, runs x topics, no NaN) by the randomised Tukey HSD test
    (``advance``: see :func:`permute`)."""
    matrix = np.asarray(matrix, dtype=np.float64)
    result = permute(matrix, permutations, seed, advance=advance)
    first, second = np.triu_indices(matrix.shape[0], 1)
    means = matrix.mean(axis=1)
    difference = means[first] - means[second]
    over_range, over_own = pair_counts(result)
    width = critical_range(result, alpha) / result.n_topics if result.n_permuted else 0.0
    return PairTable(first, second, difference, difference - width, difference + width,
                     (1 + over_own) / (1 + permutations), (1 + over_range) / (1 + permutations))
