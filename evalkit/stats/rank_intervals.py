"""Intervals for the rank of each run: from an all-pairs procedure, and by the bootstrap; the group tied with the top.

*From the procedure.* With ``better[i, j]`` true when run i is significantly
better than run j, run i's rank interval is

    [1 + #{j : j significantly better than i},  k - #{j : i significantly better than j}]

-- the ranks not ruled out by a significant difference. When the procedure
controls the family-wise error rate at alpha (Tukey HSD, randomised Tukey
HSD, Holm, Bonferroni), all k intervals hold together with probability at
least 1 - alpha: every interval is wrong only if some significant difference
is (Klein, Wright & Wieczorek 2020, "A joint confidence region for an overall
ranking of populations", JRSS C 69(3); Al Mohamad, Goeman & van Zwet 2022,
"Simultaneous confidence intervals for ranks with application to ranking
institutions", Biometrics 78(1)). Under a false-discovery-rate correction the
intervals are only as good as the discoveries they come from.

*By the bootstrap.* The queries are resampled B times
(:func:`evalkit.stats.bootstrap.bootstrap_means`); in each resample a run's
rank is ``1 + #{runs with a higher mean}``; its interval is the alpha/2 and
1 - alpha/2 quantiles of these ranks (numpy's ``inverted_cdf``: ranks are
integers). Each interval holds marginally, not jointly (Hall & Miller 2009,
"Using the bootstrap to quantify the authority of an empirical ranking",
Annals of Statistics 37(6)).

*Tied with the top.* The run with the highest mean and every run not
significantly different from it.
"""
from __future__ import annotations

import numpy as np

from evalkit.stats import PairTable

CELLS_PER_CHUNK = 4_000_000  # resamples x runs x runs compared at once


def better_matrix(table: PairTable, k: int, alpha: float) -> np.ndarray:
    """``better[i, j]``: run i is significantly better than run j (``p_adjusted < alpha`` and a higher mean)."""
    better = np.zeros((k, k), dtype=bool)
    significant = table.p_adjusted < alpha
    up = significant & (table.difference > 0)
    down = significant & (table.difference < 0)
    better[table.first[up], table.second[up]] = True
    better[table.second[down], table.first[down]] = True
    return better


def simultaneous_rank_intervals(better: np.ndarray) -> list[tuple[int, int]]:
    """``[1 + #significantly better runs, k - #significantly worse runs]`` for every run."""
    k = better.shape[0]
    above = better.sum(axis=0)  # runs significantly better than each run
    below = better.sum(axis=1)  # runs each run is significantly better than
    return [(int(1 + a), int(k - b)) for a, b in zip(above, below)]


def bootstrap_ranks(boot_means: np.ndarray) -> np.ndarray:
    """Rank of every run in every resample: ``1 + #{runs with a higher mean}`` (resamples x runs)."""
    resamples, k = boot_means.shape
    ranks = np.empty((resamples, k), dtype=np.int64)
    chunk = max(1, CELLS_PER_CHUNK // max(k * k, 1))
    for start in range(0, resamples, chunk):
        block = boot_means[start:start + chunk]
        ranks[start:start + chunk] = 1 + (block[:, None, :] > block[:, :, None]).sum(axis=2)
    return ranks


def bootstrap_rank_intervals(boot_means: np.ndarray, alpha: float = 0.05) -> list[tuple[int, int]]:
    """The ``alpha / 2`` and ``1 - alpha / 2`` quantiles of each run's bootstrap rank."""
    ranks = bootstrap_ranks(boot_means)
    low = np.quantile(ranks, alpha / 2, axis=0, method="inverted_cdf")
    high = np.quantile(ranks, 1 - alpha / 2, axis=0, method="inverted_cdf")
    return [(int(lo), int(hi)) for lo, hi in zip(low, high)]


def tied_with_top(means: np.ndarray, table: PairTable, alpha: float) -> list[int]:
    """The run with the highest mean (the first of equals) and every run not significantly different from it, in order."""
    top = int(np.argmax(means))
    significant = table.p_adjusted < alpha
    apart = set(table.second[significant & (table.first == top)].tolist())
    apart |= set(table.first[significant & (table.second == top)].tolist())
    return [i for i in range(len(means)) if i not in apart]
