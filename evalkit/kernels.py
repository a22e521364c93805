"""The one place evalkit calls its compiled kernels (``evalkit._native``, built from ``evalkit/_native_src/``).

``native`` is the extension module, or ``None`` where ``pip install`` had no C
compiler. Each function below is a typed wrapper of one kernel: it takes and
returns numpy arrays and plain values, and returns ``None`` when the kernel is
not there, so the caller takes its pure-Python twin (same results; the twins
are held equal in ``tests/test_native.py``). The wrappers read ``native``
when they run, so a test switches every kernel off by setting this one
attribute. The buffers' layout (contiguous int64, uint8 masks) is known here
only: the scoring modules read as semantics.
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

try:
    from evalkit import _native as native
except ImportError:  # built without a C compiler: the pure-Python twins
    native = None

COMPILED = native is not None
SEED = int.from_bytes(os.urandom(8), "little")  # the id tables' hash seed, per process as Python's own str hashing (codes never depend on it)


def _int64(array: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(array, dtype=np.int64)


def judged_rows(qidx: np.ndarray, didx: np.ndarray, rank: np.ndarray, first: np.ndarray, run_query_pos: np.ndarray,
                run_to_qdoc: np.ndarray, offsets: np.ndarray, judged_docs: np.ndarray, judged_grades: np.ndarray,
                depth: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(query position, rank, grade) of every ranked row whose document is judged for its evaluated query, in one pass.

    The run's rows in rank order (``qidx``, ``didx``, ``rank``, ``first``: not
    a repeat); ``run_query_pos``: each run query's evaluated position (-1: not
    evaluated); ``run_to_qdoc``: each run document's code among judged
    documents (-1: never judged); ``offsets``: where each evaluated query's
    judgments start in ``judged_docs`` / ``judged_grades`` (sorted by document
    code). ``None`` without the kernel.
    """
    if native is None:
        return None
    room = len(judged_docs)
    qpos, ranks, grades = np.empty(room, dtype=np.int64), np.empty(room, dtype=np.int64), np.empty(room, dtype=np.float64)
    count = native.judged_rows(
        _int64(qidx), _int64(didx), _int64(rank), np.ascontiguousarray(first, dtype=bool).view(np.uint8), _int64(run_query_pos),
        np.ascontiguousarray(run_to_qdoc >= 0).view(np.uint8), _int64(run_to_qdoc), _int64(offsets), _int64(judged_docs),
        np.ascontiguousarray(judged_grades, dtype=np.float64), depth or 0, qpos, ranks, grades,
    )
    return qpos[:count], ranks[:count], grades[:count]


def first_occurrences(qidx: np.ndarray, didx: np.ndarray, n_docs: int) -> np.ndarray | None:
    """False for rows repeating an earlier (query, document) pair of their query (rows grouped by query); ``None`` without the kernel."""
    if native is None:
        return None
    first = np.ones(len(qidx), dtype=bool)
    native.first_occurrences(_int64(qidx), _int64(didx), n_docs, first.view(np.uint8))
    return first


def blank_profile(data: bytes) -> tuple[bool, bool, bool, bool, bool] | None:
    """(a space, a tab, CR/VT/FF, a space-delimited empty field, a tab-delimited empty field) of ``data``; ``None`` without the kernel."""
    if native is None:
        return None
    return tuple(bool(v) for v in native.blank_profile(data))  # type: ignore[return-value]


def positions(values: list[Any], universe: list[Any]) -> np.ndarray | None:
    """Index of each value in the unique list ``universe`` (-1: absent); ``None`` without the kernel or for ids it does not
    take (not all ``str``, lone surrogates, a repeated universe id): the caller's dict decides those."""
    if native is None:
        return None
    out = np.empty(len(values), dtype=np.int64)
    try:
        native.positions(values, universe, out, SEED)
    except (TypeError, ValueError):
        return None
    return out


class ArrowFactorizer:
    """Codes Arrow ``string`` chunks in first-seen order, chunk after chunk (the kernel keeps a copy of each distinct id)."""

    def __init__(self) -> None:
        if native is None:
            raise RuntimeError("the compiled id coder is not built")  # callers check factorizer() first
        self._coder = native.Factorizer(SEED)

    def add(self, chunk: Any, codes: np.ndarray) -> None:
        """Write the codes of one null-free pyarrow ``string`` chunk's rows into ``codes`` (int64, one per row)."""
        n = len(chunk)
        offsets = np.frombuffer(chunk.buffers()[1], dtype=np.int32, count=n + 1, offset=chunk.offset * 4)
        data = chunk.buffers()[2]
        self._coder.add(offsets, b"" if data is None else data, codes)

    def uniques(self) -> list[str]:
        """The distinct ids so far, in code order."""
        return self._coder.uniques()


def factorizer() -> ArrowFactorizer | None:
    """A new Arrow id coder, or ``None`` without the kernel."""
    return ArrowFactorizer() if native is not None else None


def permuted_sums(values: np.ndarray, bit_generator: np.random.BitGenerator, products: np.ndarray, thresholds: np.ndarray,
                  sizes: np.ndarray, permutations: int) -> np.ndarray | None:
    """The run sums of ``permutations`` replicates of the randomised Tukey HSD test (replicates x runs); ``None`` without the kernel.

    ``values``: topics x runs; every topic's row shuffled by Fisher-Yates with
    digits drawn from ``bit_generator`` (numpy's raw 64-bit draws, its lock
    held) in groups of radixes (``products``, Lemire ``thresholds``, ``sizes``),
    as :mod:`evalkit.stats.randomised_tukey` describes and its numpy twin does.
    """
    if native is None:
        return None
    values = np.ascontiguousarray(values, dtype=np.float64)
    out = np.zeros((permutations, values.shape[1]))
    with bit_generator.lock:
        native.permuted_sums(values, values.shape[1], bit_generator.capsule, np.ascontiguousarray(products, dtype=np.uint64),
                             np.ascontiguousarray(thresholds, dtype=np.uint64), _int64(sizes), permutations, out)
    return out
