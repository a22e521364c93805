"""Scoring a run against qrels: the query-set policy, the join, and the result.

Missing-query policy (printed with every result):

* ``zero`` (default, as leaderboards do): every gold query counts; a query the
  run does not answer scores 0 on every metric.
* ``skip``: only queries both in the gold and in the run are averaged
  (trec_eval without ``-c``).
* ``error``: refuse to score when the run misses any gold query.

Queries in the run but not in the gold are never scored; they are counted and
reported. A run that misses more than :data:`PARTIAL_THRESHOLD` of the gold
queries is probably for another split: :func:`evaluate` refuses it unless
``allow_partial`` is set.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Sequence

import numpy as np

from evalkit.data import Qrels, Run
from evalkit.data.ids import positions_in
from evalkit.native import kernels
from evalkit.core.errors import PartialRunError, UsageError
from evalkit.metrics import parse_metric
from evalkit.metrics.base import Judged, Metric, counts_at_level
from evalkit.data.ranking import RankedRun

MISSING_POLICIES = {
    "zero": "gold queries missing from the run score 0",
    "skip": "gold queries missing from the run are left out of the mean",
    "error": "a run missing any gold query is refused",
}
PARTIAL_THRESHOLD = 0.10


@dataclass(frozen=True, eq=False)
class QueryMatch:
    """How the run's queries relate to the gold's (the result of :func:`match_queries`)."""

    gold: np.ndarray  # gold query ids (after any task filter)
    run_to_gold: np.ndarray  # per run query code: gold position or -1
    gold_only: list[str]
    run_only: list[str]
    excluded: list[str] = field(default_factory=list)  # gold queries dropped by the task filter
    kept: np.ndarray | None = None  # per qrels query: a gold query of the evaluation (gold = qrels.query_ids[kept])


def match_queries(run: Run, qrels: Qrels, keep_gold: np.ndarray | None = None) -> QueryMatch:
    """Map run queries onto gold queries; ``keep_gold`` filters gold positions (task rules)."""
    gold_all = qrels.query_ids
    keep = np.ones(len(gold_all), dtype=bool) if keep_gold is None else keep_gold
    gold = gold_all[keep]
    read_against = run.judgments_for(qrels)  # a run read against this gold looked its queries up there as it went
    if read_against is None:
        run_to_gold = positions_in(run.query_ids, gold)
    elif keep_gold is None:
        run_to_gold = read_against.gold_of
    else:  # each gold query's place in ``gold``, looked up for the run's queries found there
        found = read_against.gold_of >= 0
        run_to_gold = np.full(len(found), -1, dtype=np.int64)
        run_to_gold[found] = kept_positions(keep)[read_against.gold_of[found]]
    answered = np.zeros(len(gold), dtype=bool)
    answered[run_to_gold[run_to_gold >= 0]] = True
    dropped = set(gold_all[~keep].tolist())
    run_only = [q for q in run.query_ids[run_to_gold < 0].tolist() if q not in dropped]
    return QueryMatch(
        gold=gold,
        run_to_gold=run_to_gold,
        gold_only=gold[~answered].tolist(),
        run_only=run_only,
        excluded=gold_all[~keep].tolist(),
        kept=keep,
    )


def kept_positions(keep: np.ndarray) -> np.ndarray:
    """Per gold query (``keep``: a task's mask over the qrels' queries), its place among the kept ones; -1 where dropped."""
    return np.where(keep, np.cumsum(keep) - 1, -1)


def sort_gold(qrels: Qrels) -> None:
    """Take the gold's sorts that scoring any run on it needs (:meth:`~evalkit.data.Qrels.ideal_order`,
    :meth:`~evalkit.data.Qrels.query_order`; cached on it): called before the runs are read, they overlap a run's
    read-ahead instead of following it."""
    qrels.ideal_order()
    qrels.query_order()


def check_partial(sets: QueryMatch, run_label: str, gold_label: str) -> None:
    """Raise :class:`PartialRunError` when the run misses many gold queries."""
    n_gold = len(sets.gold)
    if n_gold and len(sets.gold_only) > PARTIAL_THRESHOLD * n_gold:
        answered = n_gold - len(sets.gold_only)
        raise PartialRunError(
            f"{run_label}: answers only {answered} of {n_gold} queries in {gold_label} "
            f"({len(sets.gold_only)} gold-only, {len(sets.run_only)} run-only queries); "
            "wrong split? pass --allow-partial to score anyway"
        )


def judge(
    run: Run, qrels: Qrels, sets: QueryMatch, evaluated: np.ndarray, relevance_level: float = 1, depth: int | None = None,
    pool: bool = False,
) -> Judged:
    """Join the ranked run with the qrels for the gold positions ``evaluated``; ``depth`` keeps the top of each ranking.

    The :class:`~evalkit.metrics.base.Judged` holds the judged rows only (a
    5,000,000-row run with 250,000 judgments gives at most 250,000 rows): every
    metric is a function of the judged rows, their ranks and the number
    retrieved per query.
    """
    n_gold, n_eval = len(sets.gold), len(evaluated)
    ideal = qrels.ideal_order()  # each query's judgments of grade >= 0, grade descending: its ideal ranking
    if sets.kept is None and n_eval == n_gold and np.array_equal(evaluated, np.arange(n_eval)):
        # every gold query evaluated (the default): evaluated positions are the gold's query codes
        row_qpos, jq, jd, jg = qrels.qidx, qrels.qidx, qrels.didx, qrels.grades
        run_query_pos = sets.run_to_gold
        answered_pos = run_query_pos[run_query_pos >= 0]
    else:
        eval_pos = np.full(max(n_gold, 1), -1, dtype=np.int64)  # one slot at least: the lookups below index it (a task may keep no gold query)
        eval_pos[evaluated] = np.arange(n_eval)
        kept = np.ones(len(qrels.query_ids), dtype=bool) if sets.kept is None else sets.kept  # gold = qrels.query_ids[kept]
        qrels_to_gold = kept_positions(kept)
        # judgments of the evaluated queries (per judgment row: its query's evaluated position, -1 for none)
        row_qpos = qrels_to_gold[qrels.qidx]
        row_qpos = np.where(row_qpos >= 0, eval_pos[np.maximum(row_qpos, 0)], -1)
        jkeep = row_qpos >= 0
        jq, jd, jg = row_qpos[jkeep], qrels.didx[jkeep], qrels.grades[jkeep]
        run_query_pos = np.where(sets.run_to_gold >= 0, eval_pos[np.maximum(sets.run_to_gold, 0)], -1)  # per run query
        answered_pos = eval_pos[sets.run_to_gold[sets.run_to_gold >= 0]]
        ideal = ideal[jkeep[ideal]]  # the evaluated queries' (their positions rise with the codes: the order is theirs)

    # the judged rows of the evaluated queries' rankings; unjudged rows are only counted (num_ret)
    read_against = run.judgments_for(qrels)  # a run read against this gold: ranked as it was read (evalkit.io.prejudged)
    if read_against is not None:
        qpos, rank, grade, pool_qpos, pool_rank = read_against.judged(run_query_pos, depth, pool)
        retrieved = read_against.retrieved(depth)
    else:
        qpos, rank, grade, pool_qpos, pool_rank, retrieved = _ranked_and_joined(run, qrels, jq, jd, jg, run_query_pos, n_eval, depth,
                                                                                pool)

    num_rel, num_nonrel = counts_at_level(jq, jg, relevance_level, n_eval)
    in_run = np.zeros(n_eval, dtype=bool)
    in_run[answered_pos[answered_pos >= 0]] = True
    return Judged(
        query_ids=sets.gold[evaluated],
        qpos=qpos,
        rank=rank,
        grade=grade,
        relevance_level=relevance_level,
        num_rel=num_rel,
        num_nonrel=num_nonrel,
        num_ret=_per_evaluated_query(retrieved, run_query_pos, n_eval),
        in_run=in_run,
        judged_qpos=row_qpos[ideal],
        judged_gain=qrels.grades[ideal],
        pool_qpos=pool_qpos,
        pool_rank=pool_rank,
    )


def _ranked_and_joined(run: Run, qrels: Qrels, jq: np.ndarray, jd: np.ndarray, jg: np.ndarray, run_query_pos: np.ndarray, n_eval: int,
                       depth: int | None, pool: bool) -> tuple[np.ndarray, ...]:
    """``(qpos, rank, grade, pool_qpos, pool_rank, retrieved per run query)`` of any run: ranked whole by the ranking
    rule, its rows joined with the judgments ``jq`` (evaluated position), ``jd`` (qrels doc code), ``jg`` (grade),
    keyed by (evaluated position, qrels doc code)."""
    n_docs = max(len(qrels.doc_ids), 1)
    jkey = jq * n_docs + jd
    order = np.argsort(jkey, kind="stable")
    jkey_sorted, jg_sorted = jkey[order], jg[order]
    ranked = run.ranked()
    run_to_qdoc = positions_in(run.doc_ids, qrels.doc_ids)
    qpos, rank, grade = _judged_rows(ranked, run_query_pos, run_to_qdoc, jkey_sorted, jg_sorted, n_docs, n_eval, depth)
    pool_qpos = pool_rank = np.zeros(0, dtype=np.int64)
    if pool:  # the same pass for the documents judged with a negative grade (in the pool, not judged)
        flipped = np.where(jg_sorted < 0, 0.0, np.nan)
        pool_qpos, pool_rank, _ = _judged_rows(ranked, run_query_pos, run_to_qdoc, jkey_sorted, flipped, n_docs, n_eval, depth)
    retrieved = ranked.rows_per_query(len(run_query_pos))
    if depth is not None:
        retrieved = np.minimum(retrieved, depth)
    return qpos, rank, grade, pool_qpos, pool_rank, retrieved


def _judged_rows(ranked: RankedRun, run_query_pos: np.ndarray, run_to_qdoc: np.ndarray, jkey_sorted: np.ndarray, jg_sorted: np.ndarray,
                 n_docs: int, n_eval: int, depth: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(query position, rank, grade) of each ranked row whose document is judged (grade >= 0) for its evaluated query.

    A repeated document counts at its first position only; ``depth`` keeps the
    top of each ranking. One pass in C (:mod:`evalkit.native._native`, each query's
    judgments at hand while its rows go by); else numpy: a document judged for
    some query first, then the (query, document) key looked up.
    """
    found = kernels.judged_rows(ranked.qidx, ranked.didx, ranked.rank, ranked.first, run_query_pos, run_to_qdoc,
                                np.searchsorted(jkey_sorted // n_docs, np.arange(n_eval + 1)), jkey_sorted % n_docs, jg_sorted, depth, n_docs)
    if found is not None:
        return found
    rows = np.flatnonzero((run_to_qdoc >= 0)[ranked.didx])
    qpos, rank = run_query_pos[ranked.qidx[rows]], ranked.rank[rows]
    keep = (qpos >= 0) & ranked.first[rows]
    if depth is not None:
        keep &= rank <= depth
    rows, qpos, rank = rows[keep], qpos[keep], rank[keep]
    grade = np.full(len(rows), np.nan)
    if len(jkey_sorted) and len(rows):
        rkey = qpos * n_docs + run_to_qdoc[ranked.didx[rows]]
        at = np.minimum(np.searchsorted(jkey_sorted, rkey), len(jkey_sorted) - 1)
        grade = np.where(jkey_sorted[at] == rkey, jg_sorted[at], np.nan)
    judged_row = grade >= 0  # NaN (not judged for this query) and negative grades (unjudged, trec_eval) drop out
    return qpos[judged_row], rank[judged_row], grade[judged_row]


def _per_evaluated_query(per_run_query: np.ndarray, run_query_pos: np.ndarray, n_eval: int) -> np.ndarray:
    """Per evaluated query: the rows retrieved (``per_run_query``: per run query, repeated documents included)."""
    out = np.zeros(n_eval, dtype=np.float64)
    answered = run_query_pos >= 0
    out[run_query_pos[answered]] = per_run_query[answered]
    return out


@dataclass(frozen=True, eq=False)
class Evaluation:
    """Per-query values and means of some metrics for one run against one gold."""

    run_name: str
    metrics: list[Metric]
    query_ids: np.ndarray
    per_query: dict[str, np.ndarray]
    missing: str
    n_gold: int
    n_run: int
    gold_only: list[str]
    run_only: list[str]
    excluded: list[str]
    warnings: list[str]
    judged: Judged | None = None
    depth: int | None = None  # only the top ``depth`` of each ranking counted (trec_eval -M)
    run_tag: str | None = None  # the TREC run tag, trec_eval's runid
    judged_only: bool = False  # condensed lists (trec_eval -J)
    qrels_relevant: int = 0  # judgments with a grade > 0 in the gold's queries (trec_eval -c prints it as num_rel of 'all')
    standardized: bool = False  # per-query values are z-scores (trec_eval -Z)
    judgment_groups: int = 0  # per-query values averaged over this many judgment groups (trec_eval -R qrels_jg)

    def mean(self, metric: Metric | str) -> float:
        """The metric's summary over the evaluated queries: the mean (NaN left out), or its own aggregate (sums, GMAP).

        Accumulated in query-id order (byte-wise), as trec_eval does, so the
        printed decimals match its output.
        """
        if isinstance(metric, str):
            metric = next((m for m in self.metrics if m.label == metric), None) or parse_metric(metric)
        if metric.text:
            return float("nan")  # text per query (relstring, runid): no summary
        order = self.__dict__.get("_order")  # set by evaluate() from the gold's order
        if order is None:
            order = np.argsort(np.asarray(self.query_ids, dtype=str), kind="stable")
            object.__setattr__(self, "_order", order)
        return metric.aggregate(self.per_query[metric.label][order], self.standardized)

    @property
    def means(self) -> dict[str, float]:
        return {m.label: self.mean(m) for m in self.metrics}

    def values_for(self, query_ids: Sequence[str], metric: Metric | str) -> np.ndarray:
        """Per-query values aligned to ``query_ids`` (NaN where not evaluated)."""
        values = self.per_query[metric if isinstance(metric, str) else metric.label]
        position = {q: i for i, q in enumerate(self.query_ids.tolist())}
        return np.array([values[position[q]] if q in position else np.nan for q in query_ids])


def run_warnings(run: Run, limit: int = 5) -> list[str]:
    """Warnings carried by the run plus repeated documents found while ranking."""
    warnings = list(run.warnings)
    dup = run.duplicated_queries()
    if len(dup):
        names = ", ".join(str(run.query_ids[q]) for q in dup[:limit])
        more = f" and {len(dup) - limit} more" if len(dup) > limit else ""
        warnings.append(
            f"{len(dup)} queries list a document more than once (e.g. {names}{more}); "
            "each document counts at its first position"
        )
    return warnings


def evaluate(
    run: Run,
    qrels: Qrels,
    metrics: Sequence[Metric],
    *,
    missing: str = "zero",
    relevance_level: float = 1,
    allow_partial: bool = False,
    keep_gold: np.ndarray | None = None,
    depth: int | None = None,
    judged_only: bool = False,
    num_docs: int = 0,
) -> Evaluation:
    """Score ``run`` against ``qrels`` on ``metrics`` under the missing-query policy.

    ``depth`` = trec_eval ``-M``: only the first ``depth`` documents of each
    ranking (after the ranking rule) count, for every metric.
    ``judged_only`` = trec_eval ``-J``: every metric on the condensed lists
    (the top ``depth``, less each unjudged document; Sakai 2007).
    ``num_docs`` = trec_eval ``-N``: the collection size (only ``utility`` reads it).
    """
    if missing not in MISSING_POLICIES:
        raise UsageError(f"unknown missing-query policy {missing!r} (choose zero, skip or error)")
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1):
        raise UsageError(f"--depth must be a positive integer (got {depth!r})")
    if isinstance(relevance_level, bool) or not isinstance(relevance_level, (int, float, np.integer, np.floating)) \
            or not np.isfinite(relevance_level):
        raise UsageError(f"--relevance-level must be a finite number (got {relevance_level!r})")
    sets = match_queries(run, qrels, keep_gold)
    run_label = run.source.path if run.source else run.name
    gold_label = qrels.source.path if qrels.source else qrels.name
    if not allow_partial:
        check_partial(sets, run_label, gold_label)
    if missing == "error" and sets.gold_only:
        shown = ", ".join(sets.gold_only[:5])
        raise UsageError(f"{run_label}: misses {len(sets.gold_only)} gold queries (e.g. {shown}) and --missing is error")
    answered = np.ones(len(sets.gold), dtype=bool)
    if missing == "skip":
        answered[:] = False
        answered[sets.run_to_gold[sets.run_to_gold >= 0]] = True
    evaluated = np.flatnonzero(answered)
    judged = judge(run, qrels, sets, evaluated, relevance_level, depth, pool=any(m.needs_pool for m in metrics) and not judged_only)
    if num_docs:
        judged = replace(judged, num_docs=int(num_docs))
    if judged_only:
        judged = judged.condensed()
    per_query = {m.label: m.compute(judged) for m in metrics}
    evaluation = Evaluation(
        run_name=run.name,
        metrics=list(metrics),
        query_ids=judged.query_ids,
        per_query=per_query,
        missing=missing,
        n_gold=len(sets.gold),
        n_run=len(run.query_ids),
        gold_only=sets.gold_only,
        run_only=sets.run_only,
        excluded=sets.excluded,
        warnings=run_warnings(run),
        judged=judged,
        depth=depth,
        run_tag=run.tag,
        judged_only=judged_only,
        qrels_relevant=_qrels_relevant(qrels, sets),
    )
    # the order of its means (the evaluated queries by id, byte-wise): the gold's, kept for these queries
    codes = np.flatnonzero(np.ones(len(qrels.query_ids), dtype=bool) if sets.kept is None else sets.kept)[evaluated]
    place = np.full(len(qrels.query_ids), -1, dtype=np.int64)
    place[codes] = np.arange(len(codes))
    order = place[qrels.query_order()]
    object.__setattr__(evaluation, "_order", order[order >= 0])
    return evaluation


def _qrels_relevant(qrels: Qrels, sets: QueryMatch) -> int:
    """Judgments with a grade > 0 for the gold queries of the evaluation (those a task rule keeps)."""
    positive = qrels.grades > 0
    if sets.kept is not None:
        positive &= sets.kept[qrels.qidx]
    return int(np.count_nonzero(positive))
