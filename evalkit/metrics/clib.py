"""The C library's ``log``, ``log2`` and ``exp``, as trec_eval calls them.

trec_eval computes with libm; numpy has its own vectorised ``exp``/``log``
(SIMD code chosen by CPU), which can differ from libm by one ulp, and one ulp
moves a printed 4th decimal when a value falls on a half. Python's ``math``
functions call libm, so the values here are trec_eval's, bit for bit.
"""
from __future__ import annotations

import math

import numpy as np

_LOG2_RANKS = np.zeros(0)


def log(values) -> np.ndarray:
    """Natural log of each value (libm ``log``)."""
    return np.array([math.log(v) for v in np.asarray(values, dtype=np.float64).tolist()], dtype=np.float64)


def log2(values) -> np.ndarray:
    """Base-2 log of each value (libm ``log2``)."""
    return np.array([math.log2(v) for v in np.asarray(values, dtype=np.float64).tolist()], dtype=np.float64)


def log2_table(n: int) -> np.ndarray:
    """``table[i] = log2(i)`` for i < n (libm), cached: the discounts of ranks, ``log2(rank + 1)``."""
    global _LOG2_RANKS
    if len(_LOG2_RANKS) < n:
        size = max(n, 2 * len(_LOG2_RANKS), 1024)
        _LOG2_RANKS = np.array([-math.inf] + [math.log2(i) for i in range(1, size)], dtype=np.float64)
    return _LOG2_RANKS


def log2_of(integers: np.ndarray) -> np.ndarray:
    """``log2`` of non-negative integer-valued values (ranks + 1 and the like), by table lookup."""
    ints = np.asarray(integers, dtype=np.int64)
    if len(ints) == 0:
        return np.zeros(0)
    return log2_table(int(ints.max()) + 1)[ints]
