"""Shared table readers with line-accurate errors.

* :func:`read_delimited` -- a headed TSV/CSV through :mod:`csv` (quoted fields,
  multi-line tweets), yielding each record with the line it starts on.
* :func:`read_whitespace` -- header-less whitespace columns (TREC runs and
  qrels), comment lines skipped as trec_eval does. Large files take a fast
  path: the compiled reader (:mod:`evalkit.native._native`, the Python reader's rules
  in one pass of C), else pyarrow, which takes only clean files (one
  delimiter, no empty field); a bad line (wrong field count, bad number) goes
  to the exact Python parser, which names it. All paths share one number rule
  (:func:`parse_score`), so they read and refuse the same files.
"""
from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from evalkit.core.errors import InputError, listed
from evalkit.native import kernels
from evalkit.data.ids import ArrowColumnCoder, object_array, arrow_to_numpy
from evalkit.io.textio import LoadedFile
from evalkit.core.input_rules import NUMBER_BYTES, ValueProblem, number_text

FAST_PATH_BYTES = kernels.COMPILED_READ_BYTES  # from here the compiled reader (else pyarrow) reads a table
csv.field_size_limit(1 << 30)


def read_delimited(loaded: LoadedFile, delimiter: str) -> tuple[list[str], Iterator[tuple[int, list[str]]]]:
    """Header fields and an iterator of ``(line, fields)`` for each non-blank record."""
    reader = csv.reader(io.StringIO(loaded.text(), newline=""), delimiter=delimiter, strict=True)
    label = loaded.label
    try:
        header = next(reader)
        while not any(f.strip() for f in header):
            header = next(reader)
    except StopIteration:
        raise InputError(label, "empty file") from None
    except csv.Error as exc:
        raise InputError(label, f"malformed header ({exc})", reader.line_num) from None
    header = [h.strip() for h in header]
    width = len(header)

    def records() -> Iterator[tuple[int, list[str]]]:
        last = reader.line_num
        seen = False
        while True:
            try:
                fields = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                raise InputError(label, f"malformed quoting ({exc})", last + 1) from None
            start, last = last + 1, reader.line_num
            if not fields or not any(f.strip() for f in fields):
                continue
            if len(fields) != width:
                raise InputError(
                    label,
                    f"expected {width} {'tab' if delimiter == chr(9) else 'comma'}-separated fields "
                    f"as in the header, found {len(fields)}",
                    start,
                )
            seen = True
            yield start, fields
        if not seen:
            raise InputError(label, "no data rows (header only)", 2)

    return header, records()


def header_delimiter(loaded: LoadedFile) -> str:
    """Tab when the first line holds a tab, else comma."""
    return "\t" if b"\t" in loaded.data.split(b"\n", 1)[0] else ","


def find_column(header: list[str], candidates: tuple[str, ...], label: str, what: str) -> int:
    """Index of the first header column named like one of ``candidates`` (case-insensitive)."""
    lowered = [h.lower() for h in header]
    for name in candidates:
        if name.lower() in lowered:
            return lowered.index(name.lower())
    raise InputError(label, f"missing {what} column {candidates[0]!r} (found: {listed(header, 10)})", 1)


_OTHER_SPACE = (b"\r", b"\x0b", b"\x0c")


def parse_score(text: str, label: str, line: int, what: str = "score") -> float:
    """``text`` as a finite float (the number rule of :mod:`evalkit.core.input_rules`), else an :class:`InputError` at ``label:line``."""
    try:
        return number_text(text, what)
    except ValueProblem as problem:
        raise InputError(label, str(problem), line) from None


def is_comment(fields: list[bytes] | list[str]) -> bool:
    """A line whose first non-blank character is ``#`` (trec_eval 10 skips these in runs and qrels)."""
    first = fields[0][:1] if fields else ""
    return first in ("#", b"#")


def data_lines(loaded: LoadedFile) -> Iterator[tuple[int, list[bytes]]]:
    """``(line number, whitespace-split fields)`` of each line that is neither blank nor a comment.

    Fields split on ASCII whitespace only (space, tab, CR, VT, FF), as C's ``isspace`` does in trec_eval.
    """
    for number, line in enumerate(io.BytesIO(loaded.data), start=1):  # lazily: the first data line costs one line
        fields = line.split()
        if fields and not is_comment(fields):
            yield number, fields


