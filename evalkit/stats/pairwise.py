"""Paired tests over every pair of k runs, corrected over the k (k - 1) / 2 pairs.

Each pair (i, j) is tested on the per-query scores of the two runs with one of
evalkit's paired tests -- Wilcoxon signed-rank, paired t-test, Fisher
randomization (one random sign per query and replicate, shared by all pairs:
one matrix product instead of a pass per pair), McNemar's exact test on a 0/1
outcome -- and the p-values are adjusted over all pairs at once by
:func:`evalkit.stats.correction.adjust` (Holm, Bonferroni, Benjamini-Hochberg,
Benjamini-Yekutieli, or none). The interval of a difference is the percentile
bootstrap interval of ``m_i - m_j`` over the same resamples of queries for
every pair: at ``1 - alpha / m`` with a family-wise correction (Holm,
Bonferroni: simultaneous by Bonferroni's inequality), at ``1 - alpha``
otherwise (one pair at a time). Otero, Parapar & Barreiro (ECIR 2025,
"Towards reliable testing for multiple information retrieval system
comparisons") find Wilcoxon with Benjamini-Hochberg the most powerful
procedure that keeps the false discovery rate.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from evalkit.stats import PairTable, TestResult
from evalkit.stats.bootstrap import percentile_interval
from evalkit.stats.correction import FAMILYWISE, adjust

PAIRED_TESTS = {
    "wilcoxon": "two-sided Wilcoxon signed-rank test",
    "ttest": "two-sided paired t-test",
    "randomization": "two-sided Fisher randomization test",
    "mcnemar": "McNemar's exact test on a 0/1 outcome",
}


def paired_tests(name: str, pairs: Sequence[tuple[np.ndarray, np.ndarray]], zero_method: str = "wilcox",
                 permutations: int = 10_000, seed: int = 42) -> list[TestResult]:
    """The paired test ``name`` of every ``(run, baseline)`` pair (randomization: one stream of signs for all)."""
    from evalkit.stats.mcnemar import mcnemar_tests
    from evalkit.stats.randomization import randomization_tests
    from evalkit.stats.ttest import paired_t_test
    from evalkit.stats.wilcoxon import wilcoxon_test

    if name == "wilcoxon":
        return [wilcoxon_test(a, b, zero_method) for a, b in pairs]
    if name == "ttest":
        return [paired_t_test(a, b) for a, b in pairs]
    if name == "randomization":
        return randomization_tests(pairs, permutations, seed)
    if name == "mcnemar":
        return [mcnemar_tests(a, b)[0] for a, b in pairs]
    raise ValueError(f"unknown paired test {name!r} (choose {', '.join(PAIRED_TESTS)})")


def interval_confidence(correction: str, alpha: float, n_pairs: int) -> float:
    """Confidence of each pair's bootstrap interval: ``1 - alpha / m`` under a family-wise correction, else ``1 - alpha``."""
    return 1 - alpha / max(n_pairs, 1) if correction in FAMILYWISE else 1 - alpha


def pairwise_table(matrix: np.ndarray, test: str, boot_means: np.ndarray, correction: str = "holm", alpha: float = 0.05,
                   zero_method: str = "wilcox", permutations: int = 10_000, seed: int = 42) -> PairTable:
    """Every pair of the runs (rows of ``matrix``, runs x queries, no NaN) by ``test``, adjusted by ``correction``.

    ``boot_means`` holds the run means over bootstrap resamples of the queries
    (resamples x runs, :func:`evalkit.stats.bootstrap.bootstrap_means`).
    """
    from evalkit.stats.randomization import randomization_all_pairs

    matrix = np.asarray(matrix, dtype=np.float64)
    k = matrix.shape[0]
    first, second = np.triu_indices(k, 1)
    if test == "randomization":  # one sign per query and replicate for every pair: one matrix product per batch
        results = randomization_all_pairs(matrix, first, second, permutations, seed)
    else:
        results = paired_tests(test, [(matrix[i], matrix[j]) for i, j in zip(first, second)], zero_method, permutations, seed)
    p_value = np.array([r.p_value for r in results], dtype=np.float64)
    p_adjusted = np.array(adjust(p_value, correction, alpha), dtype=np.float64)
    means = matrix.mean(axis=1)
    confidence = interval_confidence(correction, alpha, len(first))
    low, high = np.empty(len(first)), np.empty(len(first))
    for pair, (i, j) in enumerate(zip(first, second)):
        replicates = boot_means[:, i] - boot_means[:, j]
        if np.all(matrix[i] - matrix[j] == matrix[i, 0] - matrix[j, 0]):  # a constant difference: no spread
            low[pair] = high[pair] = means[i] - means[j]
        else:
            low[pair], high[pair] = percentile_interval(replicates, confidence)
    return PairTable(first, second, means[first] - means[second], low, high, p_value, p_adjusted)
