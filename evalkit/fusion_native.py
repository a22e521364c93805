"""The common fusion methods computed with numpy: ranx's semantics, no compilation, milliseconds.

Each run is first normalised per query (ranx ``norm``), then the runs are
combined per (query, document) in input order, with the same floating-point
operations as ranx (sums accumulate run by run from 0.0), so the fused
scores equal ranx's ``fuse`` (cross-checked to 1e-12 in
``tests/test_fusion_native.py``). Positions are the ranking rule's (scores
descending, ties by document id descending). ``D`` is the set of documents
any run retrieved for the query; ``p_r(d)`` the 0-based position of ``d`` in
run ``r``; ``s_r(d)`` its normalised score, absent when ``r`` did not retrieve
``d``.

Normalisations (per run and query, ``s`` the run's scores):

* ``min-max``: ``(s - min) / max(max - min, 1e-9)``; ``max``: ``s / max(max, 1e-9)``;
* ``sum``: ``(s - min) / max(sum(s) - n min, 1e-9)``; ``zmuv``: ``(s - mean) / max(std, 1e-9)``;
* ``rank``: ``1 - p / n``; ``borda``: ``1 - p / |D|``, and ``0.5 - (n - 1) / (2 |D|)``
  for every document of ``D`` the run did not retrieve (so every run "retrieves" all of ``D``).

Methods (Fox & Shaw, TREC-2 1993; Cormack et al., SIGIR 2009; Mourao et al.
2014 for ISR; Aslam & Montague, SIGIR 2001 for Borda):

* ``combsum`` = ``sum_r s_r``; ``wsum`` = ``sum_r w_r s_r`` (absent: 0);
* ``combmnz`` = ``sum_r s_r * |{r: d in r}|``; ``combanz`` = ``sum_r s_r / |{r: d in r}|``;
* ``combmax`` / ``combmin`` / ``combmed`` over the runs retrieving ``d`` (ranx's
  defaults -1e9 / 1e9 for absent runs in max / min);
* ``wmnz`` = ``sum_r s_r * sum_{r: d in r} w_r``;
* ``rrf`` = ``sum_r 1 / (k + p_r + 1)``; ``isr`` = ``|{r: d in r}| * sum_r 1 / (p_r + 1)^2`` (ranx: CombMNZ);
* ``bordafuse`` = ``sum_r (|D| - p_r)``, absent: ``(|D| - n_r + 1) / 2``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np


FLOOR = 1e-9  # ranx's denominator floor
SCORE_METHODS = ("combsum", "combmnz", "combmax", "combmin", "combmed", "combanz", "wsum", "wmnz")
POSITION_METHODS = ("rrf", "isr", "bordafuse")
SCORE_NORMS = (None, "min-max", "max", "sum", "zmuv", "rank", "borda")
ORDER_PRESERVING_NORMS = (None, "min-max", "max", "sum", "zmuv", "rank")  # a run's order, hence positions, unchanged


def supported(method: str, norm: str | None) -> bool:
    """Whether :func:`fuse_native` computes ``method`` under ``norm`` (else ranx does)."""
    if method in SCORE_METHODS:
        return norm in SCORE_NORMS
    return method in POSITION_METHODS and norm in ORDER_PRESERVING_NORMS


@dataclass
class Entries:
    """All (run, query, document) entries, grouped by run then query, each group in ranking order."""

    run: np.ndarray  # run index
    group: np.ndarray  # (run, query) group index
    pair: np.ndarray  # index of the (query, document) pair
    score: np.ndarray  # the run's score
    position: np.ndarray  # 0-based position within the group
    starts: np.ndarray  # first entry of each group
    sizes: np.ndarray  # entries per group
    pair_query: list[str]  # query of each pair
    pair_doc: list[str]  # document of each pair


def collect(tables: Sequence[Mapping[str, Mapping[str, float]]], queries: Sequence[str]) -> Entries:
    """The entries of runs given as ``{query: {doc: score}}`` in ranking order (:meth:`Run.to_scores`)."""
    pairs: dict[tuple[str, str], int] = {}
    run_ids, groups, pair_ids, scores, positions, sizes = [], [], [], [], [], []
    for r, table in enumerate(tables):
        for q in queries:
            docs = table.get(q, {})
            group = len(sizes)
            sizes.append(len(docs))
            for position, (doc, value) in enumerate(docs.items()):
                key = (q, doc)
                index = pairs.get(key)
                if index is None:
                    index = pairs[key] = len(pairs)
                run_ids.append(r)
                groups.append(group)
                pair_ids.append(index)
                scores.append(value)
                positions.append(position)
    size_array = np.asarray(sizes, dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(size_array)[:-1]]).astype(np.int64) if len(sizes) else np.zeros(0, np.int64)
    return Entries(
        np.asarray(run_ids, dtype=np.int64), np.asarray(groups, dtype=np.int64), np.asarray(pair_ids, dtype=np.int64),
        np.asarray(scores, dtype=np.float64), np.asarray(positions, dtype=np.float64), starts, size_array,
        [k[0] for k in pairs], [k[1] for k in pairs],
    )


def _per_group(values: np.ndarray, entries: Entries, ufunc: np.ufunc) -> np.ndarray:
    """``ufunc`` reduced over each non-empty group, broadcast back to its entries."""
    filled = entries.sizes > 0
    reduced = np.zeros(len(entries.sizes))
    if values.size:
        reduced[filled] = ufunc.reduceat(values, entries.starts[filled])
    return reduced[entries.group]


def _sequential_sums(values: np.ndarray, entries: Entries) -> np.ndarray:
    """Each group's sum accumulated left to right (as ranx's ``sum``), per entry."""
    sums = np.zeros(len(entries.sizes))
    for g in np.flatnonzero(entries.sizes):
        start = entries.starts[g]
        sums[g] = np.cumsum(values[start:start + entries.sizes[g]])[-1]
    return sums[entries.group]


def normalise(entries: Entries, norm: str | None) -> np.ndarray:
    """Normalised scores of the entries (see the module docstring)."""
    s = entries.score
    size = entries.sizes[entries.group].astype(np.float64)
    if norm is None:
        return s.copy()
    if norm == "rank":
        return 1 - entries.position / size
    if norm == "min-max":
        low = _per_group(s, entries, np.minimum)
        return (s - low) / np.maximum(_per_group(s, entries, np.maximum) - low, FLOOR)
    if norm == "max":
        return s / np.maximum(_per_group(s, entries, np.maximum), FLOOR)
    if norm == "sum":
        low = _per_group(s, entries, np.minimum)
        return (s - low) / np.maximum(_sequential_sums(s, entries) - low * size, FLOOR)
    if norm == "zmuv":
        mean = _sequential_sums(s, entries) / size
        std = np.sqrt(_sequential_sums((s - mean) ** 2, entries) / size)
        return (s - mean) / np.maximum(std, FLOOR)
    raise ValueError(f"normalisation {norm!r} is not computed natively")


def _borda_missing(entries: Entries, n_runs: int, n_pairs: int, query_of_group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per run, the value of each pair under borda norm when the run did not retrieve it, and |D| per pair."""
    pair_query_code = np.full(n_pairs, -1, dtype=np.int64)
    pair_query_code[entries.pair] = query_of_group[entries.group]
    candidates = np.bincount(pair_query_code, minlength=query_of_group.max(initial=-1) + 1).astype(np.float64)
    return pair_query_code, candidates


