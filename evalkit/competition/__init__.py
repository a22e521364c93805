"""Organising a shared task on Codabench with evalkit as the scoring program.

Three functions, which ``evalkit competition bundle|check|run`` call:

>>> from evalkit.competition import check_bundle, make_bundle, run_submission
>>> result = make_bundle("checkthat2025-4b", [("dev", "dev_gold.tsv"), ("test", "test_gold.tsv")],
...                      "checkthat4b.zip")                              # doctest: +SKIP
>>> [p.line() for p in check_bundle("checkthat4b.zip")]                # doctest: +SKIP
[]
>>> done = run_submission("checkthat4b.zip", "team.zip", phase="test")  # doctest: +SKIP
>>> done.failure, [(c.key, c.value) for c in done.row]                  # doctest: +SKIP
(None, [('MRR@5', 0.6835), ...])

Modules: :mod:`.codabench` (what Codabench does, written down once),
:mod:`.settings` (an organiser's choices, the built-in tasks' presets),
:mod:`.columns` (figures -> leaderboard columns), :mod:`.pages`,
:mod:`.logo`, :mod:`.program` (the scoring program zip: evalkit vendored),
:mod:`.scoring` (that program at work in the worker), :mod:`.rules` (the task's
submission rules, applied by it), :mod:`.results_page`,
:mod:`.bundle` (the zip), :mod:`.lint` + :mod:`.lint_board` +
:mod:`.lint_evalkit` (the checker's rules), :mod:`.archive` (bounded zips),
:mod:`.worker` (the compute worker, locally).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from evalkit.competition.bundle import BundleResult
    from evalkit.core.options import ScoringOptions
    from evalkit.competition.lint import Problem
    from evalkit.competition.worker import WorkerRun


def make_bundle(
    task: str,
    phases: Sequence[tuple[str, str]],
    out: str,
    *,
    title: str | None = None,
    description: str | None = None,
    starts: Mapping[str, object] | None = None,
    ends: Mapping[str, object] | None = None,
    detailed: Mapping[str, str] | None = None,
    terms: str | None = None,
    force: bool = False,
    test: bool = True,
    max_submissions_per_day: int | None = None,
    max_submissions: int | None = None,
    execution_time_limit: int | None = None,
    scoring: "ScoringOptions | None" = None,
    **options,
) -> "BundleResult":
    """Write a Codabench v2 bundle for ``task`` with one phase per ``(name, gold file)``, in order, to ``out``.

    ``starts`` / ``ends`` map phase names to dates (default: consecutive four-week
    phases from today, the last open-ended); ``detailed`` maps phase names to
    ``full`` (evalkit's per-query page: a public gold) or ``summary``; ``terms``
    is a terms file. ``scoring`` (or its fields as keywords: ``metrics``,
    ``missing``, ``allow_partial``, ``relevance_level``, ``depth``...) is how
    every submission is scored (:class:`~evalkit.core.options.ScoringOptions`; extra
    ``metrics`` become extra columns). The other ``options`` are
    :class:`~evalkit.competition.settings.BundleSettings` fields
    (``docker_image``, ``submission_rule``, ``precision``,
    ``max_submission_size``, ``contact_email``, ``submission_rules``:
    ``"enforce"``, the default, fails what ``evalkit validate`` calls INVALID,
    ``"warn"`` scores it with a note; :mod:`.rules`). ``test`` runs each phase end to
    end on a submission rebuilt from its gold before anything is written.
    """
    from dataclasses import fields

    from evalkit.competition.bundle import write_bundle
    from evalkit.competition.settings import bundle_settings, phase_settings
    from evalkit.core.options import ScoringOptions
    from evalkit.tasks import get_task

    name = get_task(task).name
    scoring_fields = {f.name for f in fields(ScoringOptions)} - {"task"}
    chosen_scoring = ScoringOptions.of(scoring, task=name, **{k: options.pop(k) for k in list(options) if k in scoring_fields})
    limits: dict[str, Any] = {k: v for k, v in (("max_submissions_per_day", max_submissions_per_day), ("max_submissions", max_submissions),
                                ("execution_time_limit", execution_time_limit)) if v is not None}
    chosen = phase_settings(name, list(phases), starts=starts, ends=ends, detailed=detailed, **limits)
    terms_text = None
    if terms:
        from evalkit.io.textio import read_input_bytes

        terms_text = read_input_bytes(terms, 1 << 20).decode("utf-8", "replace")
    settings = bundle_settings(name, chosen, title=title, description=description, terms=terms_text, scoring=chosen_scoring, **options)
    return write_bundle(settings, out, force=force, test=test)


def check_bundle(path: str, notes: list[str] | None = None) -> "list[Problem]":
    """Every problem of the bundle at ``path``: Codabench's v2 rules and evalkit's (``Problem.line()`` reads each);
    what the bundle does (its submission rules) appended to ``notes``."""
    from evalkit.competition.lint import lint_bundle

    return lint_bundle(path, notes)


def run_submission(bundle: str, submission: str, phase: str | None = None, python: str | None = None) -> "WorkerRun":
    """Score the participant's upload ``submission`` with ``bundle`` as Codabench's compute worker does (see
    :mod:`evalkit.competition.worker`); ``python`` is the interpreter standing for the image's ``python3``."""
    from evalkit.competition.worker import run_submission as run

    return run(bundle, submission, phase, python)


__all__ = ["check_bundle", "make_bundle", "run_submission"]
