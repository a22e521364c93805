"""The rules every input value meets, read from a file or given in memory: one rule, two sources.

* a **number** (score, grade) is finite; written as text it is an ASCII decimal
  (``[+-]digits[.digits][e[+-]digits]``: Python's ``float`` would also take
  ``1_0`` or ``١``, C's ``atof`` ``0x10`` or ``5%``); its value is
  ``float()``'s, to the bit, in every reader (compiled, streamed, pyarrow,
  pure Python: ``tests/io/test_number_forms.py``); ``nan``, ``inf``, a decimal
  that overflows to infinity (``1e400``), booleans, ``None`` and integers
  beyond a float's range are refused; an underflow is ``float()``'s 0 or
  subnormal;
* an **id** is text stripped of ASCII blanks and never empty; an integer is
  written as its digits; ``None``, NaN, floats and booleans are refused (a
  float id column is what pandas makes of ids with missing values);
* a (query, document) pair is **judged once**.

The file readers (:mod:`evalkit.io.formats`) and the in-memory builders
(:mod:`evalkit.io.in_memory`) apply these; each raises :class:`ValueProblem`, which
its caller turns into an error naming the file and line, or the DataFrame row
or dict key. Every pattern here is linear in the length of what it reads.
"""
from __future__ import annotations

import math
import numbers
import re
from typing import Any

import numpy as np

from evalkit.core.errors import shown

# unambiguous: the digits before the point are read once, so a failing token costs one pass (no backtracking)
_NUMBER = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
NUMBER = re.compile(_NUMBER + r"\Z")
NUMBER_BYTES = re.compile(_NUMBER.encode() + rb"\Z")
BLANKS = " \t\r\n\x0b\x0c"  # ASCII whitespace: what the readers split and strip on (C's isspace)


JUDGED_TWICE = "the same (query, document) pair is judged twice"


class ValueProblem(ValueError):
    """A value that breaks one of the rules; the message names the value (cut) and the rule; ``row``: where in a column."""

    def __init__(self, message: str, row: int | None = None):
        super().__init__(message)
        self.message = message
        self.row = row

    def __str__(self) -> str:
        return self.message


def number_text(text: str, what: str = "score") -> float:
    """``text`` as a finite float under the ASCII decimal rule."""
    stripped = text.strip(BLANKS)
    if NUMBER.match(stripped):
        value = float(stripped)
        if math.isfinite(value):
            return value
        raise ValueProblem(f"{what} {shown(text)} is not a finite number")
    unsigned = stripped[1:] if stripped[:1] in ("+", "-") else stripped
    special = unsigned.lower() in ("nan", "inf", "infinity")
    raise ValueProblem(f"{what} {shown(text)} is {'not a finite number' if special else 'not a number'}")


def number(value: Any, what: str = "score") -> float:
    """Any in-memory value as a finite float: a real number, or text under the file rule (:func:`number_text`)."""
    if isinstance(value, str):
        return number_text(value, what)
    if value is None or _is_na(value):
        raise ValueProblem(f"{what} is missing ({shown(value)})")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueProblem(f"{what} {shown(value)} is {_a(value)}, not a number")
    try:
        result = float(value)
    except (OverflowError, ValueError, TypeError):
        raise ValueProblem(f"{what} {shown(value)} is not a finite number (beyond a float's range)") from None
    if not math.isfinite(result):
        raise ValueProblem(f"{what} {shown(value)} is not a finite number")
    return result


def numbers_array(values: Any, what: str = "score") -> np.ndarray:
    """A column of numbers (a numpy array or a sequence) as finite float64: vectorised for numeric columns."""
    array = np.asarray(values)
    if array.dtype.kind in "iuf":
        result = array.astype(np.float64)
        bad = np.flatnonzero(~np.isfinite(result))
        if bad.size:
            raise ValueProblem(f"{what} {shown(array[bad[0]].item())} is not a finite number", int(bad[0]))
        return result
    out = np.empty(len(array), dtype=np.float64)
    for row, value in enumerate(array.tolist()):
        try:
            out[row] = number(value, what)
        except ValueProblem as problem:
            raise ValueProblem(str(problem), row) from None
    return out


