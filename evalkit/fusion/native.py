"""ranx's fusion methods and normalisations computed with numpy over columnar runs: no compilation.

The runs are read as columns (:meth:`evalkit.data.Run.ranked`), every (run,
query, document) becomes one entry, each (run, query) group is normalised
with ``ufunc.reduceat``, and the groups are combined per (query, document)
pair with the same floating-point operations as ranx, in the same order (sums
accumulate left to right from 0), so the fused scores equal ranx's ``fuse``
(cross-checked to 1e-12 in ``tests/fusion/test_fusion_native.py``). Notation, per
run ``r`` and query: ``s`` its scores (list runs: ``D + 1 - rank``, as
:meth:`~evalkit.data.Run.to_scores`), ``n`` how many it retrieved, ``p`` a
document's 0-based position under the ranking rule (score descending, ties by
doc id descending), ``C`` the documents any run retrieved for the query.

Normalisations (ranx.normalization). A (run, query) group whose scores
exceed 2^1000 (sum: 2^960, zmuv: 2^480) is first scaled by an exact power of
two, so ``max - min``, sums and squares cannot overflow near 1e308; the
result is unchanged (scale-invariant), smaller groups are left alone (the
1e-9 floor is not). ranx's zmuv silently drops documents of a partial run
(a division by zero on the missing query inside its parallel loop); here a
missing query is simply absent:

* ``min-max`` ``(s - min) / max(max - min, 1e-9)``; ``min-max-inverted``
  ``(max - s) / max(max - min, 1e-9)``, the run re-sorted by it;
* ``max`` ``s / max(max, 1e-9)``; ``sum`` ``(s - min) / max(sum(s) - n min, 1e-9)``;
* ``zmuv`` ``(s - mean) / max(std, 1e-9)`` (population std);
* ``rank`` ``1 - p / n``; ``borda`` ``1 - p / |C|``, and every document of
  ``C`` the run missed is added with ``0.5 - (n - 1) / (2 |C|)`` (ranked
  after the retrieved ones, by doc id descending: ranx leaves that order to
  its set iteration order, which varies between processes).

Methods (``h`` = the runs retrieving the document, ``v_r`` the normalised
score, 0 where absent; Fox & Shaw, TREC-2 1993; Lee, SIGIR 1997; Wu &
Crestani, CIKM 2002; Cormack et al., SIGIR 2009; Mourao et al., CMIG 2015;
Aslam & Montague, SIGIR 2001):

* ``combsum`` ``sum v``; ``combmnz`` ``sum v * |h|``; ``combanz`` ``sum v / |h|``;
  ``combgmnz`` ``sum v * |h|^gamma``; ``combmax`` / ``combmin`` / ``combmed`` over
  ``h`` (ranx: absent runs count as -1e9 / 1e9 for max / min);
* ``wsum`` ``sum w_r v_r``; ``wmnz`` ``sum v * sum_h w_r``; ``mixed`` ``sum_h w_r v_r * sqrt|h|``;
* ``rrf`` ``sum 1 / (k + p + 1)``; ``isr`` ``sum 1 / (p + 1)^2 * |h|``;
  ``log_isr`` ``... * log|h|``; ``logn_isr`` ``... * log(|h| + sigma)``;
* ``bordafuse`` ``sum (|C| - p)``, a run missing the document gives
  ``(|C| - n + 1) / 2``; ``w_bordafuse`` the same weighted by ``w_r``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from evalkit.data import Run
from evalkit.fusion.methods import FLOOR
from evalkit.fusion.methods import NORMS as NORM_NAMES
SCORE_METHODS = ("combsum", "combmnz", "combmax", "combmin", "combmed", "combanz", "combgmnz", "wsum", "wmnz", "mixed")
POSITION_METHODS = ("rrf", "isr", "log_isr", "logn_isr", "bordafuse", "w_bordafuse")
NORMS = (None, *(n for n in NORM_NAMES if n != "none"))  # every normalisation (None: none)
# largest magnitude each normalisation takes as it is; beyond, a (run, query) group is scaled by a power of two (exact)
GROUP_SAFE_MAGNITUDE = {"min-max": 2.0**1000, "min-max-inverted": 2.0**1000, "sum": 2.0**960, "zmuv": 2.0**480}


def supported(method: str, norm: str | None) -> bool:
    """Whether :func:`fuse_native` computes ``method`` under ``norm`` (else ranx does)."""
    return (method in SCORE_METHODS or method in POSITION_METHODS) and norm in NORMS


@dataclass
class Entries:
    """One row per (run, query, document), grouped by run then query, each group in ranking order."""

    run: np.ndarray  # run index
    query: np.ndarray  # code into the fused queries
    doc: np.ndarray  # code into ``doc_ids``
    score: np.ndarray  # the run's score (float64)
    position: np.ndarray  # 0-based position in its group (float64)
    doc_ids: np.ndarray  # every document id (object)
    n_queries: int


def _codes(values: list, index: dict) -> np.ndarray:
    return np.fromiter((index.setdefault(v, len(index)) for v in values), dtype=np.int64, count=len(values))


def _group_starts(*keys: np.ndarray) -> np.ndarray:
    """First row of each run of equal consecutive keys."""
    n = len(keys[0])
    change = np.zeros(n, dtype=bool)
    change[:1] = True
    for key in keys:
        change[1:] |= key[1:] != key[:-1]
    return np.flatnonzero(change)


def _positions(starts: np.ndarray, n: int) -> np.ndarray:
    """0-based position of each row in its group (groups start at ``starts``)."""
    sizes = np.diff(np.append(starts, n))
    return (np.arange(n) - np.repeat(starts, sizes)).astype(np.float64)


def collect(runs: Sequence[Run], queries: Sequence[str], depth: int | None = None) -> Entries:
    """The entries of ``runs`` over ``queries``, exactly the (query, doc, score) of :meth:`Run.to_scores`."""
    query_index = {q: i for i, q in enumerate(queries)}
    doc_index: dict[str, int] = {}
    columns: list[tuple[np.ndarray, ...]] = []
    for r, run in enumerate(runs):
        ranked = run.ranked()
        keep = ranked.first if depth is None else ranked.first & (ranked.rank <= depth)
        rank = ranked.rank[keep]
        score = ranked.scores[keep] if run.is_scored else (-rank).astype(np.float64) + rank.max(initial=0) + 1
        query = np.array([query_index.get(str(q), -1) for q in run.query_ids.tolist()], dtype=np.int64)[ranked.qidx[keep]]
        wanted = query >= 0
        local = ranked.didx[keep][wanted]
        used = np.unique(local)
        code = np.full(len(run.doc_ids), -1, dtype=np.int64)
        code[used] = _codes(run.doc_ids[used].tolist(), doc_index)
        columns.append((np.full(len(local), r, dtype=np.int64), query[wanted], code[local], score[wanted].astype(np.float64)))
    run_col, query_col, doc_col, score_col = (np.concatenate([c[i] for c in columns]) for i in range(4))
    doc_ids = np.empty(len(doc_index), dtype=object)
    doc_ids[:] = list(doc_index)
    position = _positions(_group_starts(run_col, query_col), len(run_col)) if len(run_col) else np.zeros(0)
    return Entries(run_col, query_col, doc_col, score_col, position, doc_ids, len(queries))


def sequential_sums(values: np.ndarray, starts: np.ndarray, n: int) -> np.ndarray:
    """Each group's sum added left to right from 0 (as ranx's loops; numpy's pairwise sum differs in the last bits).

    Vectorised over groups: one addition per position, over the groups that long.
    """
    sizes = np.diff(np.append(starts, n))
    order = np.argsort(-sizes, kind="stable")
    longest_first = sizes[order]
    first = starts[order]
    sums = np.zeros(len(starts))
    for j in range(int(longest_first[0]) if len(sizes) else 0):
        active = int(np.searchsorted(-longest_first, -j, side="left"))  # groups with size > j
        sums[:active] += values[first[:active] + j]
    out = np.empty_like(sums)
    out[order] = sums
    return out


def _rescale(s: np.ndarray, starts: np.ndarray, group: np.ndarray, limit: float) -> np.ndarray:
    """Groups whose largest magnitude exceeds ``limit`` scaled by a power of two (exact) to about ``limit``."""
    largest = np.maximum.reduceat(np.abs(s), starts)
    huge = largest > limit
    if not huge.any():
        return s
    shift = np.where(huge, np.frexp(largest)[1] - np.frexp(limit)[1], 0)
    return np.ldexp(s, -shift[group])


def normalise(entries: Entries, norm: str | None) -> tuple[np.ndarray, np.ndarray]:
    """(normalised scores, positions) of the entries under ``norm`` other than borda (see the module docstring)."""
    s, position = entries.score, entries.position
    if norm is None or not len(s):
        return s.copy(), position
    starts = _group_starts(entries.run, entries.query)
    sizes = np.diff(np.append(starts, len(s)))
    group = np.repeat(np.arange(len(starts)), sizes)
    n = sizes.astype(np.float64)[group]
    if norm == "rank":
        return 1 - position / n, position
    if norm in GROUP_SAFE_MAGNITUDE:
        s = _rescale(s, starts, group, GROUP_SAFE_MAGNITUDE[norm])
    low, high = np.minimum.reduceat(s, starts)[group], np.maximum.reduceat(s, starts)[group]
    if norm == "min-max":
        return (s - low) / np.maximum(high - low, FLOOR), position
    if norm == "min-max-inverted":  # ranx re-sorts the run by the inverted scores (ties keep their order)
        values = (high - s) / np.maximum(high - low, FLOOR)
        order = np.lexsort((position, -values, group))
        reordered = np.empty_like(position)
        reordered[order] = _positions(starts, len(s))
        return values, reordered
    if norm == "max":
        return s / np.maximum(high, FLOOR), position
    if norm == "sum":
        return (s - low) / np.maximum(sequential_sums(s, starts, len(s))[group] - low * n, FLOOR), position
    if norm == "zmuv":
        deviation = s - sequential_sums(s, starts, len(s))[group] / n
        std = (sequential_sums(deviation * deviation, starts, len(s))[group] / n) ** 0.5
        return deviation / np.maximum(std, FLOOR), position
    raise ValueError(f"normalisation {norm!r} is not computed natively")


def _doc_descending_key(doc_ids: np.ndarray) -> np.ndarray:
    from evalkit.data.ranking import doc_descending_key

    return doc_descending_key(doc_ids) if len(doc_ids) else np.zeros(0, dtype=np.int64)


@dataclass
class Pairs:
    """The fused (query, document) pairs and, per run, the value each run gives each pair."""

    query: np.ndarray
    doc: np.ndarray
    values: np.ndarray  # (runs, pairs); 0 where the run did not retrieve the pair
    present: np.ndarray  # (runs, pairs) bool
    position: np.ndarray  # (runs, pairs); -1 where absent
    group_size: np.ndarray  # (runs, pairs): documents the run retrieved for the pair's query
    candidates: np.ndarray  # per pair: documents any run retrieved for its query


def pair_up(entries: Entries, values: np.ndarray, position: np.ndarray, n_runs: int) -> Pairs:
    """Entries spread over the (query, document) pairs of all runs (pairs sorted by query, then doc code)."""
    n_docs = max(len(entries.doc_ids), 1)
    unique_keys, pair = np.unique(entries.query * n_docs + entries.doc, return_inverse=True)
    pair = pair.ravel()
    n_pairs = len(unique_keys)
    pair_query = unique_keys // n_docs
    grid = np.zeros((n_runs, n_pairs))
    grid[entries.run, pair] = values
    present = np.zeros((n_runs, n_pairs), dtype=bool)
    present[entries.run, pair] = True
    where = np.full((n_runs, n_pairs), -1.0)
    where[entries.run, pair] = position
    per_query = np.bincount(entries.run * entries.n_queries + entries.query, minlength=n_runs * entries.n_queries)
    group_size = per_query.reshape(n_runs, entries.n_queries)[:, pair_query].astype(np.float64)
    candidates = np.bincount(pair_query, minlength=entries.n_queries)[pair_query].astype(np.float64)
    return Pairs(pair_query, unique_keys % n_docs, grid, present, where, group_size, candidates)


def borda_norm(pairs: Pairs, doc_ids: np.ndarray) -> None:
    """ranx's borda normalisation in place: every run then holds every candidate of the query."""
    absent = ~pairs.present
    pairs.values = np.where(absent, 0.5 - (pairs.group_size - 1) / (2 * pairs.candidates), 1 - pairs.position / pairs.candidates)
    run, pair = np.nonzero(absent)
    if len(run):  # missed candidates after the retrieved ones, doc id descending
        order = np.lexsort((_doc_descending_key(doc_ids)[pairs.doc[pair]], pairs.query[pair], run))
        run, pair = run[order], pair[order]
        offset = _positions(_group_starts(run, pairs.query[pair]), len(run))
        pairs.position[run, pair] = pairs.group_size[run, pair] + offset
    pairs.present = np.ones_like(pairs.present)
    pairs.group_size = np.broadcast_to(pairs.candidates, pairs.present.shape).astype(np.float64)