@dataclass(frozen=True)
class Whitespace:
    """Columns read by :func:`read_whitespace`.

    ``columns``: ``(codes, uniques)`` per kept column, codes indexing the unique
    values in first-seen order; ``values``: the numeric column; ``extra_lines``:
    how many lines had more than the required fields, ``first_extra`` the first
    of them (0 when none or unknown).
    """

    columns: list[tuple[np.ndarray, np.ndarray]]
    values: np.ndarray
    extra_lines: int = 0
    first_extra: int = 0


def _python_whitespace(loaded: LoadedFile, n_fields: int, extra: bool, keep: tuple[int, ...], numeric: int, what: str) -> Whitespace:
    from evalkit.data.ids import factorize

    label = loaded.label
    columns: list[list[bytes]] = [[] for _ in keep]
    values: list[float] = []
    n_extra = first_extra = 0
    for number, parts in data_lines(loaded):
        if len(parts) != n_fields:
            if len(parts) < n_fields or not extra:
                raise InputError(label, f"expected {n_fields} whitespace-separated fields, found {len(parts)}", number)
            n_extra += 1
            first_extra = first_extra or number
        for slot, index in enumerate(keep):
            columns[slot].append(parts[index])
        token = parts[numeric]
        value = float(token) if NUMBER_BYTES.match(token) else math.nan
        if not math.isfinite(value):
            value = parse_score(token.decode("utf-8"), label, number, what)  # raises, naming the line
        values.append(value)
    encoded = []
    for column in columns:
        codes, uniques = factorize(column)
        uniques[:] = [u.decode("utf-8") for u in uniques.tolist()]
        encoded.append((codes, uniques))
    return Whitespace(encoded, np.asarray(values, dtype=np.float64), n_extra, first_extra)


def _without_comment_lines(data: bytes) -> bytes:
    if b"#" not in data or not (data.startswith(b"#") or b"\n#" in data):
        return data
    return b"\n".join(line for line in data.split(b"\n") if not line.startswith(b"#"))


def _blank_profile(data: bytes) -> tuple[bool, bool, bool, bool, bool]:
    """(has a space, has a tab, has CR/VT/FF, a space-delimited empty field, a tab-delimited empty field).

    An empty field, with ``d`` the delimiter: ``dd``, or ``d`` at a line's start
    or end.
    """
    gaps = []
    for d in (b" ", b"\t"):
        gaps.append(d in data and (d * 2 in data or b"\n" + d in data or d + b"\n" in data or data.startswith(d) or data.endswith(d)))
    return b" " in data, b"\t" in data, any(c in data for c in _OTHER_SPACE), gaps[0], gaps[1]


def _delimiter(data: bytes) -> bytes | None:
    """Tab or space when it is the only blank byte besides newlines and no field is empty (else ``None``)."""
    spaces, tabs, others, space_gap, tab_gap = _blank_profile(data)
    if others or (spaces and tabs):
        return None
    delimiter, gap = (b"\t", tab_gap) if tabs else (b" ", space_gap)
    return None if gap else delimiter


def _compiled_whitespace(loaded: LoadedFile, shape: kernels.TableShape) -> Whitespace | None:
    """The compiled reader (:func:`evalkit.native.kernels.read_table`): the Python reader's rules, one pass; ``None`` without
    the kernel or where the Python reader must name a bad line."""
    found = kernels.read_table(loaded.data, *shape)
    if found is None:
        return None
    columns, values, n_extra, first_extra = found
    return Whitespace([(codes, object_array(ids)) for codes, ids in columns], values, n_extra, first_extra)


