"""Multiple-comparison correction of p-values (statsmodels.stats.multitest.multipletests' arithmetic, numpy only)."""
from __future__ import annotations

from typing import Sequence

import numpy as np

CORRECTIONS = {
    "holm": "Holm step-down (controls the family-wise error rate)",
    "bonferroni": "Bonferroni (controls the family-wise error rate)",
    "none": "no correction",
}


def adjust(p_values: Sequence[float], method: str = "holm", alpha: float = 0.05) -> list[float]:
    """Adjusted p-values for one family of tests.

    ``holm``: sort p ascending, ``p_(i) * (m - i + 1)``, made monotone and
    capped at 1 (Holm 1979, Scand. J. Statistics 6); ``bonferroni``:
    ``min(1, m * p)``. A single test is returned unchanged.
    """
    if method not in CORRECTIONS:
        raise ValueError(f"correction must be one of {', '.join(CORRECTIONS)}")
    values = np.asarray(p_values, dtype=np.float64)
    if method == "none" or len(values) <= 1:
        return values.tolist()
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
