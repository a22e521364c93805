"""Effect sizes for paired per-query scores."""
from __future__ import annotations

import numpy as np


def rank_biserial(run: np.ndarray, baseline: np.ndarray, zero_method: str = "wilcox") -> float:
    """Matched-pairs rank-biserial correlation ``r = (R+ - R-) / (R+ + R-)``.

    ``R+`` / ``R-`` are the sums of the ranks of ``|d|`` (average ranks for
    ties) of the positive / negative differences ``d = run - baseline``, with
    zeros treated as in the Wilcoxon test: ``wilcox`` drops them before
    ranking, ``pratt`` ranks them and drops their ranks, ``zsplit`` splits
    their ranks evenly between R+ and R- (so they enter the denominator).
    ``r`` lies in [-1, 1]: +1 means the run wins every non-tied query, 0 no
    tendency (also returned when all differences are zero). Reference:
    Kerby (2014), Comprehensive Psychology 3, 11.IT.3.1.
    """
    from evalkit.stats.ranks import average_ranks

    d = np.asarray(run, dtype=np.float64) - np.asarray(baseline, dtype=np.float64)
    if zero_method == "wilcox":
        d = d[d != 0]
    if len(d) == 0 or not np.any(d != 0):
        return 0.0
    ranks = average_ranks(np.abs(d))[0]
    plus = float(ranks[d > 0].sum())
    minus = float(ranks[d < 0].sum())
    total = plus + minus
    if zero_method == "zsplit":
        total += float(ranks[d == 0].sum())
    return (plus - minus) / total if total else 0.0


def win_tie_loss(run: np.ndarray, baseline: np.ndarray) -> tuple[int, int, int]:
    """Queries where the run scores higher, equal, lower than the baseline."""
    d = np.asarray(run, dtype=np.float64) - np.asarray(baseline, dtype=np.float64)
    return int(np.sum(d > 0)), int(np.sum(d == 0)), int(np.sum(d < 0))


def relative_improvement(mean_run: float, mean_baseline: float) -> float:
    """``(mean_run - mean_baseline) / mean_baseline``; NaN when the baseline mean is 0."""
    return (mean_run - mean_baseline) / mean_baseline if mean_baseline else float("nan")
