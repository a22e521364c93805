"""Paired Tukey HSD: all pairs of runs from the two-way ANOVA without replication, as R's ``TukeyHSD`` computes it.

With k runs on the same n topics, V_E the residual mean square of
``aov(score ~ system + topic)`` on ``df = (k - 1)(n - 1)`` degrees of freedom
(:mod:`evalkit.stats.anova`) and ``se = sqrt(V_E / 2 * (1/n + 1/n)) = sqrt(V_E / n)``,
a pair's difference ``d = m_i - m_j`` gets

    simultaneous interval  d +- qtukey(1 - alpha, k, df) * se
    p_adjusted             ptukey(|d| / se, k, df, lower.tail = FALSE)

exactly R's ``TukeyHSD(aov(score ~ system + topic), "system", conf.level = 1 - alpha)``
(:mod:`evalkit.stats.studentized_range` is R's ``ptukey``/``qtukey``,
including its switch to the infinite-df form above 25,000 df). Using the
topic-by-system model pairs every run with every other on the same topics,
which a one-way Tukey HSD (``scipy.stats.tukey_hsd``, ranx) ignores. The raw
p-value of a pair is the unadjusted t-test on the same error term
(Fisher's LSD): ``2 * pt(-|d| / sqrt(2 V_E / n), df)``. When V_E = 0 (the
runs differ by constants on every topic) R gives NaN; here a zero difference
has p = 1 and a non-zero one p = 0, with a zero-width interval.
References: Tukey (1953), The problem of multiple comparisons; Carterette
(2012), ACM TOIS 30(1); Sakai (2018), Laboratory Experiments in Information
Retrieval, sect. 4.4.
"""
from __future__ import annotations

import numpy as np

from evalkit.core.errors import UsageError
from evalkit.stats import PairTable
from evalkit.stats.anova import TwoWayAnova, two_way_anova
from evalkit.stats.studentized_range import ptukey_upper, qtukey


def tukey_hsd(matrix: np.ndarray, alpha: float = 0.05, anova: TwoWayAnova | None = None) -> PairTable:
    """Every pair of the runs (rows of ``matrix``, runs x topics) by the paired Tukey HSD test."""
    from scipy.special import stdtr

    anova = anova or two_way_anova(matrix)
    k, n = anova.n_systems, anova.n_topics
    df = anova.df_residual
    if df < 2:
        raise UsageError(f"Tukey HSD needs at least 2 residual degrees of freedom ((runs - 1) x (queries - 1) = {df})")
    first, second = np.triu_indices(k, 1)
    means = anova.system_means
    difference = means[first] - means[second]
    se = float(np.sqrt((anova.residual_variance / 2) * (1.0 / n + 1.0 / n)))
    width = qtukey(1 - alpha, k, df) * se
    if se > 0:
        studentized = np.abs(difference) / se
        p_adjusted = ptukey_upper(studentized, k, df)
        p_value = 2 * stdtr(df, -studentized / np.sqrt(2.0))
    else:
        p_adjusted = p_value = np.where(difference == 0, 1.0, 0.0)
    return PairTable(first, second, difference, difference - width, difference + width,
                     np.asarray(p_value, dtype=np.float64), np.asarray(p_adjusted, dtype=np.float64))
