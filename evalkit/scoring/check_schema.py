"""The schema of a regression baseline file (``evalkit check --baseline FILE``), checked whole before any score.

A baseline is the CI gate's memory: a field read loosely passes a gate that
should fail (``"allow_partial": "false"`` read as true, ``"expected": "1_0"``
as 10.0). Every field has one type and range; an unknown field, a repeated
key or a repeated entry is refused, each with one line naming the field::

    {"evalkit_baseline": 1,                 # optional; the format version, an integer (only 1)
     "description": "...",                  # optional text
     "tolerance": 0.001,                    # optional; a finite number >= 0
     "entries": [                           # a list of objects:
       {"name": "...",                      #   optional non-empty text (default: the run's file name)
        "task": "checkthat2025-4b",         #   non-empty text: a task name
        "gold": "...", "run": "...",        #   non-empty text: paths relative to the baseline's folder
        "metric": "MRR@5",                  #   non-empty text: a metric, a task's official label, or "official"
        "expected": 0.7028,                 #   a finite number >= 0 (no score evalkit reports is negative)
        "missing": "zero",                  #   optional: zero, skip or error
        "allow_partial": false}]}           #   optional: true or false (JSON booleans, not text)
"""
from __future__ import annotations

import math
import numbers
from typing import Any, Callable

from evalkit.core.errors import InputError, shown

FORMAT_VERSION = 1
MISSING_CHOICES = ("zero", "skip", "error")
REQUIRED = ("task", "gold", "run", "metric", "expected")


class FieldProblem(ValueError):
    """A field's value breaks its rule (the message says how)."""


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, str):
        return f"text {shown(value)}"
    if value is None:
        return "null"
    return f"{'a list' if isinstance(value, list) else 'an object' if isinstance(value, dict) else type(value).__name__} {shown(value)}"


def text(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise FieldProblem(f"must be non-empty text, not {_kind(value)}")
    return value


def optional_text(value: Any) -> str:
    if not isinstance(value, str):
        raise FieldProblem(f"must be text, not {_kind(value)}")
    return value


def score(value: Any) -> float:
    """A finite number >= 0: a JSON number (text such as "1_0" or "0.5" is refused, as are booleans)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise FieldProblem(f"is {_kind(value)}, not a number")
    number = float(value)
    if not math.isfinite(number):
        raise FieldProblem(f"is {shown(value)}; it must be a finite number")
    if number < 0:
        raise FieldProblem(f"{shown(value)} is negative (no score is; a negative tolerance would read every score as dropped)")
    return number


def flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise FieldProblem(f"must be true or false (JSON booleans), not {_kind(value)}")
    return value


def missing(value: Any) -> str:
    if not isinstance(value, str) or value not in MISSING_CHOICES:
        raise FieldProblem(f"must be one of {', '.join(MISSING_CHOICES)}, not {_kind(value)}")
    return value


def version(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value != FORMAT_VERSION:
        raise FieldProblem(f"must be {FORMAT_VERSION} (the only baseline format), not {_kind(value)}")
    return value


TOP_FIELDS: dict[str, Callable[[Any], Any]] = {"evalkit_baseline": version, "description": optional_text, "tolerance": score}
ENTRY_FIELDS: dict[str, Callable[[Any], Any]] = {
    "name": text, "task": text, "gold": text, "run": text, "metric": text, "expected": score, "missing": missing, "allow_partial": flag,
}


def _checked(fields: dict[str, Callable[[Any], Any]], data: dict, path: str, where: str) -> dict[str, Any]:
    unknown = [key for key in data if key not in fields]
    if unknown:
        raise InputError(path, f"{where}unknown field {shown(unknown[0])} (known: {', '.join(fields)})")
    out = {}
    for key, value in data.items():
        try:
            out[key] = fields[key](value)
        except FieldProblem as problem:
            raise InputError(path, f"{where}field {key!r} {problem}") from None
    return out


def check(data: Any, path: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the top-level fields, the entries), every value checked; an :class:`InputError` naming the field otherwise."""
    if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
        raise InputError(path, "not an evalkit baseline (expected an object with an 'entries' list)")
    top = _checked({**TOP_FIELDS, "entries": list}, data, path, "")
    entries: list[dict[str, Any]] = []
    seen: dict[tuple[Any, ...], int] = {}  # (task, gold, run, metric) -> the entry's number
    for number, item in enumerate(data["entries"], start=1):
        lacking = [k for k in REQUIRED if not isinstance(item, dict) or k not in item]
        if lacking:
            raise InputError(path, f"entry {number} lacks {', '.join(lacking)}")
        entry = _checked(ENTRY_FIELDS, item, path, f"entry {number}: ")
        key = tuple(entry[k] for k in ("task", "gold", "run", "metric"))
        if key in seen:
            raise InputError(path, f"entry {number} repeats entry {seen[key]} (same task, gold, run and metric)")
        seen[key] = number
        entries.append(entry)
    return top, entries


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` of the baseline's JSON: a key given twice in one object is refused (which one counts?)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise FieldProblem(f"key {shown(key)} appears twice in one object (which one counts?)")
        out[key] = value
    return out
