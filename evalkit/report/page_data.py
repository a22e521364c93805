"""Everything the HTML page shows, as one dict: the same data ``--json`` writes.

:func:`build_page_data` takes a ranked :class:`~evalkit.scoring.leaderboard.Leaderboard`
(from ``evalkit leaderboard``, or built from the runs of ``evalkit report`` by
:func:`board_of_runs`), the gold and optional texts, and adds to the task's
metrics Judged@k and every metric's bound with unjudged documents as
relevant (:mod:`evalkit.metrics.judgments`). Sections: ``meta``, ``board``
(:mod:`evalkit.report.page_board`), ``queries``/``docs``/``gold``/``runs``/``rbo``
(:mod:`evalkit.report.page_queries`), ``figures`` and ``manifest``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from evalkit.stats.comparison import CompareOptions
from evalkit.data import Qrels
from evalkit.data.ids import positions_in
from evalkit.metrics.evaluation import Evaluation
from evalkit.metrics.judgments import bounds, with_metric
from evalkit.core.safetext import shown_path
from evalkit.scoring.leaderboard import Leaderboard, adjacent_tests, rank_entries
from evalkit.metrics import parse_metric
from evalkit.report import analysis
from evalkit.report.page_board import board_section
from evalkit.report.page_queries import queries_section
from evalkit.scoring.runset import ScoredRun

SCHEMA = "evalkit-page/1"


@dataclass
class PageInputs:
    kind: str  # "report" or "leaderboard"
    title: str
    board: Leaderboard
    qrels: Qrels
    baseline: str
    k: int = 10  # documents shown per run and query
    texts: Mapping[str, str] | None = None  # query texts (default: the gold's)
    corpus: Any = None  # evalkit.data.corpus.Corpus for document texts
    manifest: Mapping[str, Any] = field(default_factory=dict)
    policy: Sequence[str] = ()
    pair: tuple[str, str] | None = None  # default runs A and B of the explorer
    official_components: Sequence[str] = ()  # per-query metrics whose mean is the official score, if it is one
    rbo_p: float = 0.9
    length_buckets: int = 4


def board_of_runs(task: str, gold: str, scored: Sequence[ScoredRun], metric: str, test: str, options: CompareOptions) -> Leaderboard:
    """A leaderboard of the runs given to ``evalkit report`` (ranked by official score, adjacent ranks tested)."""
    entries = rank_entries(scored, {s.name: shown_path(s.path) for s in scored})
    adjacent = adjacent_tests(entries, metric, test, options) if len(entries) > 1 else []
    n_gold = scored[0].score.evaluation.n_gold if scored else 0
    return Leaderboard(task, gold, n_gold, metric, test, options, entries, adjacent, [], [], [])


def page_query_ids(qrels: Qrels, evaluations: Sequence[Evaluation]) -> np.ndarray:
    """Every query some run was evaluated on, in gold order."""
    keep = np.zeros(len(qrels.query_ids), dtype=bool)
    for evaluation in evaluations:
        where = positions_in(np.asarray(evaluation.query_ids, dtype=object), qrels.query_ids)
        keep[where[where >= 0]] = True
    return qrels.query_ids[keep]


def figures_section(scored: Sequence[ScoredRun], evaluations: Sequence[Evaluation], page_ids: np.ndarray,
                    texts: Mapping[str, str] | None, metric: str, n_buckets: int) -> dict[str, Any]:
    """Rank-of-first-relevant counts per run and query-length buckets (with the default metric's means)."""
    ranks = {s.name: analysis.rank_distribution(ev) for s, ev in zip(scored, evaluations)}
    buckets = analysis.length_buckets(page_ids.tolist(), texts or {}, n_buckets)
    means = []
    for ev in evaluations:
        values = dict(zip(ev.query_ids.tolist(), ev.per_query[metric].tolist())) if metric in ev.per_query else {}
        row = []
        for b in buckets:
            defined = [values[q] for q in b.query_ids if q in values and values[q] == values[q]]
            row.append(float(np.mean(defined)) if defined else float("nan"))
        means.append(row)
    return {
        "rank_buckets": analysis.RANK_BUCKETS,
        "first_relevant": [[ranks[s.name][b] for b in analysis.RANK_BUCKETS] for s in scored],
        "length_buckets": [{"label": b.label, "low": b.low, "high": b.high, "n": len(b.query_ids)} for b in buckets],
        "length_means": {"metric": metric, "runs": means},
    }


def build_page_data(inputs: PageInputs) -> dict[str, Any]:
    board = inputs.board
    scored = [e.scored for e in board.entries]
    names = [s.name for s in scored]
    judged_metric = parse_metric(f"judged@{inputs.k}")
    evaluations = [with_metric(s.score.evaluation, judged_metric) for s in scored]
    found = {s.name: bounds(s.run, inputs.qrels, ev) for s, ev in zip(scored, evaluations)}
    columns = list(scored[0].score.values) if scored else []
    if judged_metric.label not in columns:
        columns.append(judged_metric.label)
    means = {s.name: {**s.score.values, judged_metric.label: ev.mean(judged_metric)} for s, ev in zip(scored, evaluations)}
    texts = inputs.texts if inputs.texts is not None else inputs.qrels.texts
    page_ids = page_query_ids(inputs.qrels, evaluations)
    baseline = names.index(inputs.baseline) if inputs.baseline in names else 0
    per_query = [m.label for m in evaluations[0].metrics] if evaluations else []
    metric = board.metric if board.metric in per_query else (per_query[0] if per_query else "")
    pair = inputs.pair
    if pair is None and len(names) > 1:
        pair = (names[baseline], next(n for n in names if n != names[baseline]))
    first = scored[0].score.evaluation if scored else None
    data: dict[str, Any] = {
        "schema": SCHEMA,
        "meta": {
            "kind": inputs.kind, "title": inputs.title, "task": board.task, "gold": shown_path(board.gold), "n_gold": board.n_gold,
            "n_queries": int(len(page_ids)), "official": scored[0].score.official if scored else "",
            "metric": metric, "metrics": [c for c in columns if c in per_query] + [m for m in per_query if m not in columns],
            "k": inputs.k, "baseline": names[baseline] if names else "", "pair": list(pair) if pair else None,
            "rbo_p": inputs.rbo_p, "missing": first.missing if first else "", "depth": first.depth if first else None,
            "relevance_level": float(first.judged.relevance_level) if first is not None and first.judged is not None else 1.0,
            "has_query_text": bool(texts), "has_doc_text": inputs.corpus is not None,
            "policy": list(inputs.policy), "evalkit_version": inputs.manifest.get("evalkit_version", ""),
            "created": inputs.manifest.get("created", ""),
        },
        "board": board_section(board, names[baseline] if names else "", columns, means, found, inputs.official_components),
        "figures": figures_section(scored, evaluations, page_ids, texts, metric, inputs.length_buckets) if scored else {},
        "manifest": dict(inputs.manifest),
    }
    if scored:
        runs = [(s.run, ev, found[s.name]) for s, ev in zip(scored, evaluations)]
        data.update(queries_section(inputs.qrels, runs, page_ids, inputs.k, texts, inputs.corpus, baseline, inputs.rbo_p))
    return data
