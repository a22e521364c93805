"""Delimited collection tables: CSV / TSV with a header (the 4b query tweets, ClimateCheck claims, ...).

Columns are found by their usual names (:data:`evalkit.core.columns.COLLECTION_FIELDS`)
or mapped explicitly (``--map text=abstract``).
"""
from __future__ import annotations

from typing import Iterator, Mapping

from evalkit.core.columns import COLLECTION_ID
from evalkit.core.errors import InputError
from evalkit.io.formats.collections import Probe, Record, canonical, register_collection, text_reader
from evalkit.io.formats.tables import header_delimiter, read_delimited
from evalkit.io.textio import LoadedFile


def records(loaded: LoadedFile, mapping: Mapping[str, str]) -> Iterator[Record]:
    header, rows = read_delimited(loaded, header_delimiter(loaded))
    seen: set[str] = set()
    for name in header:
        if name.strip().lower() in seen:
            raise InputError(loaded.label, f"column {name.strip()!r} appears twice in the header (which one holds the data?)", 1)
        seen.add(name.strip().lower())
    for line, fields in rows:
        yield line, canonical(dict(zip(header, fields)), mapping, loaded.label, line)


def sniff(probe: Probe) -> bool:
    """A first line naming a known id column (or the mapped one), or a ``.csv`` file."""
    mapped = (probe.id_column or "").lower()
    return any(c in COLLECTION_ID or c == mapped for c in probe.cells) or probe.name.endswith(".csv")


FORMAT = register_collection("table", "CSV / TSV with a header, columns by their usual names or --map FIELD=COLUMN", sniff, text_reader("table", records))
