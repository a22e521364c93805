"""The depth-k pool of a set of runs: what assessors judge, who put it there, and what each group alone found.

Definitions (TREC pooling; Sparck Jones and van Rijsbergen 1975, Voorhees and
Harman 2005, ch. 2; Zobel 1998 for unique contributions):

* ``top_k(r, q)``: the documents at ranks 1..k of run ``r`` for query ``q``
  under evalkit's ranking rule (:func:`evalkit.data.ranking.rank_run`: score
  descending, ties by document id descending; list runs in list order; a
  repeated document counts once, at its first position, and its repeat still
  takes a rank -- exactly the documents ``--depth k`` scores);
* ``pool(q) = U_r top_k(r, q)``; the pool's size is ``sum_q |pool(q)|``;
* the **unique contribution** of run ``r``: the pairs ``(q, d)`` of the pool
  that no other run holds in its top k; of group ``g``: those no run of
  another group holds (a team's documents that only its own runs found).

Pairs are kept in a canonical order (queries, then documents, by their ids in
byte order), so a pool depends on the runs' contents only, never on the order
they are given in; :meth:`Pool.assessment_order` gives the seeded random
order in which assessors see each query's documents.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from evalkit.data import Run
from evalkit.core.errors import UsageError, listed, unquoted
from evalkit.data.ids import factorize


def check_depth(depth: int) -> int:
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1:
        raise UsageError(f"pool depth must be a positive integer (got {depth!r})")
    return int(depth)


def distinct(keys: np.ndarray) -> np.ndarray:
    """The distinct values of an integer array, ascending (a sort and a comparison: np.unique's hash path is slower here)."""
    ordered = np.sort(keys)
    return ordered[np.r_[True, ordered[1:] != ordered[:-1]]] if len(ordered) else ordered


def _sorted_codes(codes: np.ndarray, uniques: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Codes renumbered so that code order is the byte order of the ids (UTF-8 byte order = code point order)."""
    order = np.argsort(np.asarray(uniques, dtype=str), kind="stable")
    renumber = np.empty(len(order), dtype=np.int64)
    renumber[order] = np.arange(len(order), dtype=np.int64)
    return renumber[codes], uniques[order]


@dataclass(frozen=True, eq=False)
class Pool:
    """The pooled (query, document) pairs and which runs put each one there.

    ``pair_query``/``pair_doc`` index ``query_ids``/``doc_ids`` (both in
    byte order), one entry per pooled pair, sorted by query then document.
    ``member_pair``/``member_run`` list every (pair, run) such that the run
    holds the pair in its top ``depth``, sorted by pair then run.
    """

    depth: int
    runs: tuple[str, ...]
    groups: tuple[str, ...]  # the group of each run
    query_ids: np.ndarray
    doc_ids: np.ndarray
    pair_query: np.ndarray
    pair_doc: np.ndarray
    member_pair: np.ndarray
    member_run: np.ndarray

    # ----------------------------------------------------------- sizes
    @property
    def size(self) -> int:
        """Pooled (query, document) pairs: the number of judgments the pool asks for."""
        return int(len(self.pair_query))

    @property
    def group_names(self) -> list[str]:
        """The distinct groups, in byte order."""
        return sorted(set(self.groups))

    def sizes_per_query(self) -> np.ndarray:
        """|pool(q)| for each query of ``query_ids``."""
        return np.bincount(self.pair_query, minlength=len(self.query_ids))

    def runs_per_pair(self) -> np.ndarray:
        """How many runs hold each pair in their top ``depth``."""
        return np.bincount(self.member_pair, minlength=self.size)

    def _member_group(self) -> tuple[np.ndarray, list[str]]:
        names = self.group_names
        code = {g: i for i, g in enumerate(names)}
        return np.array([code[g] for g in self.groups], dtype=np.int64)[self.member_run], names

    def groups_per_pair(self) -> np.ndarray:
        """How many groups have a run holding each pair."""
        member_group, names = self._member_group()
        pairs = distinct(self.member_pair * max(len(names), 1) + member_group) // max(len(names), 1)
        return np.bincount(pairs, minlength=self.size)

    def placed_per_run(self) -> np.ndarray:
        """Pairs each run puts in the pool (its top ``depth`` documents over all queries)."""
        return np.bincount(self.member_run, minlength=len(self.runs))

    def placed_per_group(self) -> dict[str, int]:
        """Distinct pairs the runs of each group put in the pool."""
        member_group, names = self._member_group()
        groups = distinct(self.member_pair * max(len(names), 1) + member_group) % max(len(names), 1)
        return dict(zip(names, np.bincount(groups, minlength=len(names)).tolist()))

    # ----------------------------------------------------------- unique contributions
    def unique_to_run(self) -> np.ndarray:
        """For each pair: the run that alone holds it, or -1 (held by several)."""
        owner = np.full(self.size, -1, dtype=np.int64)
        alone = self.runs_per_pair() == 1
        single = alone[self.member_pair]
        owner[self.member_pair[single]] = self.member_run[single]
        return owner

    def unique_to_group(self) -> np.ndarray:
        """For each pair: the code (into :attr:`group_names`) of the group whose runs alone hold it, or -1."""
        member_group, _ = self._member_group()
        owner = np.full(self.size, -1, dtype=np.int64)
        alone = self.groups_per_pair() == 1
        single = alone[self.member_pair]
        owner[self.member_pair[single]] = member_group[single]
        return owner

    def unique_per_run(self) -> np.ndarray:
        """Each run's unique contribution (pairs no other run holds)."""
        owner = self.unique_to_run()
        return np.bincount(owner[owner >= 0], minlength=len(self.runs))

    def unique_per_group(self) -> dict[str, int]:
        """Each group's unique contribution (pairs no run of another group holds)."""
        owner = self.unique_to_group()
        counts = np.bincount(owner[owner >= 0], minlength=len(self.group_names))
        return dict(zip(self.group_names, counts.tolist()))

    def group_pairs(self, group: str) -> tuple[np.ndarray, np.ndarray]:
        """(query ids, document ids) of the pairs only ``group`` contributed."""
        if group not in self.group_names:
            raise UsageError(f"no group {group!r} in the pool (groups: {listed(self.group_names, 10, unquoted)})")
        pairs = np.flatnonzero(self.unique_to_group() == self.group_names.index(group))
        return self.query_ids[self.pair_query[pairs]], self.doc_ids[self.pair_doc[pairs]]

    def retrieved_by(self) -> list[list[int]]:
        """For each pair, the runs (indices into :attr:`runs`) holding it, ascending."""
        bounds = np.searchsorted(self.member_pair, np.arange(self.size + 1))
        runs = self.member_run.tolist()
        return [runs[a:b] for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist())]

    # ----------------------------------------------------------- order for assessors
    def assessment_order(self, seed: int) -> np.ndarray:
        """Pair indices: queries in byte order, each query's documents in a seeded random order.

        A document's place is the rank of ``BLAKE2b-64(seed; query, document)``
        among its query's documents: the same seed gives the same order on any
        machine, and adding runs (or queries) to a pool never reorders the
        documents already in it, it only interleaves the new ones.
        """
        key = int(seed).to_bytes(8, "little", signed=False)
        queries, docs = self.query_ids.tolist(), self.doc_ids.tolist()
        draws = np.fromiter(
            (int.from_bytes(hashlib.blake2b(f"{queries[q]}\x00{docs[d]}".encode("utf-8", "surrogatepass"), digest_size=8,
                                            key=key).digest(), "little")
             for q, d in zip(self.pair_query.tolist(), self.pair_doc.tolist())),
            dtype=np.uint64, count=self.size,
        )
        return np.lexsort((self.pair_doc, draws, self.pair_query))


def build_pool(runs: Sequence[Run], depth: int, groups: Sequence[str] | None = None, names: Sequence[str] | None = None) -> Pool:
    """The depth-``depth`` pool of ``runs``; ``groups`` gives each run's group (default: each run its own).

    ``names`` default to the runs' own names (they must be distinct).
    """
    depth = check_depth(depth)
    if not runs:
        raise UsageError("a pool needs at least one run")
    names = [r.name for r in runs] if names is None else list(names)
    groups = list(names) if groups is None else [str(g) for g in groups]
    if len(names) != len(runs) or len(groups) != len(runs):
        raise UsageError(f"{len(runs)} runs, {len(names)} names and {len(groups)} groups: give one of each per run")
    if len(set(names)) != len(names):
        raise UsageError("two runs have the same name; name them apart")
    queries, docs, owners = [], [], []
    for index, run in enumerate(runs):
        ranked = run.ranked()
        keep = ranked.first & (ranked.rank <= depth)
        queries.append(run.query_ids[ranked.qidx[keep]])
        docs.append(run.doc_ids[ranked.didx[keep]])
        owners.append(np.full(int(keep.sum()), index, dtype=np.int64))
    qcode, query_ids = factorize(np.concatenate(queries).tolist())
    dcode, doc_ids = factorize(np.concatenate(docs).tolist())
    qcode, query_ids = _sorted_codes(qcode, query_ids)
    dcode, doc_ids = _sorted_codes(dcode, doc_ids)
    run_code = np.concatenate(owners)
    n_docs, n_runs = max(len(doc_ids), 1), len(runs)
    membership = distinct((qcode * n_docs + dcode) * n_runs + run_code)  # a run holds a pair once (first occurrences)
    pair_key, member_run = membership // n_runs, membership % n_runs
    starts = np.r_[True, pair_key[1:] != pair_key[:-1]] if len(pair_key) else np.zeros(0, dtype=bool)
    keys, member_pair = pair_key[starts], np.cumsum(starts) - 1  # pair_key is sorted: pairs in (query, document) order
    return Pool(
        depth=depth, runs=tuple(names), groups=tuple(groups), query_ids=query_ids, doc_ids=doc_ids,
        pair_query=keys // n_docs, pair_doc=keys % n_docs, member_pair=member_pair.astype(np.int64), member_run=member_run,
    )
