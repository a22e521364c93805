"""Which group (team) each run belongs to: the first match of a regular expression on its file name.

``--group-by '^[a-z]+'`` puts ``frricter_submission_test.tsv`` in group
``frricter``. When the pattern has capturing groups, the first one that took
part in the match names the group (``'^(\\w+?)_'`` gives ``frricter``, and
``'(?<=teams/)(\\w+)|airwaves'`` picks a folder or a literal); otherwise the
whole match does. The pattern is applied to the run's file name, or with
``on="path"`` to the path as given (teams in folders).

A pattern is a stranger's input like any file: it is compiled with the
``regex`` module (the syntax of Python's ``re``) and every search runs under a
time limit, so a catastrophic pattern such as ``(a|aa)+$`` is refused with one
line instead of hanging; a pattern that does not compile, is longer than
:data:`MAX_PATTERN`, matches a name with the empty string, or does not match a
run's name at all, is refused naming the run.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from evalkit.core.errors import UsageError

MAX_PATTERN = 1_000  # characters: a group pattern is a few dozen
SEARCH_SECONDS = 1.0  # per name: a sane pattern takes microseconds on a file name
GROUP_ON = ("name", "path")


def compile_group_pattern(pattern: str, option: str = "--group-by"):
    """The compiled pattern, or a :class:`UsageError` saying why not."""
    import regex

    if not isinstance(pattern, str) or not pattern:
        raise UsageError(f"{option}: give a regular expression, e.g. '^[^_]+' (a team prefix)")
    if len(pattern) > MAX_PATTERN:
        raise UsageError(f"{option}: the pattern is {len(pattern):,} characters long (at most {MAX_PATTERN:,})")
    if "\x00" in pattern:
        raise UsageError(f"{option}: the pattern holds a NUL character")
    try:
        return regex.compile(pattern, flags=regex.VERSION0)
    except (regex.error, OverflowError, RecursionError, ValueError) as exc:
        raise UsageError(f"{option}: {pattern!r} is not a valid regular expression ({' '.join(str(exc).split())})") from None


def subject_of(path: str | os.PathLike, on: str = "name") -> str:
    """What the pattern reads: the file name, or the path as given (``on="path"``)."""
    if on not in GROUP_ON:
        raise UsageError(f"group on {on!r}: choose {' or '.join(GROUP_ON)}")
    text = os.fspath(path)
    return Path(text).name if on == "name" else text


def group_of(compiled, subject: str, run: str, option: str = "--group-by") -> str:
    """The group ``compiled`` gives ``subject`` (see the module docstring); ``run`` names the run in errors."""
    try:
        found = compiled.search(subject, timeout=SEARCH_SECONDS)
    except TimeoutError:
        raise UsageError(f"{option}: {compiled.pattern!r} took more than {SEARCH_SECONDS:g} s on {subject!r} "
                         "(catastrophic backtracking?); simplify the pattern") from None
    if found is None:
        raise UsageError(f"{run}: {option} {compiled.pattern!r} does not match {subject!r}; every run needs a group "
                         "(add an alternative such as '|^.*' to give each unmatched run its own group)")
    name = next((g for g in found.groups() if g), None) or found.group(0)
    if not name:
        raise UsageError(f"{run}: {option} {compiled.pattern!r} matches {subject!r} with an empty string; "
                         "the group name must not be empty")
    return name


def groups_of(paths: Sequence[str | os.PathLike], names: Sequence[str], pattern: str, on: str = "name",
              option: str = "--group-by") -> list[str]:
    """The group of each run (``paths`` its files, ``names`` its display names for messages)."""
    compiled = compile_group_pattern(pattern, option)
    return [group_of(compiled, subject_of(path, on), name, option) for path, name in zip(paths, names)]
