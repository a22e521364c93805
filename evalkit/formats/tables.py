"""Shared table readers with line-accurate errors.

* :func:`read_delimited` -- a headed TSV/CSV through :mod:`csv` (quoted fields,
  multi-line tweets), yielding each record with the line it starts on.
* :func:`read_whitespace` -- header-less whitespace columns (TREC runs and
  qrels). Large files take a pyarrow fast path; anything unusual (extra
  spaces, bad numbers, wrong field counts) falls back to the exact Python
  parser, which names the offending line.
"""
from __future__ import annotations

import csv
import io
import math
from typing import Iterator

import numpy as np

from evalkit.data import arrow_to_numpy
from evalkit.errors import InputError
from evalkit.textio import LoadedFile

FAST_PATH_BYTES = 1 << 20
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
    found = ", ".join(repr(h) for h in header)
    raise InputError(label, f"missing {what} column {candidates[0]!r} (found: {found})", 1)


def parse_score(text: str, label: str, line: int, what: str = "score") -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(label, f"{what} {text!r} is not a number", line) from None
    if not math.isfinite(value):
        raise InputError(label, f"{what} {text!r} is not a finite number", line)
    return value


def _python_whitespace(loaded: LoadedFile, n_fields: int, keep: tuple[int, ...], numeric: int, what: str):
    label = loaded.label
    columns: list[list[str]] = [[] for _ in keep]
    values: list[float] = []
    for number, line in enumerate(loaded.text().split("\n"), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != n_fields:
            raise InputError(label, f"expected {n_fields} whitespace-separated fields, found {len(parts)}", number)
        for slot, index in enumerate(keep):
            columns[slot].append(parts[index])
        values.append(parse_score(parts[numeric], label, number, what))
    return columns, np.asarray(values, dtype=np.float64)


def _arrow_whitespace(loaded: LoadedFile, n_fields: int, keep: tuple[int, ...], numeric: int):
    """pyarrow read; returns None whenever the exact parser must decide."""
    try:
        import pyarrow as pa
        import pyarrow.csv as pacsv
    except ImportError:
        return None
    head = loaded.data[:4096]
    delimiter = "\t" if b"\t" in head else " "
    names = [f"c{i}" for i in range(n_fields)]
    include = [names[i] for i in keep] + [names[numeric]]
    types = {names[i]: pa.string() for i in keep}
    types[names[numeric]] = pa.float64()
    try:
        table = pacsv.read_csv(
            pa.py_buffer(loaded.data),
            read_options=pacsv.ReadOptions(column_names=names, block_size=1 << 24),
            parse_options=pacsv.ParseOptions(delimiter=delimiter, quote_char=False, double_quote=False),
            convert_options=pacsv.ConvertOptions(include_columns=include, column_types=types, strings_can_be_null=False),
        )
    except (pa.ArrowInvalid, pa.ArrowKeyError, pa.ArrowTypeError, ValueError):
        return None
    numbers = arrow_to_numpy(table.column(names[numeric]).combine_chunks(), np.float64)
    if not np.all(np.isfinite(numbers)):
        return None
    encoded = []
    for i in keep:
        column = table.column(names[i]).combine_chunks().dictionary_encode()
        codes = arrow_to_numpy(column.indices, np.int32).astype(np.int64)
        uniques = np.empty(len(column.dictionary), dtype=object)
        uniques[:] = column.dictionary.to_pylist()
        encoded.append((codes, uniques))
    return encoded, numbers



def read_whitespace(loaded: LoadedFile, n_fields: int, keep: tuple[int, ...], numeric: int, what: str = "score"):
    """Read header-less whitespace columns.

    Returns ``[(codes, uniques) for each kept column], numeric values`` where
    codes index the unique values in first-seen order.
    """
    from evalkit.data import factorize

    if len(loaded.data) >= FAST_PATH_BYTES:
        fast = _arrow_whitespace(loaded, n_fields, keep, numeric)
        if fast is not None:
            return fast
    columns, values = _python_whitespace(loaded, n_fields, keep, numeric, what)
    return [factorize(column) for column in columns], values
