"""A competition's submission rules: the task's official submission format, checked by the scoring program.

What ``evalkit validate FILE --task TASK --gold PHASE_GOLD`` calls INVALID
(:func:`evalkit.tasks.submissions.validate`: the one rule checker, the same
code) fails the submission in a bundle built with ``--submission-rules
enforce`` (the default): one line on stderr names the rule, the first
offending line and how many problems there are, exit code 2, no scores.
With ``warn`` the organiser relaxed it: the same line is printed as a note
and the submission is scored as ``evalkit score`` scores it. A task without a
submission format (``trec``) has no rules to apply: every run evalkit reads
is scored. The choice is in the scoring program's ``evalkit-scoring.json``
and the bundle's manifest; ``evalkit competition check`` reports it.
"""
from __future__ import annotations

import os

ENFORCE, WARN = "enforce", "warn"
MODES = (ENFORCE, WARN)
MODE_TEXT = {
    ENFORCE: "a submission that `evalkit validate` calls INVALID fails, with one line naming the rule and its first line",
    WARN: "a submission that `evalkit validate` calls INVALID is scored anyway (built with --submission-rules warn)",
}


def check_mode(mode: str) -> str:
    """``mode`` when it is one of :data:`MODES`, else one line."""
    from evalkit.core.errors import UsageError

    if mode not in MODES:
        raise UsageError(f"--submission-rules {mode!r}: choose {' or '.join(MODES)}")
    return mode


def broken_rule(task, path: str | os.PathLike, gold: str | os.PathLike) -> str | None:
    """The one line saying how the submission at ``path`` breaks ``task``'s submission rules for the phase whose gold
    is ``gold`` (its query set: every query once, no other), or ``None`` when it keeps them (or the task has none)."""
    from evalkit.tasks.submissions import validate

    if task.submission_format is None:
        return None
    checked = validate(path, task, gold=[gold])
    if checked.valid:
        return None
    problems = checked.problems
    first = problems.errors[0]
    total = len(problems.errors)
    return (f"breaks the {task.name} submission rules: {first.render(problems.label)} (rule: {first.kind}; "
            f"{total} problem{'' if total == 1 else 's'} in all, `evalkit validate {os.fspath(path)} --task {task.name}` "
            "lists every one)")


def apply_rules(task, path: str | os.PathLike, gold: str | os.PathLike, mode: str) -> tuple[str | None, list[str]]:
    """(the submission's one-line failure under :data:`ENFORCE`, else ``None``; notes for the scoring log)."""
    broken = broken_rule(task, path, gold)
    if broken is None:
        return None, []
    if mode == WARN:
        return None, [f"{broken}; scored anyway: this competition relaxes its submission rules (--submission-rules warn)"]
    return broken, []
