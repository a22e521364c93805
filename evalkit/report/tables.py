"""Number formatting and plain-text / Markdown tables."""
from __future__ import annotations

import math
from typing import Sequence


def is_nan(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def number(value: float | None, digits: int = 4) -> str:
    return "n/a" if is_nan(value) else f"{value:.{digits}f}"


def signed(value: float | None, digits: int = 4) -> str:
    return "n/a" if is_nan(value) else f"{value:+.{digits}f}"


def percent(value: float | None, digits: int = 1) -> str:
    if is_nan(value):
        return "n/a"
    assert value is not None  # is_nan is true for None
    if math.isinf(value):
        return "+inf%" if value > 0 else "-inf%"
    return f"{value * 100:+.{digits}f}%"


def p_value(value: float | None) -> str:
    """p-values: 4 decimals down to 0.001, then scientific notation."""
    if is_nan(value):
        return "n/a"
    assert value is not None  # is_nan is true for None
    if value >= 0.001 or value == 0:
        return f"{value:.4f}"
    return f"{value:.1e}"


def interval(low: float, high: float, digits: int = 4) -> str:
    return f"[{signed(low, digits)}, {signed(high, digits)}]"


def text_table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool] | None = None) -> str:
    """Columns padded to their widest cell; ``right`` marks right-aligned columns; control characters shown escaped."""
    from evalkit.core.safetext import visible

    right = list(right) if right is not None else [i > 0 for i in range(len(headers))]
    headers = [visible(h) for h in headers]
    rows = [[visible(c) for c in row] for row in rows]
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(str(h)) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        parts = [str(c).rjust(w) if r else str(c).ljust(w) for c, w, r in zip(cells, widths, right)]
        return "  ".join(parts).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows])


def printable(text: str) -> str:
    """``text`` with control and other unprintable characters written as escapes (a file name holding a tab, a newline
    or a terminal escape sequence is shown, never obeyed)."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in str(text))


def md_cell(text: str) -> str:
    """A Markdown table cell: pipes escaped, newlines flattened (text from the inputs is escaped first: evalkit.core.safetext.markdown_text)."""
    return " ".join(str(text).split()).replace("|", "\\|")


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool] | None = None) -> str:
    right = list(right) if right is not None else [i > 0 for i in range(len(headers))]
    lines = ["| " + " | ".join(md_cell(h) for h in headers) + " |"]
    lines.append("|" + "|".join("---:" if r else "---" for r in right) + "|")
    lines += ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
