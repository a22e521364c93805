"""Multiple-comparison correction of p-values (statsmodels.stats.multitest.multipletests)."""
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
    from statsmodels.stats.multitest import multipletests

    _, corrected, _, _ = multipletests(values, alpha=alpha, method=method)
    return [float(v) for v in corrected]
