"""List submission: one row per query, a query id and a list literal of doc ids.

The CheckThat! 2025 Task 4b layout is ``post_id<TAB>preds`` with ``preds``
like ``['id1', 'id2', ...]``, best first. Accepted variants seen in real
submissions: comma-separated (CSV), double-quoted items, an extra unnamed
index column, other column names (the list column is the one whose values
are lists, or the one named by ``--column``). Lists are parsed strictly,
never evaluated. Rank = position in the list.
"""
from __future__ import annotations

from typing import Iterable

from evalkit.core.columns import LIST_RUN_QUERY_ID
from evalkit.data import Run
from evalkit.core.errors import InputError, listed, shown
from evalkit.io.formats import Format, Sample, register
from evalkit.io.formats.tables import header_delimiter, read_delimited
from evalkit.core.listparse import ListLiteralError, parse_id_list
from evalkit.io.textio import LoadedFile


def sniff(sample: Sample) -> bool:
    header = sample.header(sample.delimiter)
    columns = sample.columns()
    if len(header) < 2 or "cord_uid" in columns or "annotation" in columns:
        return False  # gold files
    if "preds" in columns or columns & set(LIST_RUN_QUERY_ID):
        return True
    return any("['" in line or '["' in line or "[\"\"" in line for line in sample.lines[1:])


def _pick_columns(header: list[str], first_row: list[str] | None, column: str | None, label: str) -> tuple[int, int]:
    lowered = [h.lower() for h in header]
    named = [i for i, h in enumerate(header) if h]  # an unnamed first column is an index
    if column is not None:
        if column.lower() not in lowered:
            raise InputError(label, f"no column {shown(column)} (found: {listed(header, 10)})", 1)
        list_col = lowered.index(column.lower())
    elif "preds" in lowered:
        list_col = lowered.index("preds")
    else:
        candidates = [i for i in named if first_row is not None and first_row[i].lstrip().startswith("[")]
        if len(candidates) != 1:
            problem = "no column holds id lists" if not candidates else "several columns hold id lists"
            raise InputError(label, f"missing column 'preds' and {problem} (found: {listed(header, 10)}); name it with --column", 1)
        list_col = candidates[0]
    id_col = next((lowered.index(c) for c in LIST_RUN_QUERY_ID if c in lowered), None)
    if id_col is None:
        id_col = next((i for i in named if i != list_col), None)
    if id_col is None or id_col == list_col:
        raise InputError(label, f"missing query id column 'post_id' (found: {listed(header, 10)})", 1)
    return id_col, list_col


def read(loaded: LoadedFile, column: str | None = None, **_) -> Run:
    return read_rows(*read_delimited(loaded, header_delimiter(loaded)), loaded.label, column=column)


def read_rows(header: list[str], records: Iterable[tuple[int, list[str]]], label: str, column: str | None = None, **_) -> Run:
    lists: dict[str, list[str]] = {}
    first_line: dict[str, int] = {}
    columns = None
    for line, fields in records:
        if columns is None:
            columns = _pick_columns(header, fields, column, label)
        id_col, list_col = columns
        query = fields[id_col].strip()
        if not query:
            raise InputError(label, "empty query id", line)
        if query in first_line:
            raise InputError(label, f"query {shown(query)} appears twice (first on line {first_line[query]})", line)
        try:
            ids = parse_id_list(fields[list_col])
        except ListLiteralError as exc:
            raise InputError(label, f"column {header[list_col]!r} {exc}: {shown(' '.join(fields[list_col][:1000].split()))}", line) from None
        first_line[query] = line
        lists[query] = ids
    return Run.from_lists(lists)


FORMAT = register(Format("checkthat-list", "run", "query id + list literal of doc ids (CheckThat! 4b submission), TSV or CSV", sniff, read, read_rows,
                         header_names=("post_id", "preds")))
