"""Paired significance tests on per-query scores, one small module per test.

Every test takes two aligned per-query vectors (the run and the baseline, or
their differences ``d = run - baseline``) and returns a :class:`TestResult`.
Conventions shared by all tests:

* two-sided alternatives;
* identical inputs (all ``d == 0``) give ``p = 1`` -- never NaN, never an error;
* numpy only, in the operations and order of scipy.stats / statsmodels, so
  the p-values are theirs to the last bit (tests/oracles/test_stats_pinned.py) while
  neither is imported: scipy.special's ufuncs give the tail probabilities;
  scipy.stats is imported only for small-sample Wilcoxon and BCa intervals.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np


@dataclass(frozen=True)
class TestResult:
    """One test's outcome: statistic, two-sided p-value and what was done."""

    __test__ = False  # not a pytest test class

    test: str  # registry key, e.g. "wilcoxon"
    statistic: float
    p_value: float
    details: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"test": self.test, "statistic": self.statistic, "p_value": self.p_value, **self.details}


@dataclass(frozen=True, eq=False)
class PairTable:
    """Every pair (i, j), i < j, of k runs in row-major order (``numpy.triu_indices(k, 1)``), as one all-pairs procedure left it.

    ``difference = mean_i - mean_j``; ``low``/``high`` its interval (what kind
    is the procedure's to say); ``p_value`` the pair's own p-value,
    ``p_adjusted`` the one that accounts for all pairs.
    """

    first: np.ndarray
    second: np.ndarray
    difference: np.ndarray
    low: np.ndarray
    high: np.ndarray
    p_value: np.ndarray
    p_adjusted: np.ndarray


# the all-pairs procedures (evalkit.stats.allpairs): name -> what it does (here, light to import, for the command line's choices)
ALL_PAIRS_PROCEDURES = {
    "tukey": "paired Tukey HSD (studentized range on the residual mean square of the two-way ANOVA score ~ run + query, "
             "as R's TukeyHSD(aov(score ~ system + topic)))",
    "randomised-tukey": "randomised Tukey HSD (Sakai 2018): each query's scores permuted across the runs, "
                        "the range of the permuted run means as the null distribution",
    "wilcoxon": "Wilcoxon signed-rank test on every pair",
    "ttest": "paired t-test on every pair",
    "randomization": "Fisher randomization test on every pair",
    "mcnemar": "McNemar's exact test on every pair (a 0/1 outcome per query)",
}

__all__ = ["ALL_PAIRS_PROCEDURES", "PairTable", "TestResult"]
