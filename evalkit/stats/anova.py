"""Two-way ANOVA without replication (score ~ system + topic) and Sakai's effect size ES_E.

Every run (system) is scored on the same n topics (queries): x[s, t], k runs.
The model ``x = mu + system_s + topic_t + e`` (R: ``aov(score ~ system + topic)``)
splits the total sum of squares around the grand mean ``m``:

    SS_system   = n * sum_s (m_s - m)^2                      df k - 1
    SS_topic    = k * sum_t (m_t - m)^2                      df n - 1
    SS_residual = sum_{s,t} (x[s,t] - m_s - m_t + m)^2       df (k - 1)(n - 1)

with ``MS = SS / df``, ``F = MS / MS_residual`` and ``p = P(F_{df, df_residual} >= F)``
(R's ``summary(aov(...))``; the design is balanced, so the order of the terms
does not matter). ``MS_residual`` is V_E, the residual variance the paired
Tukey HSD test uses. The share of each source is ``SS / SS_total`` (eta
squared): how much of the variation in the scores the runs explain, and how
much the topics do. Sakai's effect size of a pair is
``ES_E = (m_i - m_j) / sqrt(V_E)``. References: Sakai (2014), "Statistical
reform in information retrieval?", SIGIR Forum 48(1); Sakai (2018),
Laboratory Experiments in Information Retrieval, Springer, ch. 3 and 5.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalkit.core.errors import UsageError


@dataclass(frozen=True)
class AnovaRow:
    source: str  # "system", "topic", "residual" or "total"
    ss: float
    df: int
    ms: float | None  # None for the total
    f: float | None  # None for the residual and the total
    p: float | None
    share: float  # ss / ss_total


@dataclass(frozen=True)
class TwoWayAnova:
    """The ANOVA of a runs x topics matrix; ``residual_variance`` is V_E."""

    system_means: np.ndarray
    grand_mean: float
    n_topics: int
    rows: tuple[AnovaRow, ...]

    @property
    def n_systems(self) -> int:
        return len(self.system_means)

    def row(self, source: str) -> AnovaRow:
        return next(r for r in self.rows if r.source == source)

    @property
    def residual_variance(self) -> float:
        mean_square = self.row("residual").ms
        assert mean_square is not None  # only the total row has no mean square
        return float(mean_square)

    @property
    def df_residual(self) -> int:
        return self.row("residual").df

    def es_e(self, difference: float) -> float:
        """Sakai's ES_E of a difference of means: ``difference / sqrt(V_E)`` (0 for no difference, +-inf when V_E = 0)."""
        if difference == 0:
            return 0.0
        v_e = self.residual_variance
        return difference / np.sqrt(v_e) if v_e > 0 else float(np.copysign(np.inf, difference))


def _f_test(ms: float, ms_residual: float, df: int, df_residual: int) -> tuple[float, float]:
    """F and its upper-tail p (R: ``pf(F, df, df_residual, lower.tail = FALSE)``); no variation at all gives F NaN, p 1."""
    from scipy.special import fdtrc

    if ms_residual > 0:
        f = ms / ms_residual
        return f, float(fdtrc(df, df_residual, f))
    if ms > 0:
        return float("inf"), 0.0
    return float("nan"), 1.0


def two_way_anova(matrix: np.ndarray) -> TwoWayAnova:
    """ANOVA table of ``matrix`` (runs x topics, no NaN): sources system, topic, residual, total."""
    x = np.asarray(matrix, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 2 or x.shape[1] < 2:
        raise UsageError(f"the two-way ANOVA needs at least 2 runs and 2 queries (got {x.shape[0]} x {x.shape[1] if x.ndim == 2 else 0})")
    if np.isnan(x).any():
        raise UsageError("the two-way ANOVA needs a score for every run on every query (NaN found)")
    k, n = x.shape
    grand = float(x.mean())
    system_means = x.mean(axis=1)
    topic_means = x.mean(axis=0)
    residuals = x - system_means[:, None] - topic_means[None, :] + grand
    ss = {
        "system": float(n * np.sum((system_means - grand) ** 2)),
        "topic": float(k * np.sum((topic_means - grand) ** 2)),
        "residual": float(np.sum(residuals ** 2)),
    }
    total = float(np.sum((x - grand) ** 2))
    df = {"system": k - 1, "topic": n - 1, "residual": (k - 1) * (n - 1)}
    ms = {source: ss[source] / df[source] for source in ss}
    rows = []
    for source in ("system", "topic"):
        f, p = _f_test(ms[source], ms["residual"], df[source], df["residual"])
        rows.append(AnovaRow(source, ss[source], df[source], ms[source], f, p, ss[source] / total if total > 0 else 0.0))
    rows.append(AnovaRow("residual", ss["residual"], df["residual"], ms["residual"], None, None,
                         ss["residual"] / total if total > 0 else 0.0))
    rows.append(AnovaRow("total", total, k * n - 1, None, None, None, 1.0 if total > 0 else 0.0))
    return TwoWayAnova(system_means, grand, n, tuple(rows))