def utf8_text(text: str, what: str = "") -> str:
    """``text`` itself where it can be written as UTF-8, as every file evalkit reads must be; a lone surrogate
    (``"d\\ud800"``, which no UTF-8 byte sequence decodes to) is a :class:`ValueProblem`, as a file's bad byte is."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as problem:
        at = problem.start
        named = f"{what} {shown(text)}" if what else shown(text)
        raise ValueProblem(f"{named} is not UTF-8 text (a lone surrogate U+{ord(text[at]):04X} at character {at + 1})") from None
    return text


def identifier(value: Any, what: str = "id") -> str:
    """Any in-memory id as the text a file would hold: a string stripped of ASCII blanks, or an integer's digits."""
    if isinstance(value, str):
        text = value.strip(BLANKS)
        if not text:
            raise ValueProblem(f"empty {what}")
        return utf8_text(text, what)
    if isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return str(int(value))
    if value is None or (isinstance(value, float) and math.isnan(value)) or _is_na(value):
        raise ValueProblem(f"{what} is missing ({shown(value)})")
    raise ValueProblem(f"{what} {shown(value)} is {_a(value)}: ids are text or integers")


def identifiers(values: Any, what: str = "id") -> list[str]:
    """A column of ids as text (see :func:`identifier`); a problem carries the 0-based row."""
    array = np.asarray(values, dtype=object) if not isinstance(values, np.ndarray) else values
    if array.dtype.kind in "iu":
        return [str(v) for v in array.tolist()]
    out = []
    for row, value in enumerate(array.tolist()):
        try:
            out.append(identifier(value, what))
        except ValueProblem as problem:
            raise ValueProblem(str(problem), row) from None
    return out


def texts(values: Any, what: str = "text") -> list[str]:
    """A column of text cells (:func:`cell_text`), each UTF-8 text (:func:`utf8_text`); a problem carries the 0-based row."""
    out = []
    for row, value in enumerate(np.asarray(values, dtype=object).tolist()):
        try:
            out.append(utf8_text(cell_text(value), what))
        except ValueProblem as problem:
            raise ValueProblem(str(problem), row) from None
    return out


def cell_text(value: Any) -> str:
    """A table cell (a DataFrame's) as the text a file would hold: missing values (None, NaN, NA) are empty,
    integers their digits, floats ``repr`` (read back exactly), a list of ids its literal, anything else ``str``."""
    if isinstance(value, str):
        return value
    if value is None or _is_na(value) or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (numbers.Integral, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, (list, tuple, np.ndarray)):
        items = value.tolist() if isinstance(value, np.ndarray) else list(value)
        return repr([item if isinstance(item, str) else cell_text(item) for item in items])
    return str(value)


def table_column(frame: Any, column: Any, convert, what: str, label: str) -> Any:
    """``convert(values, what)`` of one DataFrame column; a problem names the DataFrame row (1-based) and index."""
    from evalkit.core.errors import UsageError

    try:
        return convert(frame[column].to_numpy(), what)
    except ValueProblem as problem:
        row = problem.row if problem.row is not None else 0
        raise UsageError(f"{label}, row {row + 1} (index {shown(frame.index[row])}), column {shown(str(column))}: {problem}") from None


def check_table_columns(frame: Any, label: str) -> None:
    """A DataFrame whose column names are unique (case and blanks aside): which of two would hold the data?"""
    from evalkit.core.errors import UsageError

    seen: set[str] = set()
    for column in frame.columns:
        key = str(column).strip().lower()
        if key in seen:
            raise UsageError(f"{label}: column {shown(str(column).strip())} appears twice (which one holds the data?)")
        seen.add(key)
    if len(frame) == 0:
        raise UsageError(f"{label}: no rows")


def first_repeated_pair(qidx: np.ndarray, didx: np.ndarray, n_docs: int) -> int | None:
    """The row of the first (query, document) pair met a second time, else ``None``: one pass where each query's
    rows are contiguous (a gold file as written, :func:`evalkit.native.kernels.first_occurrences`), else one sort."""
    if len(qidx) > 1 and qidx[0] >= 0 and bool(np.all(qidx[1:] >= qidx[:-1])) and 0 <= didx.min() and didx.max() < n_docs:
        from evalkit.native import kernels

        first = kernels.first_occurrences(qidx, didx, n_docs)
        if first is not None:
            repeats = np.flatnonzero(~first)
            return int(repeats[0]) if len(repeats) else None
    key = qidx.astype(np.int64) * max(n_docs, 1) + didx
    _, first, counts = np.unique(key, return_index=True, return_counts=True)
    if not np.any(counts > 1):
        return None
    seen = np.zeros(len(key), dtype=bool)
    seen[first] = True
    return int(np.flatnonzero(~seen)[0])


def _a(value: Any) -> str:
    name = type(value).__name__
    return f"an {name}" if name[:1].lower() in "aeiou" else f"a {name}"


def _is_na(value: Any) -> bool:
    """pandas' NA / NaT and numpy's NaN scalars (without importing pandas)."""
    if type(value).__name__ in ("NAType", "NaTType"):
        return True
    return isinstance(value, np.floating) and bool(np.isnan(value))
