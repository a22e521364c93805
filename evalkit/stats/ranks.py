"""Average ranks with tie counts, as ``scipy.stats.rankdata(x, "average")`` computes them (numpy only)."""
from __future__ import annotations

import numpy as np


def average_ranks(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ranks of 1-D ``x`` (ties get their average rank) and scipy's tie counts.

    The same operations as scipy's private ``_rankdata(x, "average",
    return_ties=True)``: a stable argsort, the first position of each run of
    equal values, ``rank = first + (count - 1) / 2``. The tie array holds each
    group's size at the group's first sorted position and 0 elsewhere, so
    ``sum(t**3 - t)`` is the usual tie correction. NaNs sort last, one group
    each. Ranks are exact halves, so the result is bit-identical to scipy's.
    """
    x = np.asarray(x)
    n = x.shape[-1]
    if n == 0:
        return np.empty(0, dtype=np.float64), np.zeros(0, dtype=np.float64)
    order = np.argsort(x, kind="stable")
    ordinal = np.arange(1, n + 1, dtype=np.float64)
    y = x[order]
    first = np.concatenate([np.ones(1, dtype=bool), y[:-1] != y[1:]])
    starts = np.arange(n)[first]
    counts = np.diff(starts, append=np.asarray([n], dtype=starts.dtype))
    grouped = ordinal[first] + (counts.astype(np.float64) - 1) / 2
    ranks = np.empty(n, dtype=np.float64)
    ranks[order] = np.repeat(grouped, counts)
    ties = np.zeros(n, dtype=np.float64)
    ties[first] = counts.astype(np.float64)
    return ranks, ties
