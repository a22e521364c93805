"""Official submission files: one module per task family, registered here.

A :class:`SubmissionFormat` knows how to *check* a submission file of its
family (every problem, not only the first; see :mod:`.problems`) and how to
*write* one from any run. This layer knows nothing of tasks: a task declares
its format by name (``Task.submission``), and the task-aware entry points
(``expectations_for``, ``validate_file``, ``write_submission``) live in
:mod:`evalkit.tasks.submissions`.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

from evalkit.core.errors import UsageError
from evalkit.submission.problems import Problems
from evalkit.submission.references import Split

if TYPE_CHECKING:  # pragma: no cover
    from evalkit.data import Run
    from evalkit.submission.container import SubmissionText


@dataclass(frozen=True)
class Expectations:
    """What a submission is checked against."""

    task: str
    format: str  # the SubmissionFormat's name
    depth: int  # ids per query
    splits: tuple[Split, ...] = ()  # candidate query sets (one: the expected split)
    split: str | None = None  # the split the user declares
    collection: frozenset[str] | None = None  # known document ids
    collection_note: str = ""
    labels_required: bool = False


@dataclass(frozen=True)
class SubmissionFormat:
    """How one task family's submissions look: checked by ``check``, written by ``render``."""

    name: str
    description: str
    member: str  # the file name inside an uploaded zip
    plain_suffixes: tuple[str, ...]  # --out may also end in one of these (no zip)
    sniff: Callable[[list[str]], bool]  # header columns (lower-case) -> is this family
    check: Callable[["SubmissionText", Expectations, Problems], None]
    render: Callable[["Run", Expectations, Sequence[str] | None, bool], str]


_REGISTRY: dict[str, SubmissionFormat] = {}
ENTRY_POINT_GROUP = "evalkit.submission_formats"  # modules that register a task's submission format


def register(fmt: SubmissionFormat) -> SubmissionFormat:
    _REGISTRY[fmt.name] = fmt
    return fmt


def submission_formats() -> list[SubmissionFormat]:
    from evalkit.core.entry_points import import_plugins

    import_plugins(ENTRY_POINT_GROUP)
    return list(_REGISTRY.values())


def get_format(name: str) -> SubmissionFormat:
    """The registered submission format ``name`` (a task declares its format by this name)."""
    submission_formats()
    fmt = _REGISTRY.get(name)
    if fmt is None:
        raise UsageError(f"unknown submission format {name!r} (known: {', '.join(_REGISTRY)})")
    return fmt


def check_file(path: str | os.PathLike, fmt: SubmissionFormat, expectations: Expectations) -> Problems:
    """Check ``path`` as a submission in ``fmt`` against ``expectations``; every problem is collected."""
    from evalkit.submission.container import open_submission

    problems = Problems(str(path))
    submission = open_submission(path, fmt.member, problems)
    if submission is not None:
        fmt.check(submission, expectations, problems)
    return problems


def header_columns(path: str | os.PathLike) -> list[str]:
    """The lower-cased header columns of a submission (read leniently: a zip with a folder still tells)."""
    from evalkit.submission.container import open_submission

    submission = open_submission(path, "predictions.tsv", Problems(str(path)))
    first = next((line for line in submission.text.split("\n") if line.strip()), "") if submission else ""
    return [c.strip().strip('"').lower() for c in first.replace("\t", ",").split(",")]



__all__ = ["Expectations", "Problems", "SubmissionFormat", "check_file", "get_format", "header_columns", "register", "submission_formats"]