def _arrow_whitespace(loaded: LoadedFile, n_fields: int, extra: bool, keep: tuple[int, ...], numeric: int) -> Whitespace | None:
    """pyarrow read (where the compiled reader was not built); ``None`` whenever the exact Python parser must decide.

    Taken only when one delimiter byte (tab or space) is the only whitespace
    besides newlines, every line has the same number of fields and no field
    is empty (an empty field means two delimiters in a row, or one at a line
    end: whitespace splitting would see fewer fields). Numbers are parsed with
    no null spellings, so anything but a finite decimal (``NA``, ``N/A``,
    ``nan``...) sends the file to the Python parser, which names the line.
    """
    try:
        import pyarrow as pa
        import pyarrow.csv as pacsv
    except ImportError:
        return None
    data = _without_comment_lines(loaded.data)
    delimiter = _delimiter(data)
    if delimiter is None:
        return None
    start = len(data) - len(data.lstrip(b"\n"))
    end = data.find(b"\n", start)
    width = data.count(delimiter, start, end if end >= 0 else len(data)) + 1  # fields on the first line
    if width < n_fields or (width > n_fields and not extra):
        return None
    names = [f"c{i}" for i in range(width)]
    wanted = sorted({*keep, numeric})
    types = {names[i]: pa.string() for i in keep}
    types[names[numeric]] = pa.float64()
    options = dict(
        read_options=pacsv.ReadOptions(column_names=names, block_size=1 << 20),
        parse_options=pacsv.ParseOptions(delimiter=delimiter.decode(), quote_char=False, double_quote=False),
        convert_options=pacsv.ConvertOptions(
            column_types=types, include_columns=[names[i] for i in wanted], null_values=[], strings_can_be_null=False,
            quoted_strings_can_be_null=False,
        ),
    )
    # every line is still split and must have ``width`` fields; only the wanted columns are converted, block by
    # block, each block's scores copied as it comes
    max_rows = len(data) // (2 * width) + 1  # a line holds >= width - 1 delimiters, width characters and a newline
    coders = [ArrowColumnCoder() for _ in keep]
    numbers = np.empty(max_rows, dtype=np.float64)  # untouched pages past the last row cost nothing
    rows = 0
    try:
        # the system allocator: pyarrow's default (mimalloc) hands each block fresh pages whose first touch
        # costs 2.5x the parse's system time here (0.45 s against 0.18 s for a 177 MB run)
        for block in pacsv.open_csv(pa.py_buffer(data), memory_pool=pa.system_memory_pool(), **options):
            column = block.column(names[numeric])
            if column.null_count:
                return None
            numbers[rows: rows + len(column)] = arrow_to_numpy(column, np.float64, copy=False)
            for coder, i in zip(coders, keep):
                coder.add(block.column(names[i]))
            rows += len(column)
    except (pa.ArrowInvalid, pa.ArrowKeyError, pa.ArrowTypeError, ValueError):
        return None
    if rows == 0:
        return None
    numbers = numbers[:rows]
    if not np.all(np.isfinite(numbers)):
        return None
    encoded = [coder.finish() for coder in coders]
    n_extra = rows if width > n_fields else 0  # every line has the first line's width
    return Whitespace(encoded, numbers, n_extra, data_line_number(loaded, 0) if n_extra else 0)


def read_whitespace(loaded: LoadedFile, shape: kernels.TableShape, what: str = "score") -> Whitespace:
    """Read header-less whitespace-separated columns (TREC runs and qrels).

    Blank lines and comment lines (first non-blank character ``#``) are
    skipped. Each line has ``shape.n_fields`` fields; with ``shape.extra``
    more are allowed and ignored (trec_eval: fields after the run_id), and
    counted. The columns ``shape.keep`` are coded; the column
    ``shape.numeric`` must hold finite decimal numbers. Files of
    :data:`FAST_PATH_BYTES` or more try the compiled reader first (else
    pyarrow), which accept only what the Python reader accepts, with the
    same values.
    """
    n_fields, extra, keep, numeric = shape
    if len(loaded.data) >= FAST_PATH_BYTES:
        fast = _compiled_whitespace(loaded, shape)
        if fast is None and kernels.native is None:
            fast = _arrow_whitespace(loaded, n_fields, extra, keep, numeric)
        if fast is not None:
            return fast
    return _python_whitespace(loaded, n_fields, extra, keep, numeric, what)


def data_line_number(loaded: LoadedFile, row: int) -> int:
    """The file line of the ``row``-th data line (0-based; blank and comment lines skipped)."""
    for count, (number, _) in enumerate(data_lines(loaded)):
        if count == row:
            return number
    return 0
