"""An evaluation profile: the official way a benchmark is scored, declared as data.

A profile is a :class:`~evalkit.tasks.base.Task` whose whole definition is a
few declarations: the official measures (the first is the official figure),
each with its own relevance level where the benchmark binarises grades
(``map(rel=2)``: grade 2 and above is relevant for MAP alone), the depth of a
ranking that counts (trec_eval ``-M``), whether unjudged documents are removed
first (``-J``), whether a document whose id equals its query's id is removed
from that query's ranking (BEIR's ``ignore_identical_ids``: ArguAna, Quora),
and the sub-collections to macro-average over (BEIR's CQADupStack: the mean of
the 12 forums' means). ``dataset_ids`` are the ir_datasets ids (shell-style
patterns) whose gold picks the profile with ``--task auto``; ``sources`` cite
where the definition comes from.

How a profile meets the options: a measure's own ``rel=`` is part of the
profile and wins over ``--relevance-level``, which applies to every measure
without one (so ``-m "map(rel=1)"`` is how to ask for the naive MAP beside the
profile's); ``--depth`` and ``--judged-only`` given on the command line win
over the profile's depth and judged-only setting.
"""
from __future__ import annotations

import fnmatch
from dataclasses import replace
from typing import Any, ClassVar, Sequence

import numpy as np

from evalkit.data import Qrels, Run
from evalkit.metrics import Metric, parse_metrics
from evalkit.tasks.base import Task, TaskScore


class ProfileTask(Task):
    """A task declared as an evaluation profile (see the module docstring)."""

    measures: ClassVar[str]  # the official measures, official first, e.g. "ndcg@10 map(rel=2) recall(rel=2)@1000"
    depth: ClassVar[int | None] = None
    judged_only: ClassVar[bool] = False
    exclude_self: ClassVar[bool] = False
    subcollections: ClassVar[tuple[str, ...]] = ()  # query-id prefixes (``android/``) to macro-average over

    @property
    def default_metrics(self) -> str:  # type: ignore[override]
        return " ".join(m.label for m in parse_metrics(self.measures)[1:]) or parse_metrics(self.measures)[0].label

    @property
    def official_definition(self) -> str:  # type: ignore[override]
        official = parse_metrics(self.measures)[0]
        how = [f"{official.label}"]
        if self.subcollections:
            how.append(f"the mean over {len(self.subcollections)} sub-collections of each one's mean")
        if self.depth is not None:
            how.append(f"the top {self.depth} of each ranking")
        if self.exclude_self:
            how.append("a document with its query's id removed from that ranking")
        if self.judged_only:
            how.append("unjudged documents removed first")
        return "; ".join(how)

    def detects(self, gold_format: str, run: Run | None = None) -> int:
        """Never from a file's format: a profile is chosen by a dataset's id (:func:`profile_for_dataset`) or by name."""
        return 0

    def official_metrics(self) -> list[Metric]:
        return parse_metrics(self.measures)[:1]

    def metrics(self, extra: str | Sequence[str] | None = None) -> list[Metric]:
        """The profile's measures, then the user's (``-m``) beside them."""
        declared = parse_metrics(self.measures)
        added = parse_metrics(extra if isinstance(extra, str) else list(extra)) if extra else []
        return list(dict.fromkeys(declared + added))

    def score(self, run: Run, qrels: Qrels, metrics: str | Sequence[str] | None = None, *, depth: int | None = None,
              judged_only: bool = False, **options: Any) -> TaskScore:
        notes = [f"profile {self.name}: {self.official_definition}"]
        if self.exclude_self:
            run, removed = without_self_matches(run)
            notes.append(f"{removed} rows whose document id equals their query id removed (the profile's rule)")
        chosen_depth = depth if depth is not None else self.depth
        result = super().score(run, qrels, metrics, depth=chosen_depth, judged_only=judged_only or self.judged_only,
                               **options)
        pinned = [m.label for m in result.evaluation.metrics if m.rel is not None]
        level = options.get("relevance_level", 1)
        if pinned and level != 1:
            notes.append(f"--relevance-level {level:g} applies to the measures without their own level; "
                         f"{', '.join(pinned)} keep the profile's")
        values = result.values
        if self.subcollections:
            values = {label: macro_mean(result.evaluation, label, self.subcollections) if label in result.evaluation.per_query
                      else value for label, value in values.items()}
            notes.append(f"macro-averaged: each figure is the mean of the {len(self.subcollections)} sub-collections' means")
        return replace(result, values=values, notes=[*result.notes, *notes])


def without_self_matches(run: Run) -> tuple[Run, int]:
    """``run`` without the rows whose document id equals their query id, and how many were removed."""
    query_of_row = run.query_ids[run.qidx].astype(str)
    doc_of_row = run.doc_ids[run.didx].astype(str)
    drop = query_of_row == doc_of_row
    removed = int(drop.sum())
    if removed == 0:
        return run, 0
    keep = ~drop

    def pick(values: np.ndarray | None) -> np.ndarray | None:
        return None if values is None else values[keep]

    plain = Run(query_ids=run.query_ids, doc_ids=run.doc_ids, qidx=run.qidx[keep], didx=run.didx[keep], scores=pick(run.scores),
                labels=pick(run.labels), declared_ranks=pick(run.declared_ranks), name=run.name, source=run.source,
                warnings=run.warnings, tag=run.tag)
    return plain, removed


def macro_mean(evaluation: Any, label: str, prefixes: Sequence[str]) -> float:
    """The mean over sub-collections (query ids ``<prefix>/<id>``) of each one's mean of ``label`` (NaN left out)."""
    values = np.asarray(evaluation.per_query[label], dtype=np.float64)
    ids = evaluation.query_ids.astype(str)
    means = []
    for prefix in prefixes:
        mine = np.char.startswith(ids, prefix + "/") & ~np.isnan(values)
        if mine.any():
            means.append(float(np.mean(values[mine])))
    return float(np.mean(means)) if means else float("nan")


def profile_for_dataset(dataset_id: str, candidates: Sequence[Task]) -> tuple[Task, str] | None:
    """The task among ``candidates`` whose ``dataset_ids`` match ``dataset_id`` most specifically (the longest pattern
    wins; an exact id beats any pattern), and the pattern; ``None`` when none does."""
    best: tuple[tuple[int, int], Task, str] | None = None
    for task in candidates:
        for pattern in getattr(task, "dataset_ids", ()):
            if fnmatch.fnmatchcase(dataset_id, pattern):
                rank = (int(pattern == dataset_id), len(pattern))
                if best is None or rank > best[0]:
                    best = (rank, task, pattern)
    return None if best is None else (best[1], best[2])


__all__ = ["ProfileTask", "macro_mean", "profile_for_dataset", "without_self_matches"]
