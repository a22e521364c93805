"""Are the judgments reusable? The leave-one-group-out test (Zobel 1998; Buckley, Dimmick, Soboroff and Voorhees 2007).

A test collection judged on a pool serves later runs only if a run that did
not contribute to the pool is scored fairly. The test simulates such a run:
for each group g,

1. remove from the qrels every judgment of a pair (q, d) that only g's runs
   put in the depth-k pool of the runs (:meth:`Pool.unique_to_group`);
2. score g's runs against these reduced qrels (the removed documents are now
   unjudged: non-relevant for every metric, as in trec_eval);
3. compare: each run's score change ``reduced - full``, its rank among all
   runs before and after (the other groups' runs keep their full scores;
   rank = 1 + the number of runs scoring strictly higher), and, over the
   whole leaderboard, Kendall's tau and tau_AP between the full and the
   reduced rankings (:mod:`evalkit.stats.rank_correlation`; tau_AP takes the
   full ranking as the truth; with tied scores tau_AP,b is given and named).

Small changes, ranks kept and correlations near 1 say the judgments would
score a new run fairly; a group whose runs fall says they found relevant
documents no one else did, so a new run like them would be underrated.
Zobel, "How reliable are the results of large-scale information retrieval
experiments?", SIGIR 1998, https://doi.org/10.1145/290941.291014; Buckley et
al., "Bias and the limits of pooling for large collections", Information
Retrieval 10(6), 2007, https://doi.org/10.1007/s10791-007-9032-x. Scores are
compared after rounding to 12 decimals, so float noise never counts as a swap.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from evalkit.data import Qrels
from evalkit.core.errors import UsageError, listed, unquoted
from evalkit.data.ids import positions_in
from evalkit.judging.pool import Pool, build_pool
from evalkit.core.options import ScoringOptions
from evalkit.scoring.runset import ScoredRun, score_one
from evalkit.stats.rank_correlation import kendall_tau, tau_ap, tau_ap_b
from evalkit.tasks.base import Task

DECIMALS = 12
TAU_AP, TAU_AP_B = "tau_AP", "tau_AP,b"


@dataclass(frozen=True)
class RunChange:
    """One run of the left-out group: its score and rank with full and with reduced judgments."""

    run: str
    full: float
    reduced: float
    full_rank: int
    reduced_rank: int

    @property
    def change(self) -> float:
        """``reduced - full`` (negative: the run loses)."""
        return self.reduced - self.full

    @property
    def rank_change(self) -> int:
        """``reduced_rank - full_rank`` (positive: the run falls that many places)."""
        return self.reduced_rank - self.full_rank


@dataclass(frozen=True)
class GroupReuse:
    """What leaving one group out of the pool does to its runs and to the leaderboard."""

    group: str
    runs: list[RunChange]
    unique_pairs: int  # pairs of the pool only this group contributed
    removed: int  # judgments removed from the qrels (unique pairs that were judged)
    removed_relevant: int  # of them relevant (grade >= the relevance level)
    kendall_tau: float
    tau_ap: float
    tau_ap_variant: str  # TAU_AP, or TAU_AP_B when some scores tie
    reduced_scores: dict[str, float] = field(repr=False)  # the reduced leaderboard: every run's value

    @property
    def largest_drop(self) -> float:
        return min((r.change for r in self.runs), default=0.0)

    @property
    def most_places_lost(self) -> int:
        return max((r.rank_change for r in self.runs), default=0)


@dataclass(frozen=True)
class Reuse:
    """The leave-one-group-out test: the pool, every run's full score, and one :class:`GroupReuse` per group."""

    task: str
    metric: str
    depth: int
    pool: Pool
    full_scores: dict[str, float]
    groups: list[GroupReuse]
    notes: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, float]:
        """The worst case over groups: largest score drop, most places lost, lowest tau and tau_AP."""
        def lowest(values):
            finite = [v for v in values if not np.isnan(v)]
            return min(finite) if finite else float("nan")

        return {
            "largest_drop": min((g.largest_drop for g in self.groups), default=0.0),
            "most_places_lost": max((g.most_places_lost for g in self.groups), default=0),
            "lowest_kendall_tau": lowest([g.kendall_tau for g in self.groups]),
            "lowest_tau_ap": lowest([g.tau_ap for g in self.groups]),
        }


def ranks(values: np.ndarray) -> np.ndarray:
    """Competition ranks: 1 + the number of values strictly greater (equal values share a rank)."""
    return 1 + (values[None, :] > values[:, None]).sum(axis=1)


