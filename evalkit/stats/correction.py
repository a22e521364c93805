"""Multiple-comparison correction of p-values (R's ``p.adjust``; Holm and Bonferroni also statsmodels' bit for bit), numpy only."""
from __future__ import annotations

import math
import numpy as np
import numpy.typing as npt

CORRECTIONS = {
    "holm": "Holm step-down (controls the family-wise error rate)",
    "bonferroni": "Bonferroni (controls the family-wise error rate)",
    "bh": "Benjamini-Hochberg (controls the false discovery rate under independence or positive dependence)",
    "by": "Benjamini-Yekutieli (controls the false discovery rate under any dependence)",
    "none": "no correction",
}
FAMILYWISE = ("holm", "bonferroni")  # the corrections whose rejections hold jointly (simultaneous rank intervals)


def adjust(p_values: npt.ArrayLike, method: str = "holm", alpha: float = 0.05) -> list[float]:
    """Adjusted p-values for one family of tests.

    ``holm``: sort p ascending, ``p_(i) * (m - i + 1)``, made monotone and
    capped at 1 (Holm 1979, Scand. J. Statistics 6); ``bonferroni``:
    ``min(1, m * p)``; ``bh``: sort p descending, ``m / i * p_(i)`` (i the
    ascending rank), running minimum, capped at 1 (Benjamini & Hochberg 1995,
    JRSS B 57); ``by``: the same times ``sum_{j<=m} 1/j`` (Benjamini &
    Yekutieli 2001, Ann. Statist. 29). Each as R's ``p.adjust`` computes it
    (Holm and Bonferroni are also statsmodels' ``multipletests`` to the last
    bit). A single test is returned unchanged.
    """
    if method not in CORRECTIONS:
        raise ValueError(f"correction must be one of {', '.join(CORRECTIONS)}")
    values = np.asarray(p_values, dtype=np.float64)
    if method == "none" or len(values) <= 1:
        return values.tolist()
    if method in ("bh", "by"):
        return _false_discovery(values, method)
    order = np.argsort(values)  # multipletests: sort, correct, cap at 1, unsort
    ordered = np.take(values, order)
    if method == "bonferroni":
        corrected = ordered * float(len(values))
    else:
        corrected = np.maximum.accumulate(ordered * np.arange(len(values), 0, -1))
    corrected[corrected > 1] = 1
    unsorted = np.empty_like(corrected)
    unsorted[order] = corrected
    return [float(v) for v in unsorted]


def _false_discovery(values: np.ndarray, method: str) -> list[float]:
    """R's ``p.adjust(p, "BH" | "BY")``: ``pmin(1, cummin(q * n / i * p[o]))[ro]``, o the decreasing order."""
    m = len(values)
    order = np.argsort(-values, kind="stable")  # R's order(p, decreasing = TRUE)
    rank = np.arange(m, 0, -1, dtype=np.float64)
    factor = float(m) if method == "bh" else math.fsum(1.0 / np.arange(1, m + 1)) * m
    corrected = np.minimum(1.0, np.minimum.accumulate(factor / rank * values[order]))
    unsorted = np.empty_like(corrected)
    unsorted[order] = corrected
    return [float(v) for v in unsorted]
