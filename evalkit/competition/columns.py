"""The leaderboard of a task: one column per figure it reports, the official one first (the primary column).

A column key is what the scoring program writes into ``scores.json`` and
what Codabench matches, so it is chosen once here, at bundle time, and
stored in the scoring program's configuration. Keys and titles fit
Codabench's 36 characters. A task may name its keys itself with a
``leaderboard_keys`` mapping (figure label -> key) and say what its own
figures mean with ``figure_definitions``; the built-in ClimateCheck tasks use the names the organisers' scorer writes
(``evaluation/evaluate.py`` of the shared task: ``Recall@2``, ``B-pref``,
``SubtaskI-Score``, ``Precision``, ``F1``, ``SubtaskII-Score``...), so their
bundle's leaderboard reads as the 2025 one did; other figures keep their
evalkit label when it fits, else its head before `` (`` or a slug.
"""
from __future__ import annotations

import inspect
import re
from dataclasses import dataclass

from evalkit.competition import codabench
LOWER_IS_BETTER = ("Unjudged",)  # figures whose smaller values are better (ascending columns)
_SLUG = re.compile(r"[^A-Za-z0-9@.+-]+")


@dataclass(frozen=True)
class Column:
    """One leaderboard column: the figure it shows (evalkit's label), its key in scores.json, title, order."""

    label: str
    key: str
    title: str
    sorting: str = "desc"
    precision: int = 4

    def as_yaml(self, index: int) -> dict:
        return {"title": self.title, "key": self.key, "index": index, "sorting": self.sorting, "precision": self.precision}


def _fit(text: str, limit: int) -> str:
    """``text`` if it fits, else its head before `` (`` if that fits, else cut."""
    if len(text) <= limit:
        return text
    head = text.split(" (")[0].strip()
    return head if 0 < len(head) <= limit else text[:limit].rstrip()


def key_of(label: str) -> str:
    """A scores.json key for a figure label: the label when it fits 36 characters and has no blank, else a slug."""
    fitted = _fit(label, codabench.COLUMN_KEY_MAX)
    slug = _SLUG.sub("_", fitted).strip("_")
    return slug[: codabench.COLUMN_KEY_MAX] or "score"


def columns_for(task, labels: list[str], precision: int = 4) -> list[Column]:
    """The columns for the figures ``labels`` (official first) of ``task``; keys unique and at most 36 characters."""
    named = dict(getattr(task, "leaderboard_keys", None) or {})
    columns: list[Column] = []
    used: set[str] = set()
    for label in labels:
        key = named.get(label) or key_of(label)
        base, n = key, 2
        while key in used:
            suffix = f"_{n}"
            key, n = base[: codabench.COLUMN_KEY_MAX - len(suffix)] + suffix, n + 1
        used.add(key)
        sorting = "asc" if label.startswith(LOWER_IS_BETTER) else "desc"
        columns.append(Column(label, key, _fit(label, codabench.COLUMN_TITLE_MAX), sorting, precision))
    return columns


def definition_of(task, label: str, official_label: str) -> str:
    """What a figure means: the task's official definition, an evalkit metric's formula, or the figure's own."""
    if label == official_label:
        return task.official_definition
    own = (getattr(task, "figure_definitions", None) or {}).get(label)
    if own:
        return own
    from evalkit.core.errors import UsageError
    from evalkit.metrics import parse_metric

    try:
        metric = parse_metric(label)
    except UsageError:
        return "a figure the task reports (see `evalkit tasks`)"
    return (inspect.getdoc(type(metric)) or metric.label).split("\n\n")[0].replace("\n", " ")
