"""How far the judgments cover each ranked run: Judged@k and every value's bound, for the leaderboard's text outputs.

The HTML page shows them already (:mod:`evalkit.report.page_data`); the
table, Markdown and JSON leaderboards take them from here, computed the same
way: Judged@k (:mod:`evalkit.metrics.judged_share`, the judged share of the
retrieved top k) and each metric with every retrieved, unjudged document
counted relevant (:func:`evalkit.metrics.judgments.bounds`: an upper bound for P@k,
Success, MRR and Judged@k; for metrics divided by R the value under that
assumption). An official score that is a mean of per-query metrics
(ClimateCheck Subtask I) gets the mean of its components' bounds. Judged-only
scores (``--judged-only``, trec_eval ``-J``: condensed lists) have no such
bound, the unjudged documents being removed rather than counted; their
Judged@k is that of the whole ranking (every condensed list is judged).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Mapping

from evalkit.data.ids import member_of
from evalkit.metrics.judgments import bounds, with_metric
from evalkit.metrics import parse_metric
from evalkit.report.leaderboard_output import JudgedColumns, RunJudgments
from evalkit.report.page_board import composite_upper, official_components

if TYPE_CHECKING:  # pragma: no cover
    from evalkit.data import Qrels
    from evalkit.scoring.leaderboard import Leaderboard

DEFAULT_K = 10


def full_list_judged(entry, qrels: "Qrels", metric):
    """Judged@k of a run's whole ranking when its scores are judged-only (its condensed lists are all judged)."""

    from evalkit.metrics.evaluation import evaluate

    evaluation = entry.scored.score.evaluation
    keep = None
    if evaluation.excluded:
        keep = ~member_of(qrels.query_ids, evaluation.excluded)
    level = evaluation.judged.relevance_level if evaluation.judged is not None else 1.0
    return evaluate(entry.scored.run, qrels, [metric], missing=evaluation.missing, relevance_level=level, allow_partial=True,
                    keep_gold=keep, depth=evaluation.depth).mean(metric)


def judged_columns(board: "Leaderboard", qrels: "Qrels", k: int = DEFAULT_K,
                   judges: "Mapping[tuple[str, str], str] | None" = None) -> JudgedColumns:
    """Judged@k and the bounds of every ranked run of ``board``, scored against ``qrels`` (the board's gold); with
    ``judges`` (who judged each pair, :func:`evalkit.judging.provenance.read_judges`) each run's LLM@k too."""
    from evalkit.judging.provenance import judge_shares
    from evalkit.tasks import get_task

    metric = parse_metric(f"judged@{k}")
    runs: dict[str, RunJudgments] = {}
    components: list[str] = []
    if board.entries:
        components = official_components(get_task(board.task), board.entries[0].scored.score)
    judged_only = any(getattr(e.scored.score.evaluation, "judged_only", False) for e in board.entries)
    for entry in board.entries:
        score = entry.scored.score
        llm = None if judges is None else judge_shares(entry.scored.run, qrels, judges, k)["llm"]
        if judged_only:  # unjudged documents were removed, not counted: they bound nothing
            values = {**score.values, metric.label: full_list_judged(entry, qrels, metric)}
            runs[entry.name] = RunJudgments(judged=values[metric.label], values=values, upper={k: math.nan for k in values}, added=0,
                                            llm=llm)
            continue
        evaluation = with_metric(score.evaluation, metric)
        found = bounds(entry.scored.run, qrels, evaluation)
        lower = {**score.values, metric.label: evaluation.mean(metric)}
        upper = {label: high for label, (_, high) in found.means().items()}
        if score.official not in upper:
            composite = composite_upper(upper, score.official_value, lower, components)
            upper[score.official] = math.nan if composite is None else composite
        runs[entry.name] = RunJudgments(judged=lower[metric.label], values=lower,
                                        upper={label: upper.get(label, math.nan) for label in lower}, added=found.added, llm=llm)
    return JudgedColumns(label=metric.label, runs=runs, judged_only=judged_only, llm_label=None if judges is None else f"LLM@{k}")
