"""What each measure's parameters may be, declared beside its formula, and the one check that applies it.

Every metric class lists its parameters in ``parameters`` (a tuple of
:class:`Param`): the cutoff ``k``, the relevance level ``rel``, ``beta``,
rbp's persistence ``p``, gain tables' gains, utility's coefficients, ...
Each declaration says whether the value is an integer and its range; every
value is finite. :func:`check` is the only place the declarations are
applied: :class:`~evalkit.metrics.base.Metric` calls it when a metric is
made, so the command line, the Python API, competition bundles and CI
baselines (every path builds metrics) refuse the same values with the same
line. :func:`table_markdown` renders the declarations for the documentation.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable

from evalkit.core.errors import UsageError, shown

class ParameterError(UsageError):
    """A measure's parameter outside its declaration (a known measure, a bad value): never a name to look up elsewhere."""


MAX_WEIGHT = 1e100  # |gain|, |coefficient|: a weighted sum over any list (< 1e18 documents) stays far from a double's 1.8e308


@dataclass(frozen=True)
class Param:
    """One parameter: ``name`` as it is written (``k``, ``p``, ``beta``), what it is, its type and range (always finite)."""

    name: str
    what: str
    integer: bool = False
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    bound: float | None = None  # |value| <= bound
    default: str = ""
    spelling: str = ""  # how it is written: forms separated by "; " (evalkit's, then trec_eval's: "rbp(p=0.8); rbp.p=0.8")
    rule: str = ""  # the rule in words, for the error line ("the cutoff k must be a positive integer")

    def rule_text(self) -> str:
        text = self.range_text()
        return self.rule or f"{self.name} must be {'an' if text.startswith('integer') else 'a'} {text} ({self.what})"

    def range_text(self) -> str:
        """``integer > 0``, ``in (0, 1)``, ``finite, |x| <= 1e+100`` ..."""
        kind = "integer" if self.integer else "number"
        if self.low is not None and self.high is not None:
            left, right = "(" if self.low_open else "[", ")" if self.high_open else "]"
            return f"{kind} in {left}{_num(self.low)}, {_num(self.high)}{right}"
        if self.low is not None:
            return f"{kind} {'>' if self.low_open else '>='} {_num(self.low)}"
        if self.high is not None:
            return f"{kind} {'<' if self.high_open else '<='} {_num(self.high)}"
        if self.bound is not None:
            return f"finite {kind}, |{self.name}| <= {_num(self.bound)}"
        return f"finite {kind}"

    def problem(self, value: float) -> str | None:
        """Why ``value`` is not allowed (``None``: it is)."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return "is not a number"
        if not math.isfinite(value):
            return "is not a finite number"
        if self.integer and float(value) != int(value):
            return "is not an integer"
        low_bad = self.low is not None and (value <= self.low if self.low_open else value < self.low)
        high_bad = self.high is not None and (value >= self.high if self.high_open else value > self.high)
        if low_bad or high_bad or (self.bound is not None and abs(value) > self.bound):
            return "is out of range"
        return None


def _num(value: float) -> str:
    """``5``, ``0.5``, ``10^15`` (powers of ten from a million up), ``1e+100``."""
    exponent = math.log10(abs(value)) if value else 0.0
    if value > 0 and exponent >= 6 and exponent.is_integer():
        return f"10^{int(exponent)}"
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e6 else f"{value:g}"


# the declarations most metrics share (a metric names the ones it takes in its own ``parameters``)
RANK_CUTOFF = Param("k", "rank cutoff: the top k documents", integer=True, low=1, high=1e15, default="the whole list",
                    spelling="name@k; name.k1,k2; name_k", rule="the cutoff k must be a positive integer (at most 10^15)")
RECALL_LEVEL = Param("k", "recall level", low=0, high=1, spelling="IPrec@0.5; iprec_at_recall.0.5",
                     rule="the recall level must be between 0 and 1")
R_MULTIPLE = Param("k", "multiple of R (the cutoff is k * R)", low=0, high=1e6, spelling="Rprec_mult@0.5; Rprec_mult.0.5",
                   rule="the multiple must not be negative (at most 10^6)")
REL = Param("rel", "the metric's own relevance level (grade >= rel is relevant)", bound=MAX_WEIGHT, default="the evaluation's level (-l)",
            spelling="name(rel=2)")
GAIN = Param("gain", "gain of a relevance level (level=gain; levels are integers)", bound=MAX_WEIGHT, default="the grade",
             spelling="name(1=3,2=9); name.1=3,2=9")
CUTOFFS = {"rank": RANK_CUTOFF, "level": RECALL_LEVEL, "multiple": R_MULTIPLE}


def declared(cls: Any, name: str) -> Param | None:
    """``cls``'s declaration of parameter ``name`` (``cls``: a metric class, :class:`~evalkit.metrics.base.Metric`)."""
    return next((param for param in cls.parameters if param.name == name), None)


def check(metric: Any, values: Iterable[tuple[str, float]] | None = None) -> None:
    """Refuse a metric whose parameter values break its class's declarations: one :class:`ParameterError`.

    ``values`` defaults to the metric's own (:meth:`~evalkit.metrics.base.Metric.parameter_values`).
    """
    cls = type(metric)
    for name, value in metric.parameter_values() if values is None else values:
        param = declared(cls, name)
        if param is None:
            supported = ", ".join(p.name for p in cls.parameters) or "none"
            raise ParameterError(f"metric {_label(metric)}: parameter {name!r} is not supported by {cls.name} (supported: {supported})")
        why = param.problem(value)
        if why is not None:
            raise ParameterError(f"metric {_label(metric)}: {param.rule_text()}; {name} = {_text(value)} {why}")


def _label(metric: Any) -> str:
    try:
        return shown(metric.label)
    except (ValueError, OverflowError):  # a label of a value it cannot print
        return shown(metric.name)


def _text(value) -> str:
    """A value as typed: ``5`` for 5.0, ``0.5``, ``nan``, ``1e+308``."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return str(value)


def table_rows() -> list[tuple[str, str, str, str, str, str]]:
    """(measure, parameter, written as, allowed values, default, what) for every registered measure's declarations,
    in registration order; a measure without parameters has one row, ``(none)``."""
    from evalkit.metrics import registered

    rows = []
    for cls in registered():
        if not cls.parameters:
            rows.append((cls.name, "(none)", "", "", "", ""))
        for param in cls.parameters:
            rows.append((cls.name, param.name, param.spelling, param.range_text(), param.default, param.what))
    return rows


def table_markdown() -> str:
    """The declarations as a Markdown table: docs/guide/measure-parameters.md holds it, and the reference generator
    can call this (``python -c "from evalkit.metrics.parameters import table_markdown; print(table_markdown())"``)."""
    lines = ["| Measure | Parameter | Written as | Allowed values | Default | What |", "|---|---|---|---|---|---|"]
    for measure, name, spelling, allowed, default, what in table_rows():
        forms = ", ".join(f"`{form}`" for form in spelling.split("; ") if form)
        cells = [f"`{measure}`", name if name == "(none)" else f"`{name}`", forms, allowed, default, what]
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines) + "\n"