def _running_sum(rows: np.ndarray) -> np.ndarray:
    """Sum over runs, added in run order from 0 (ranx's order)."""
    total = np.zeros(rows.shape[1])
    for row in rows:
        total += row
    return total


def combine(method: str, pairs: Pairs, params: Mapping[str, Any]) -> np.ndarray:
    """The fused score of each pair."""
    n_runs = pairs.values.shape[0]
    weights = np.asarray(params.get("weights") or [1.0] * n_runs, dtype=np.float64)[:, None]
    present, position = pairs.present, pairs.position
    hits = present.sum(axis=0).astype(np.float64)
    if method == "rrf":
        return _running_sum(np.where(present, 1 / (params.get("k", 60) + position + 1), 0.0))
    if method in ("isr", "log_isr", "logn_isr"):
        total = _running_sum(np.where(present, 1 / ((position + 1) ** 2), 0.0))
        if method == "isr":
            return total * hits
        return total * np.log(hits if method == "log_isr" else hits + float(params.get("sigma", 0.01)))
    if method in ("bordafuse", "w_bordafuse"):
        points = np.where(present, pairs.candidates - position, (pairs.candidates - pairs.group_size + 1) / 2)
        return _running_sum(points if method == "bordafuse" else weights * points)
    values = np.where(present, pairs.values, 0.0)
    if method == "combmax":
        return np.where(present, values, -1e9).max(axis=0)
    if method == "combmin":
        return np.where(present, values, 1e9).min(axis=0)
    if method == "combmed":
        ordered = np.sort(np.where(present, values, np.nan), axis=0)  # NaN (absent) last
        columns = np.arange(values.shape[1])
        count = hits.astype(np.int64)
        low, high = ordered[(count - 1) // 2, columns], ordered[count // 2, columns]
        return np.where(count % 2 == 1, low, (low + high) / 2)
    if method == "wsum":
        return _running_sum(weights * values)
    total = _running_sum(values)
    if method == "combsum":
        return total
    if method == "combmnz":
        return total * hits
    if method == "combanz":
        return total / hits
    if method == "combgmnz":
        return total * hits ** float(params["gamma"])
    if method == "wmnz":
        return total * _running_sum(np.where(present, weights, 0.0))
    if method == "mixed":
        return _running_sum(np.where(present, values * weights, 0.0)) * np.sqrt(hits)
    raise ValueError(f"fusion method {method!r} is not computed natively")


def check_params(method: str, params: Mapping[str, Any]) -> None:
    """ranx's own checks on the method parameters, as one-line errors."""
    from evalkit.core.errors import UsageError

    if method == "combgmnz" and "gamma" not in params:
        raise UsageError("fusion method combgmnz needs its gamma parameter (e.g. --param gamma=0.5)")
    if method == "logn_isr" and not 0.0 <= float(params.get("sigma", 0.01)) <= 1.0:
        raise UsageError(f"logn_isr: sigma must lie in [0, 1] (got {params['sigma']})")


def fuse_native(
    runs: Sequence[Run], queries: Sequence[str], method: str, norm: str | None, params: Mapping[str, Any],
    *, depth: int | None = None, name: str = "fused",
) -> Run:
    """The fused run of ``method`` under ``norm`` as ranx computes it (scores not snapped)."""
    if not supported(method, norm):
        raise ValueError(f"{method} under {norm} is not computed natively")
    check_params(method, params)
    entries = collect(runs, queries, depth)
    values, position = normalise(entries, None if norm == "borda" else norm)
    pairs = pair_up(entries, values, position, len(runs))
    if norm == "borda":
        borda_norm(pairs, entries.doc_ids)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        fused = combine(method, pairs, params) if len(pairs.query) else np.zeros(0)
    used_queries, qidx = np.unique(pairs.query, return_inverse=True)
    used_docs, didx = np.unique(pairs.doc, return_inverse=True)
    query_ids = np.empty(len(used_queries), dtype=object)
    query_ids[:] = [queries[q] for q in used_queries.tolist()]
    return Run(query_ids=query_ids, doc_ids=entries.doc_ids[used_docs], qidx=qidx.ravel().astype(np.int64),
               didx=didx.ravel().astype(np.int64), scores=fused.astype(np.float64), name=name)
