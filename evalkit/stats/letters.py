"""Compact letter display: runs that share a letter are not significantly different.

Piepho's insert-absorb algorithm (Piepho 2004, "An algorithm for a
letter-based representation of all-pairwise comparisons", J. Computational
and Graphical Statistics 13(2):456-466), as R's ``multcompView::multcompLetters``
follows it: start with one letter shared by all runs; for every significant
pair (i, j), split each letter that holds both into a copy without i and a
copy without j, then drop every letter whose runs are a subset of another
letter's (absorb). A final sweep removes a run from a letter when each of
the pairs it forms there is already covered by another letter (and the run
keeps a letter), and drops letters left redundant. Letters are named a, b,
c, ... in the order of their best run (runs ordered by mean, best first), so
the top run has ``a``; beyond 26 letters come A-Z, then a1, b1, ....
"""
from __future__ import annotations

import string

import numpy as np

NAMES = string.ascii_lowercase + string.ascii_uppercase


def letter_name(index: int) -> str:
    return NAMES[index % len(NAMES)] + (str(index // len(NAMES)) if index >= len(NAMES) else "")


def _absorb(columns: list[frozenset[int]]) -> list[frozenset[int]]:
    """Columns that are not a subset of another column (the first of equal columns kept)."""
    kept: list[frozenset[int]] = []
    for i, column in enumerate(columns):
        if not column:
            continue
        if any((column < other) or (column == other and j < i) for j, other in enumerate(columns)):
            continue
        kept.append(column)
    return kept


def _split(columns: list[frozenset[int]], i: int, j: int) -> list[frozenset[int]]:
    """Insert-absorb for one significant pair: each column holding both ``i`` and ``j`` becomes a copy without ``i``
    and one without ``j``, then :func:`_absorb`. The columns are an antichain (what :func:`_absorb` leaves), so a
    column not split can be neither a subset of a copy nor equal to one (it would be a subset of the column the copy
    came from): only the copies are held against the others, and the result equals ``_absorb`` of the whole list."""
    split: list[frozenset[int]] = []
    copies: list[int] = []  # positions of the copies in ``split``
    for column in columns:
        if i in column and j in column:
            copies += [len(split), len(split) + 1]
            split += [column - {i}, column - {j}]
        else:
            split.append(column)
    if not copies:
        return split
    dropped = {p for p in copies if not split[p] or any((split[p] < other) or (split[p] == other and q < p)
                                                        for q, other in enumerate(split))}
    return [column for p, column in enumerate(split) if p not in dropped]


def _sweep(columns: list[set[int]]) -> list[set[int]]:
    for index, column in enumerate(columns):
        for run in sorted(column):
            others = [c for j, c in enumerate(columns) if j != index]
            if not any(run in c for c in others):
                continue
            if all(any(run in c and mate in c for c in others) for mate in column if mate != run):
                column.discard(run)
    return [c for c in columns if c]


def compact_letters(means: np.ndarray, significant: np.ndarray) -> list[str]:
    """Letters of every run (in input order) from ``significant[i, j]`` (symmetric): share a letter iff not significant."""
    k = len(means)
    order = np.argsort(-np.asarray(means, dtype=np.float64), kind="stable")
    position = np.empty(k, dtype=np.int64)
    position[order] = np.arange(k)
    columns: list[frozenset[int]] = [frozenset(range(k))]
    for a in range(k):
        for b in range(a + 1, k):
            i, j = int(order[a]), int(order[b])
            if not significant[i, j]:
                continue
            columns = _split(columns, i, j)
    swept = [set(c) for c in _absorb([frozenset(c) for c in _sweep([set(c) for c in columns])])]
    swept.sort(key=lambda c: (min(position[r] for r in c), -len(c)))
    letters = [""] * k
    for index, swept_column in enumerate(swept):
        for run in swept_column:
            letters[run] += letter_name(index)
    return letters