def correlations(full: np.ndarray, reduced: np.ndarray) -> tuple[float, float, str]:
    """Kendall's tau-b and tau_AP (tau_AP,b when scores tie) of the reduced ranking against the full one."""
    if len(full) < 2:
        return float("nan"), float("nan"), TAU_AP
    tied = len(np.unique(full)) < len(full) or len(np.unique(reduced)) < len(reduced)
    ap = tau_ap_b(full, reduced) if tied else tau_ap(full, reduced)
    return kendall_tau(full, reduced), ap, TAU_AP_B if tied else TAU_AP


def pair_owner_of_judgments(qrels: Qrels, pool: Pool) -> np.ndarray:
    """For each qrels row: the code of the group that alone pooled its (query, document), or -1."""
    n_docs = max(len(pool.doc_ids), 1)
    query = positions_in(qrels.query_ids, pool.query_ids)[qrels.qidx]
    doc = positions_in(qrels.doc_ids, pool.doc_ids)[qrels.didx]
    owner = np.full(qrels.n_rows, -1, dtype=np.int64)
    pooled = (query >= 0) & (doc >= 0)
    keys = pool.pair_query * n_docs + pool.pair_doc  # sorted: pairs are in (query, document) order
    wanted = query[pooled] * n_docs + doc[pooled]
    at = np.minimum(np.searchsorted(keys, wanted), max(len(keys) - 1, 0))
    found = keys[at] == wanted if len(keys) else np.zeros(len(wanted), dtype=bool)
    rows = np.flatnonzero(pooled)[found]
    owner[rows] = pool.unique_to_group()[at[found]]
    return owner


def value_of(item: ScoredRun, metric: str | None) -> float:
    """The compared value: the official score, or the mean of ``metric``."""
    return item.score.official_value if metric is None else item.score.values[metric]


def leave_one_group_out(
    task: Task,
    qrels: Qrels,
    scored: Sequence[ScoredRun],
    groups: Sequence[str],
    depth: int,
    *,
    metric: str | None = None,
    scoring: ScoringOptions | None = None,
) -> Reuse:
    """Run the test on ``scored`` (every run scored on the full ``qrels`` under ``scoring``; ``groups`` gives each run's group).

    ``metric`` (a label among the scored values) is compared instead of the official score.
    """
    scoring = scoring or ScoringOptions()
    relevance_level = scoring.relevance_level
    names = [s.name for s in scored]
    gold_queries = qrels.query_ids.tolist()
    pool = build_pool([s.run.restrict(gold_queries) for s in scored], depth, groups, names)
    owner = pair_owner_of_judgments(qrels, pool)
    judged = qrels.grades >= 0
    full = np.round(np.array([value_of(s, metric) for s in scored], dtype=np.float64), DECIMALS)
    undefined = [name for name, value in zip(names, full.tolist()) if not np.isfinite(value)]
    if undefined:
        label = metric or scored[0].score.official
        raise UsageError(f"{label} is undefined for {listed(undefined, 5, unquoted)}: no leaderboard to test (compare another --metric)")
    full_rank = ranks(full)
    unique_pairs = pool.unique_per_group()
    results = []
    for code, group in enumerate(pool.group_names):
        removed = owner == code
        reduced_qrels = qrels.select(~removed, name=f"{qrels.name} without {group}'s unique documents")
        reduced = full.copy()
        members = [i for i, g in enumerate(groups) if g == group]
        for i in members:
            rescored = score_one(task, reduced_qrels, scored[i].run, names[i], [metric] if metric else None, scoring)
            reduced[i] = round(value_of(rescored, metric), DECIMALS)
        reduced_rank = ranks(reduced)
        tau, ap, variant = correlations(full, reduced)
        results.append(GroupReuse(
            group=group,
            runs=[RunChange(names[i], float(full[i]), float(reduced[i]), int(full_rank[i]), int(reduced_rank[i])) for i in members],
            unique_pairs=int(unique_pairs[group]),
            removed=int(np.count_nonzero(removed & judged)),
            removed_relevant=int(np.count_nonzero(removed & (qrels.grades >= relevance_level))),
            kendall_tau=tau, tau_ap=ap, tau_ap_variant=variant,
            reduced_scores=dict(zip(names, reduced.tolist())),
        ))
    label = metric or (scored[0].score.official if scored else "")
    notes = []
    if len(pool.group_names) < 2:
        notes.append("one group only: leaving it out removes nothing any other group pooled (every unique pair is its own)")
    return Reuse(task=task.name, metric=label, depth=depth, pool=pool, full_scores=dict(zip(names, full.tolist())),
                 groups=results, notes=notes)
