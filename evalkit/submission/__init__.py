"""Official submission files: one module per task family, registered here.

A :class:`SubmissionFormat` knows how to *check* a submission file of its
family (every problem, not only the first; see :mod:`.problems`) and how to
*write* one from any run. ``evalkit validate`` and ``evalkit submit`` (and
``evalkit run --submit``) go through :func:`validate_file` and
:func:`write_submission`; a task names its format through
:func:`format_for_task` (also ``Task.submission_format``).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from evalkit.errors import UsageError
from evalkit.submission.problems import Problems
from evalkit.submission.references import QuerySet

if TYPE_CHECKING:  # pragma: no cover
    from evalkit.data import Run
    from evalkit.submission.container import SubmissionText


@dataclass(frozen=True)
class Expectations:
    """What a submission is checked against."""

    task: str
    depth: int  # ids per query
    splits: tuple[QuerySet, ...] = ()  # candidate query sets (one: the expected split)
    split: str | None = None  # the split the user declares
    collection: frozenset[str] | None = None  # known document ids
    collection_note: str = ""
    labels_required: bool = False


@dataclass(frozen=True)
class SubmissionFormat:
    """How one task family's submissions look: checked by ``check``, written by ``render``."""

    name: str
    tasks: tuple[str, ...]
    description: str
    member: str  # the file name inside an uploaded zip
    plain_suffixes: tuple[str, ...]  # --out may also end in one of these (no zip)
    sniff: Callable[[list[str]], bool]  # header columns (lower-case) -> is this family
    check: Callable[["SubmissionText", Expectations, Problems], None]
    render: Callable[["Run", Expectations, Sequence[str] | None, bool], str]


_REGISTRY: dict[str, SubmissionFormat] = {}


def register(fmt: SubmissionFormat) -> SubmissionFormat:
    _REGISTRY[fmt.name] = fmt
    return fmt


def submission_formats() -> list[SubmissionFormat]:
    return list(_REGISTRY.values())


def format_for_task(task_name: str) -> SubmissionFormat:
    for fmt in _REGISTRY.values():
        if task_name in fmt.tasks:
            return fmt
    known = ", ".join(t for f in _REGISTRY.values() for t in f.tasks)
    raise UsageError(f"task {task_name!r} has no official submission format (tasks with one: {known})")


def detect_submission_task(path: str | os.PathLike) -> str:
    """The task of a submission from its header (``post_id`` -> 4b, ``claim_id`` -> ClimateCheck).

    Reads leniently (a zip with a folder or two files still tells its task).
    """
    from evalkit.submission.container import open_submission

    submission = open_submission(path, "predictions.tsv", Problems(str(path)))
    first = next((line for line in submission.text.split("\n") if line.strip()), "") if submission else ""
    columns = [c.strip().strip('"').lower() for c in first.replace("\t", ",").split(",")]
    for fmt in _REGISTRY.values():
        if fmt.sniff(columns):
            labelled = "label" in columns and len(fmt.tasks) > 1
            return fmt.tasks[-1] if labelled else fmt.tasks[0]
    raise UsageError(f"{path}: cannot tell the task from the first line {first.strip()[:60]!r}; pass --task")


def expectations_for(
    task_name: str,
    *,
    query_files: Sequence[str | os.PathLike] = (),
    split: str | None = None,
    collection_files: Sequence[str | os.PathLike] = (),
    depth: int | None = None,
) -> Expectations:
    """Read the reference files once into :class:`Expectations` for ``task_name``."""
    from evalkit.submission.references import load_collection_ids, load_query_sets
    from evalkit.tasks import get_task

    task = get_task(task_name)
    format_for_task(task.name)
    depth = depth if depth is not None else task.submission_depth
    if depth is None or depth <= 0:
        raise UsageError(f"--depth must be a positive number of ids per query (got {depth})")
    collection, note = load_collection_ids(collection_files) if collection_files else (None, "")
    return Expectations(
        task=task.name,
        depth=depth,
        splits=tuple(load_query_sets(query_files)),
        split=split,
        collection=collection,
        collection_note=note,
        labels_required=task.name.endswith("verification"),
    )


def validate_file(path: str | os.PathLike, expectations: Expectations) -> Problems:
    """Check ``path`` as a submission for ``expectations.task``; every problem is collected."""
    from evalkit.submission.container import open_submission

    fmt = format_for_task(expectations.task)
    problems = Problems(str(path))
    submission = open_submission(path, fmt.member, problems)
    if submission is not None:
        fmt.check(submission, expectations, problems)
    return problems


def write_submission(
    run: "Run | str | os.PathLike",
    task: str,
    out_path: str | os.PathLike,
    queries: "str | os.PathLike | Sequence[str] | None" = None,
    force: bool = False,
    *,
    depth: int | None = None,
    dedupe: bool = False,
    command: str = "submit",
) -> Path:
    """Write ``run`` as the official submission of ``task``; see :mod:`evalkit.submission.writer`."""
    from evalkit.submission.writer import write_submission as _write

    return _write(run, task, out_path, queries, force, depth=depth, dedupe=dedupe, command=command)


from evalkit.submission import checkthat2025_4b, climatecheck2025  # noqa: E402  (register the families)

__all__ = [
    "Expectations",
    "Problems",
    "SubmissionFormat",
    "expectations_for",
    "format_for_task",
    "register",
    "submission_formats",
    "validate_file",
    "write_submission",
]
