"""Scoring several runs against one gold file: shared by compare, report and leaderboard (:func:`evalkit.api.score_many`).

Every run is scored by the same task, on the same gold queries, under the
same missing-query policy, so their per-query values can be paired. Two
split checks guard the pairing: a run missing more than 10% of the gold
queries is refused by :func:`evalkit.metrics.evaluation.evaluate`
(:class:`~evalkit.core.errors.PartialRunError`), and :func:`foreign_queries`
spots a run whose queries are mostly absent from the gold (post ids of
another split that happen to collide with the gold's).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Sequence

from evalkit.data import Qrels, Run
from evalkit.core.errors import PartialRunError, UsageError, listed, unquoted
from evalkit.metrics.evaluation import PARTIAL_THRESHOLD
from evalkit.core.options import ScoringOptions
from evalkit.tasks.base import Task, TaskScore


@dataclass(frozen=True, eq=False)
class ScoredRun:
    """One run, its name in tables, and its task score."""

    name: str
    path: str
    run: Run
    score: TaskScore
    notes: list[str] = field(default_factory=list)  # warnings worth printing


def unique_names(paths: Sequence[str]) -> list[str]:
    """Display names (file name without extensions); where two collide, prefixed by the folder, then numbered."""
    from collections import Counter

    from evalkit.io.formats import display_name

    names = [display_name(str(p)) for p in paths]
    counts = Counter(names)
    names = [
        f"{Path(str(p)).parent.name}/{n}" if counts[n] > 1 and Path(str(p)).parent.name else n for p, n in zip(paths, names)
    ]
    return number_repeats(names)


def number_repeats(names: Sequence[str]) -> list[str]:
    """``names`` with every name that occurs more than once numbered in order: ``a#1``, ``a#2``."""
    from collections import Counter

    counts = Counter(names)
    seen: Counter = Counter()
    out = []
    for name in names:
        if counts[name] > 1:
            seen[name] += 1
            name = f"{name}#{seen[name]}"
        out.append(name)
    return out


def resolve_task(task_name: str, qrels: Qrels) -> tuple[Task, str]:
    """The task named, or detected from the gold's format (``auto``), and why: a note printed with the result.

    Only the gold and the user choose: no run is looked at, so no participant's file can choose the task
    it is scored by (a ClimateCheck gold is Subtask I unless Subtask II is named).
    """
    from evalkit.tasks import detect_task, get_task

    if task_name != "auto":
        task = get_task(task_name)
        return task, f"task {task.name}: as named (--task)"
    from evalkit.io.datasets import dataset_name, is_dataset_id

    if qrels.source is not None and is_dataset_id(qrels.source.path):
        from evalkit.tasks import task_for_dataset

        name = dataset_name(qrels.source.path)
        found = task_for_dataset(name)
        if found is not None:
            profile, pattern = found
            return profile, (f"task {profile.name}: the evaluation profile of ir_datasets id {name} (its pattern {pattern}); "
                             "another with --task")
    task = detect_task(qrels.gold_format)
    if qrels.source is not None:
        where = f"the gold's format, {qrels.gold_format}"
    else:
        where = f"the gold's columns ({qrels.gold_format})" if qrels.gold_format else "the gold: judgments built in memory"
    return task, f"task {task.name}: detected from {where}; a run never chooses the task (name one with --task, or task= in Python)"


def foreign_queries(score: TaskScore, label: str) -> str | None:
    """A message when more than 10% of the run's queries are not in the gold, else ``None``."""
    ev = score.evaluation
    if ev.n_run and len(ev.run_only) > PARTIAL_THRESHOLD * ev.n_run:
        return (
            f"{label}: {len(ev.run_only)} of its {ev.n_run} queries are not in the gold "
            f"(the gold has {ev.n_gold}); another split?"
        )
    return None


def run_notes(score: TaskScore, name: str) -> list[str]:
    """Warnings to print for one scored run: reader warnings, missing and foreign queries."""
    ev = score.evaluation
    notes = [f"{name}: {message}" for message in ev.warnings]
    if ev.gold_only:
        verb = "score 0" if ev.missing == "zero" else "are left out"
        notes.append(f"{name}: {len(ev.gold_only)} of {ev.n_gold} gold queries missing from the run ({verb})")
    foreign = foreign_queries(score, name)
    if foreign:
        notes.append(foreign)
    return notes


