"""A task's official submission: what it is checked against, checking a file, writing one.

The task layer over :mod:`evalkit.submission` (which knows formats, not
tasks): each function takes a :class:`~evalkit.tasks.Task` or a task name and
reads the task's declarations (``submission``, ``submission_depth``,
``labels_required``). ``evalkit validate``, ``evalkit submit`` and ``evalkit
run --submit`` go through here.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from evalkit.core.errors import UsageError
from evalkit.submission import Expectations, Problems, SubmissionFormat, check_file, header_columns
from evalkit.tasks import Task, get_task, tasks

if TYPE_CHECKING:  # pragma: no cover
    from evalkit.data import Run


def as_task(task: Task | str) -> Task:
    return task if isinstance(task, Task) else get_task(task)


def format_for_task(task: Task | str) -> SubmissionFormat:
    """The task's declared submission format; one line when it has none."""
    the_task = as_task(task)
    fmt = the_task.submission_format
    if fmt is None:
        known = ", ".join(t.name for t in tasks() if t.submission is not None)
        raise UsageError(f"task {the_task.name!r} has no official submission format (tasks with one: {known})")
    return fmt


def detect_submission_task(path: str | os.PathLike) -> str:
    """The task of a submission from its header: the tasks whose format reads it, the labelled one
    when the file has a ``label`` column (ClimateCheck Subtask II), else the unlabelled one."""
    columns = header_columns(path)
    matching = [t for t in tasks() if t.submission is not None and format_for_task(t).sniff(columns)]
    if matching:
        labelled = "label" in columns
        preferred = [t for t in matching if t.labels_required == labelled] or matching
        return preferred[0].name
    shown = ",".join(columns)[:60]
    raise UsageError(f"{path}: cannot tell the task from the first line {shown!r}; pass --task")


def expectations_for(
    task: Task | str,
    *,
    query_files: Sequence[str | os.PathLike] = (),
    split: str | None = None,
    collection_files: Sequence[str | os.PathLike] = (),
    depth: int | None = None,
) -> Expectations:
    """Read the reference files once into :class:`Expectations` for ``task``."""
    from evalkit.submission.references import load_collection_ids, load_splits

    the_task = as_task(task)
    fmt = format_for_task(the_task)
    depth = depth if depth is not None else the_task.submission_depth
    if depth is None or depth <= 0:
        raise UsageError(f"--depth must be a positive number of ids per query (got {depth})")
    collection, note = load_collection_ids(collection_files) if collection_files else (None, "")
    return Expectations(
        task=the_task.name,
        format=fmt.name,
        depth=depth,
        splits=tuple(load_splits(query_files)),
        split=split,
        collection=collection,
        collection_note=note,
        labels_required=the_task.labels_required,
    )


def validate_file(path: str | os.PathLike, expectations: Expectations) -> Problems:
    """Check ``path`` as a submission for ``expectations.task``; every problem is collected."""
    return check_file(path, format_for_task(expectations.task), expectations)


def validate(
    path: str | os.PathLike,
    task: Task | str = "auto",
    *,
    gold: Sequence[str | os.PathLike] = (),
    queries: Sequence[str | os.PathLike] = (),
    split: str | None = None,
    collection_ids: Sequence[str | os.PathLike] = (),
    depth: int | None = None,
) -> "Validation":
    """Check ``path`` as an official submission: every problem (``.valid``, ``.lines()``, ``.verdict()``).

    ``task="auto"`` takes the task from the first ``gold`` file, as scoring
    does (never from the submission), and only without a gold from the file's
    header (a guess the verdict names); ``gold``/``queries`` name the split's
    query sets (several: the split is guessed from the ids),
    ``collection_ids`` the known document ids; ``depth`` defaults to the task's.
    """
    task_name, chosen_by = task, "named"
    if task == "auto":
        chosen_by = "from the gold" if gold else "guessed from the file's header: pass --task or --gold"
        if gold:
            from evalkit.io.reading import read_qrels
            from evalkit.tasks import detect_task

            first = read_qrels(gold[0])
            task_name = detect_task(first.source.format if first.source else "").name
        else:
            task_name = detect_submission_task(path)
    expectations = expectations_for(task_name, query_files=[*gold, *queries], split=split, collection_files=collection_ids,
                                    depth=depth)
    return Validation(os.fspath(path), expectations, validate_file(path, expectations), chosen_by)


@dataclass(frozen=True, eq=False)
class Validation:
    """A submission checked: every problem found and what it was checked against."""

    path: str
    expectations: Expectations
    problems: Problems
    task_chosen: str = "named"  # how the task was chosen: named, from the gold, or guessed from the file's header

    @property
    def valid(self) -> bool:
        return self.problems.valid

    def lines(self, limit: int | None = None) -> list[str]:
        """``FILE:LINE: problem`` lines, at most ``limit`` of each kind (counts stay exact)."""
        return list(self.problems.lines(limit))

    def verdict(self) -> str:
        """The one-line verdict: valid or not, for which task and split, what was checked."""
        problems, expectations, facts = self.problems, self.expectations, self.problems.facts
        parts = []
        if "split" in facts:
            parts.append(f"split {facts['split']}" + (f" ({facts['overlap']})" if "overlap" in facts else ""))
        elif expectations.splits:
            parts.append("split unknown")
        else:
            parts.append("query set not checked (give --gold or --queries)")
        if "queries" in facts:
            parts.append(f"{facts['queries']} queries read, {facts['depth']} ids per query required")
        if expectations.collection is not None:
            parts.append(f"ids checked against {expectations.collection_note}")
        else:
            parts.append("ids not checked against a collection (give --collection-ids)")
        if self.task_chosen != "named":
            parts.insert(0, f"task {self.task_chosen}")
        details = "; ".join(parts)
        warnings = f" with {problems.summary('warning')}" if problems.warnings else ""
        if problems.valid:
            return f"VALID{warnings}: {self.path} is a valid {expectations.task} submission; {details}"
        return f"INVALID: {self.path} is not a valid {expectations.task} submission: {problems.summary()}{warnings}; {details}"


def write_submission(
    run: "Run | str | os.PathLike",
    task: Task | str,
    out_path: str | os.PathLike,
    queries: "str | os.PathLike | Sequence[str] | None" = None,
    force: bool = False,
    *,
    depth: int | None = None,
    dedupe: bool = False,
    command: str = "submit",
) -> Path:
    """Write ``run`` as ``task``'s official submission, validated first (see :mod:`evalkit.submission.writer`)."""
    from evalkit.submission.writer import write_submission as write

    the_task = as_task(task)
    fmt = format_for_task(the_task)
    return write(run, fmt, expectations_for(the_task, depth=depth), out_path, queries, force, dedupe=dedupe, command=command)


__all__ = ["detect_submission_task", "expectations_for", "format_for_task", "validate", "validate_file", "Validation", "write_submission"]
