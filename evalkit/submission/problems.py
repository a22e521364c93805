"""Collecting every problem of a submission file, not only the first.

Validators call :meth:`Problems.error` / :meth:`Problems.warning` as they read
and keep going. Errors make a submission invalid; warnings are things the
official scorer tolerates but a careful participant wants to know. Each
problem is rendered ``FILE:LINE: problem`` (``FILE: problem`` when it has no
line, e.g. a missing query). Output can be capped per kind of problem so a
file with 1,400 identical defects stays readable; the counts stay exact.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from evalkit.core.errors import bounded

ERROR, WARNING = "error", "warning"


@dataclass(frozen=True)
class Problem:
    """One defect: what, where (1-based line or ``None``), which kind, how bad."""

    message: str
    line: int | None = None
    kind: str = "format"
    severity: str = ERROR

    def render(self, label: str) -> str:
        where = f"{label}:{self.line}" if self.line is not None else label
        prefix = "warning: " if self.severity == WARNING else ""
        return bounded(f"{where}: {prefix}{self.message}")


@dataclass
class Problems:
    """The problems of one file (``label`` names it in every line) plus facts learned on the way."""

    label: str
    items: list[Problem] = field(default_factory=list)
    facts: dict[str, object] = field(default_factory=dict)  # e.g. split, queries, depth

    def error(self, kind: str, message: str, line: int | None = None) -> None:
        self.items.append(Problem(message, line, kind, ERROR))

    def warning(self, kind: str, message: str, line: int | None = None) -> None:
        self.items.append(Problem(message, line, kind, WARNING))

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.items if p.severity == ERROR]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.items if p.severity == WARNING]

    @property
    def valid(self) -> bool:
        return not self.errors

    def counts(self, severity: str = ERROR) -> Counter:
        return Counter(p.kind for p in self.items if p.severity == severity)

    def lines(self, limit: int | None = None) -> list[str]:
        """Every problem as ``FILE:LINE: problem`` in the order found; at most ``limit`` per kind."""
        shown: Counter = Counter()
        out = []
        for problem in self.items:
            key = (problem.severity, problem.kind)
            shown[key] += 1
            if not limit or shown[key] <= limit:
                out.append(problem.render(self.label))
        if limit:
            for (severity, kind), count in shown.items():
                if count > limit:
                    what = "warnings" if severity == WARNING else "problems"
                    out.append(f"{self.label}: ... {count - limit} more {kind} {what} not shown (--limit 0 shows all)")
        return out

    def summary(self, severity: str = ERROR) -> str:
        """``'1400 problems (wrong length: 1400)'``."""
        counts = self.counts(severity)
        total = sum(counts.values())
        noun = ("problem" if severity == ERROR else "warning") + ("" if total == 1 else "s")
        detail = ", ".join(f"{kind}: {n}" for kind, n in counts.most_common())
        return f"{total} {noun}" + (f" ({detail})" if detail else "")

    def first(self, n: int = 3) -> str:
        """The first ``n`` errors on one line, for refusals."""
        return "; ".join(p.render(self.label) for p in self.errors[:n])