def score_one(
    task: Task,
    qrels: Qrels,
    run: Run,
    name: str,
    metrics: Sequence[str] | None,
    scoring: ScoringOptions,
    *,
    strict_split: bool = False,
    task_note: str | None = None,
) -> ScoredRun:
    """Score one run under ``scoring``; ``strict_split`` refuses runs with mostly foreign queries; ``task_note``
    (why this task) becomes the first policy note."""
    score = task.score(run, qrels, list(metrics) if metrics else None, **scoring.task_kwargs())
    if task_note:
        score = replace(score, notes=[task_note, *score.notes])
    path = run.source.path if run.source else name
    if strict_split and not scoring.allow_partial:
        foreign = foreign_queries(score, path)
        if foreign:
            raise PartialRunError(foreign)
    return ScoredRun(name=name, path=path, run=run.with_name(name), score=score, notes=run_notes(score, name))


def with_progress(items: list, shown: bool, what: str) -> Any:
    """``items``, with progress over them (:mod:`evalkit.core.progress`) when ``shown`` and there are more than three."""
    if not shown or len(items) <= 3:
        return items
    from evalkit.core.progress import progress

    return progress(items, desc=what, unit="run")


def pick_run(choice: str | int | None, names: Sequence[str], paths: Sequence[str | None], what: str = "baseline") -> str:
    """The run named by ``choice``: its display name, its path or its 1-based position; ``None``: the first."""
    if choice is None:
        return names[0]
    if isinstance(choice, int) and not isinstance(choice, bool):
        if 1 <= choice <= len(names):
            return names[choice - 1]
        raise UsageError(f"{what} position {choice} is out of range (1..{len(names)})")
    for name, path in zip(names, paths):
        if choice == name or (path is not None and choice == path):
            return name
    if str(choice).isdigit() and 1 <= int(choice) <= len(names):
        return names[int(choice) - 1]
    raise UsageError(f"{what} {choice!r} is none of the runs (give a file, its name or its position: {listed(names, 10, unquoted)})")


def by_official_score(scored: Sequence[ScoredRun]) -> list[ScoredRun]:
    """Runs by official score, best first (NaN last), then by name."""
    import math

    def key(item: ScoredRun):
        value = item.score.official_value
        return (math.isnan(value), -value if not math.isnan(value) else 0.0, item.name)

    return sorted(scored, key=key)


def comparison_metric(task: Task, score: TaskScore, requested: str | None = None) -> str:
    """The per-query metric to pair runs on: ``requested`` or the task's official one.

    When the official score is not a per-query mean of one metric (ClimateCheck
    retrieval averages four metrics), the first official metric is used.
    """
    if requested:
        from evalkit.metrics import parse_metric

        return parse_metric(requested).label
    if score.official in score.evaluation.per_query:
        return score.official
    return task.official_metrics()[0].label if task.official_metrics() else score.evaluation.metrics[0].label


def default_metric_labels(task: Task) -> list[str]:
    """The labels of the task's official and default metrics."""
    return [m.label for m in task.metrics(None)]


def check_task_name(task: str) -> None:
    """Refuse an unknown task name before any file is read (``"auto"`` is resolved later, from the gold)."""
    if task != "auto":
        from evalkit.tasks import get_task

        get_task(task)


def paths_of(runs: Sequence[Any]) -> list[str | None]:
    """The path each run was given as (``None``: given in memory)."""
    return [os.fspath(r) if isinstance(r, (str, os.PathLike)) else None for r in runs]


def run_names(runs: Sequence[Any], names: Sequence[str] | None) -> list[str]:
    """A name per run: ``names`` if given, else its file's (told apart), its own, or ``runN``."""
    if names is not None:
        if len(names) != len(runs):
            raise UsageError(f"{len(names)} names for {len(runs)} runs")
        from evalkit.core.input_rules import ValueProblem, utf8_text

        try:
            return [utf8_text(name, "run name") if isinstance(name, str) else name for name in names]
        except ValueProblem as problem:
            raise UsageError(str(problem)) from None
    positions = [i for i, r in enumerate(runs) if isinstance(r, (str, os.PathLike))]
    from_paths = dict(zip(positions, unique_names([os.fspath(runs[i]) for i in positions]))) if positions else {}
    out: list[str] = []
    for number, run in enumerate(runs, start=1):
        if number - 1 in from_paths:
            out.append(from_paths[number - 1])
        elif isinstance(run, Run) and run.name not in ("run", ""):
            out.append(run.name)
        else:
            out.append(f"run{number}")
    return number_repeats(out)  # two runs of one name (in memory) are told apart as file names are