def fuse_native(
    tables: Sequence[Mapping[str, Mapping[str, float]]], queries: Sequence[str], method: str, norm: str | None, params: dict,
) -> dict[str, dict[str, float]]:
    """``{query: {doc: fused score}}`` of ``method`` under ``norm`` over runs given as
    ``{query: {doc: score}}`` in ranking order, as ranx computes it (unsnapped)."""
    entries = collect(tables, queries)
    n_runs, n_pairs = len(tables), len(entries.pair_query)
    n_queries = len(queries)
    query_of_group = np.tile(np.arange(n_queries, dtype=np.int64), n_runs)
    present = np.zeros((n_runs, n_pairs), dtype=bool)
    present[entries.run, entries.pair] = True
    pair_query_code, candidates = _borda_missing(entries, n_runs, n_pairs, query_of_group)
    values = np.zeros((n_runs, n_pairs))
    if method in POSITION_METHODS:
        if method == "rrf":
            contribution = 1 / (params.get("k", 60) + entries.position + 1)
        elif method == "isr":
            contribution = 1 / ((entries.position + 1) ** 2)
        else:  # bordafuse: |D| - p, absent (|D| - n_r + 1) / 2
            contribution = candidates[pair_query_code[entries.pair]] - entries.position
        values[entries.run, entries.pair] = contribution
        if method == "bordafuse":
            run_sizes = entries.sizes.reshape(n_runs, n_queries) if n_queries else np.zeros((n_runs, 0), np.int64)
            for r in range(n_runs):
                absent = ~present[r]
                n_r = run_sizes[r][pair_query_code[absent]]
                values[r, absent] = (candidates[pair_query_code[absent]] - n_r + 1) / 2
            present[:] = True
        count = present.sum(axis=0)
        total = np.zeros(n_pairs)
        for r in range(n_runs):
            total += values[r]
        return _as_table(total * count if method == "isr" else total, entries)  # ranx: ISR through CombMNZ
    if norm == "borda":
        values[entries.run, entries.pair] = 1 - entries.position / candidates[pair_query_code[entries.pair]]
        run_sizes = entries.sizes.reshape(n_runs, n_queries) if n_queries else np.zeros((n_runs, 0), np.int64)
        for r in range(n_runs):
            absent = ~present[r]
            n_r = run_sizes[r][pair_query_code[absent]]
            values[r, absent] = 0.5 - (n_r - 1) / (2 * candidates[pair_query_code[absent]])
        present[:] = True
    else:
        values[entries.run, entries.pair] = normalise(entries, norm)
    return _as_table(combine(method, values, present, params), entries)


def combine(method: str, values: np.ndarray, present: np.ndarray, params: dict) -> np.ndarray:
    """Combine the runs' normalised scores per pair (rows: runs, in input order)."""
    n_runs, n_pairs = values.shape
    count = present.sum(axis=0)
    if method in ("combsum", "wsum", "combmnz", "combanz", "wmnz"):
        weights = params.get("weights") or [1.0] * n_runs
        total = np.zeros(n_pairs)
        for r in range(n_runs):
            total += (weights[r] * values[r]) if method == "wsum" else np.where(present[r], values[r], 0.0)
        if method == "combmnz":
            return total * count
        if method == "combanz":
            return total / count
        if method == "wmnz":
            weight_sum = np.zeros(n_pairs)
            for r in range(n_runs):
                weight_sum += np.where(present[r], float(weights[r]), 0.0)
            return total * weight_sum
        return total
    if method == "combmax":
        return np.where(present, values, -1e9).max(axis=0)
    if method == "combmin":
        return np.where(present, values, 1e9).min(axis=0)
    if method == "combmed":
        return np.nanmedian(np.where(present, values, np.nan), axis=0)
    raise ValueError(f"fusion method {method!r} is not computed natively")


def _as_table(total: np.ndarray, entries: Entries) -> dict[str, dict[str, float]]:
    table: dict[str, dict[str, float]] = {}
    for q, d, v in zip(entries.pair_query, entries.pair_doc, total.tolist()):
        table.setdefault(q, {})[d] = v
    return table
