"""How runs are scored: one options object for every API function and command that scores.

``evalkit.score``, ``score_many``, ``compare``, ``write_report``, the
leaderboard and the CI gate all take a :class:`ScoringOptions` (or its fields
as keywords); the click commands build it from one shared set of options
(:func:`evalkit.cli.common.scoring_options`). The values are checked here,
once, with one clear line for a bad one, whether they come from a command
line, a notebook or a baseline file.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Sequence

from evalkit.core.errors import UsageError, listed, shown

MISSING_CHOICES = ("zero", "skip", "error")
MAX_SEED = 2**32 - 1  # every seed (compare/report/leaderboard --seed, run/train --seed, seed = in a pipeline) is 0..MAX_SEED
MAX_DEPTH = 2**31 - 1  # a depth beyond any ranking is no cut; larger numbers are typing errors


def _shown(value: Any, limit: int = 40) -> str:
    return shown(value, limit)


def whole_number(value: Any, what: str, low: int, high: int) -> int:
    """``value`` as an int from ``low`` to ``high``, else one line (booleans, floats and text are refused)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise UsageError(f"{what} must be a whole number (got {_shown(value)})")
    if not low <= value <= high:  # type: ignore[operator]  # typeshed's numbers.Integral declares no comparison with int
        raise UsageError(f"{what} must be from {low:,} to {high:,} (got {_shown(value)})")
    return int(value)


def seed_value(seed: Any, what: str = "seed") -> int:
    """A seed under the one rule of every seed: a whole number from 0 to 2**32 - 1."""
    return whole_number(seed, what, 0, MAX_SEED)


def _name(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise UsageError(f"{what} must be a non-empty string (got {_shown(value)})")
    return value


def metric_names(metrics: str | Sequence[str] | None) -> tuple[str, ...] | None:
    """``"ndcg@10 mrr@10"``, ``["ndcg@10", "mrr@10 p@5"]`` or ``None`` as a tuple of metric lists (``None``: the task's).

    Only the types are checked here; :func:`evalkit.metrics.parse_metrics` splits and parses the names.
    """
    if metrics is None:
        return None
    if isinstance(metrics, str):
        items: Sequence[Any] = [metrics]
    elif isinstance(metrics, (list, tuple)):
        items = metrics
    else:
        raise UsageError(f"metrics must be a string or a list of strings (got a {type(metrics).__name__}: {_shown(metrics)})")
    for item in items:
        if not isinstance(item, str):
            raise UsageError(f"metrics must be strings (got a {type(item).__name__}: {_shown(item)})")
    names = tuple(item for item in items if item.strip())
    return names or None


@dataclass(frozen=True)
class ScoringOptions:
    """The choices behind every score.

    ``task``: a task name or ``"auto"`` (from the gold); ``metrics``: metrics
    besides the official ones (``None``: the task's defaults); ``missing``:
    what gold queries absent from a run count as (``zero``, ``skip``,
    ``error``; ``None``: the task's default); ``relevance_level``: the lowest
    grade that counts as relevant; ``depth``: only the top ``depth`` documents
    of each ranking count (trec_eval ``-M``); ``allow_partial``: score a run
    missing more than 10% of the gold queries; ``run_format`` / ``gold_format``
    / ``column``: how the files are read (``evalkit formats``); trec_eval's
    ``judged_only`` (``-J``), ``num_docs`` (``-N``), ``zscores`` (``-Z``,
    a file) and ``judgment_groups`` (``-R qrels_jg``).
    """

    task: str = "auto"
    metrics: tuple[str, ...] | None = None
    missing: str | None = None
    relevance_level: float = 1
    depth: int | None = None
    allow_partial: bool = False
    run_format: str = "auto"
    gold_format: str = "auto"
    column: str | None = None
    judged_only: bool = False  # trec_eval -J: score the condensed lists (unjudged documents removed)
    num_docs: int = 0  # trec_eval -N: documents in the collection (utility's fourth coefficient)
    zscores: str | None = None  # trec_eval -Z: a file of "query measure mean stddev" lines; values become z-scores
    judgment_groups: bool = False  # trec_eval -R qrels_jg: the gold's second column names judgment groups, averaged over

    def __post_init__(self) -> None:
        set_ = object.__setattr__  # normalise in place: frozen, but built only here
        _name(self.task, "task")
        set_(self, "metrics", metric_names(self.metrics))
        if self.missing is not None and self.missing not in MISSING_CHOICES:
            raise UsageError(f"missing must be one of {', '.join(MISSING_CHOICES)} (got {_shown(self.missing)})")
        level = self.relevance_level
        if isinstance(level, bool) or not isinstance(level, numbers.Real) or not math.isfinite(float(level)):
            raise UsageError(f"relevance level must be a finite number (got {_shown(level)})")
        set_(self, "relevance_level", float(level))
        if self.depth is not None:
            set_(self, "depth", whole_number(self.depth, "depth", 1, MAX_DEPTH))
        if not isinstance(self.allow_partial, bool):
            raise UsageError(f"allow_partial must be true or false (got {_shown(self.allow_partial)})")
        for flag in ("judged_only", "judgment_groups"):
            if not isinstance(getattr(self, flag), bool):
                raise UsageError(f"{flag} must be true or false (got {_shown(getattr(self, flag))})")
        if isinstance(self.num_docs, bool) or not isinstance(self.num_docs, numbers.Integral) or not 0 <= self.num_docs <= 2**62:
            raise UsageError(f"num_docs must be a whole number from 0 (got {_shown(self.num_docs)})")
        set_(self, "num_docs", int(self.num_docs))
        if self.zscores is not None:
            set_(self, "zscores", _name(str(self.zscores) if hasattr(self.zscores, "__fspath__") else self.zscores, "zscores file"))
        _name(self.run_format, "run format")
        _name(self.gold_format, "gold format")
        if self.column is not None:
            _name(self.column, "column")

    @classmethod
    def of(cls, options: "ScoringOptions | None" = None, **changes: Any) -> "ScoringOptions":
        """``options`` (default: all defaults) with ``changes`` applied; an unknown name is refused."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise UsageError(f"unknown scoring option(s) {listed(unknown)} (known: {', '.join(sorted(known))})")
        base = options if options is not None else cls()
        if not isinstance(base, ScoringOptions):
            raise UsageError(f"options must be a ScoringOptions (got a {type(base).__name__})")
        return replace(base, **changes) if changes else base

    def task_kwargs(self) -> dict[str, Any]:
        """The keywords of :meth:`evalkit.tasks.base.Task.score` (the task plugins' contract)."""
        kwargs = {"missing": self.missing, "allow_partial": self.allow_partial, "relevance_level": self.relevance_level,
                  "depth": self.depth}
        if self.judged_only:  # trec_eval's options only when set: a task plugin's score() need not know them
            kwargs["judged_only"] = True
        if self.num_docs:
            kwargs["num_docs"] = self.num_docs
        return kwargs

    def manifest(self, missing: str | None = None) -> dict[str, Any]:
        """The options as a manifest records them (``missing``: the policy the task resolved)."""
        entries = asdict(self)
        entries["metrics"] = list(self.metrics) if self.metrics else None
        entries["missing"] = missing or self.missing
        entries["relevance_level"] = float(self.relevance_level)
        return entries


__all__ = ["MAX_DEPTH", "MAX_SEED", "MISSING_CHOICES", "ScoringOptions", "metric_names", "seed_value", "whole_number"]
