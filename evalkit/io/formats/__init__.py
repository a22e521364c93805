"""File formats: a registry of readers with auto-detection.

Each format is one module that registers a :class:`Format` with a ``sniff``
function (does this sample look like me?) and a ``read`` function. Runs and
gold files are read through the one door, :func:`evalkit.io.reading.read_run`
and :func:`~evalkit.io.reading.read_qrels`; with ``"auto"`` the first
registered format whose sniff accepts the file wins (:func:`resolve`).
Collections and query files register the same way (kind ``"collection"``) and
are read through :func:`evalkit.io.formats.collections.read_corpus` /
:func:`~evalkit.io.formats.collections.read_queries`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Literal, overload

from evalkit.core.errors import InputError, UsageError, shown
from evalkit.io.textio import LoadedFile


@dataclass(frozen=True)
class Sample:
    """The first non-blank lines of a file, for sniffing."""

    lines: list[str]

    @property
    def first(self) -> str:
        return self.lines[0] if self.lines else ""

    def header(self, delimiter: str) -> list[str]:
        import csv

        return next(csv.reader([self.first], delimiter=delimiter), [])

    @property
    def fields(self) -> list[str]:
        """The first line split as the whitespace readers split it (ASCII blanks only, as C's isspace)."""
        return [f.decode("utf-8", errors="replace") for f in self.first.encode("utf-8", errors="replace").split()]

    @property
    def delimiter(self) -> str:
        """Tab when the first line has a tab, else comma."""
        return "\t" if "\t" in self.first else ","

    def columns(self) -> set[str]:
        return {c.strip().lower() for c in self.header(self.delimiter)}


@dataclass(frozen=True)
class Format:
    name: str
    kind: str  # "run", "qrels" or "collection"
    description: str
    sniff: Callable[..., bool]  # a Sample for runs and gold files, a collections.Probe for collections
    read: Callable[..., Any]  # a Run, a Qrels or a collection's records, by kind
    # headed tables: the same reading from rows already split, ``(header, records, label, **options)`` with
    # records ``(line, fields)`` as :func:`~evalkit.io.formats.tables.read_delimited` yields (a DataFrame's rows)
    read_rows: Callable[..., Any] | None = None
    # runs: the same run read against the gold it will be scored on, ``(loaded, qrels)``, its rows read only when
    # asked for (a DeferredRun of evalkit.io.prejudged), or None where ``read`` must read it
    read_against: Callable[..., Any] | None = None
    # headed tables: column names that mark this format's header, so that detection can say of a header holding one
    # that it is not tab- or comma-separated
    header_names: tuple[str, ...] = ()


_REGISTRY: dict[str, Format] = {}


ENTRY_POINT_GROUP = "evalkit.formats"  # modules that register formats of their own (a task's gold and run files)


def register(fmt: Format, before: str | None = None) -> Format:
    """Make ``fmt`` known; registration order is sniffing order, and ``before`` names the format it is tried ahead of."""
    if before is None or before not in _REGISTRY:
        _REGISTRY[fmt.name] = fmt
        return fmt
    items = [(name, f) for name, f in _REGISTRY.items() if name != fmt.name]
    at = next(i for i, (name, _) in enumerate(items) if name == before)
    _REGISTRY.clear()
    _REGISTRY.update(items[:at] + [(fmt.name, fmt)] + items[at:])
    return fmt


def formats(kind: str | None = None) -> list[Format]:
    from evalkit.core.entry_points import import_plugins

    import_plugins(ENTRY_POINT_GROUP)
    if kind not in ("run", "qrels"):
        _register_collections()
    return [f for f in _REGISTRY.values() if kind is None or f.kind == kind]


# the start of a data line: a line whose first non-blank byte is not '#' (linear: one way to read each line's blanks)
_DATA_LINE = re.compile(rb"^[ \t\r\x0b\x0c]*[^ \t\r\n\x0b\x0c#]", re.MULTILINE)


def sample_of(loaded: LoadedFile, n: int = 6) -> Sample:
    """The first ``n`` lines that are neither blank nor comments (first non-blank character ``#``), whole.

    The lines the readers read, as they read them (however long, wherever they start): a file is recognised
    by the same lines and the same fields that its reader then reads, never by a cut window of bytes.
    """
    data, whole = loaded.prefix()
    return _sample(data, n, whole) or _sample(loaded.data, n, True)


@overload
def _sample(data: bytes, n: int, whole: Literal[True]) -> Sample: ...
@overload
def _sample(data: bytes, n: int, whole: bool) -> Sample | None: ...
def _sample(data: bytes, n: int, whole: bool) -> Sample | None:
    """:func:`sample_of` on ``data``; ``None`` where its lines run past its end and it is not the whole file."""
    lines: list[str] = []
    position = 0
    while len(lines) < n:
        found = _DATA_LINE.search(data, position)
        end = -1 if found is None else data.find(b"\n", found.start())
        if end < 0 and not whole:
            return None
        if found is None:
            break
        end = len(data) if end < 0 else end
        lines.append(data[found.start():end].decode("utf-8", errors="replace"))
        position = end + 1
    return Sample(lines)


def display_name(path: str) -> str:
    """Run name from a path: file name without .gz / .zip / .tsv / .csv / .trec ..."""
    name = Path(path).name
    for suffix in (".gz", ".zip", ".tsv", ".csv", ".trec", ".txt", ".run", ".qrels", ".qrel"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    return name or Path(path).name


def detect(loaded: LoadedFile, kind: str, option: str = "--format") -> Format:
    """The format of ``loaded`` among formats of ``kind``; clear errors otherwise (``option`` forces a format)."""
    sample = sample_of(loaded)
    if not sample.lines:
        raise InputError(loaded.label, "empty file")
    for fmt in formats(kind):
        if fmt.sniff(sample):
            return fmt
    other = "qrels" if kind == "run" else "run"
    for fmt in formats(other):
        if fmt.sniff(sample):
            what = "a gold/qrels file" if other == "qrels" else "a run"
            raise InputError(loaded.label, f"looks like {what} ({fmt.name}), not a {'run' if kind == 'run' else 'gold file'}")
    first = sample.first
    known = {name for fmt in formats("run") + formats("qrels") for name in fmt.header_names}
    if len(sample.header("\t")) == 1 and len(sample.header(",")) == 1 and any(c in first.lower() for c in sorted(known)):
        raise InputError(loaded.label, f"header {shown(first.strip())} is not tab- or comma-separated", 1)
    names = ", ".join(f.name for f in formats(kind))
    raise InputError(loaded.label, f"cannot recognise the format (expected one of: {names}; force one with {option})", 1)


def resolve(loaded: LoadedFile, kind: str, fmt: str, option: str = "--format") -> Format:
    """The format ``fmt`` names (``"auto"``: :func:`detect`'s), among formats of ``kind``; one line for an unknown name."""
    if fmt == "auto":
        return detect(loaded, kind, option)
    formats()
    chosen = _REGISTRY.get(fmt)
    if chosen is None or chosen.kind != kind:
        names = ", ".join(f.name for f in formats(kind))
        raise UsageError(f"unknown {kind} format {fmt!r} (known: auto, {names})")
    return chosen


# registration order is sniffing order: most specific headers first (a judging sheet's header also names query_id and
# doc_id, which BEIR qrels claim); a task's own formats take their places when their entry points load (before=)
from evalkit.io.formats import judging_sheet  # noqa: E402
from evalkit.io.formats import beir_qrels, list_run, trec_qrels, trec_run  # noqa: E402, F401


def _register_collections() -> None:
    """Collections and query files register on first use (scoring reads none), in their own sniffing order: binary
    tables, then text formats by their first bytes."""
    from evalkit.io.formats import collection_binary, beir_jsonl, trec_sgml, smart, collection_table, id_text  # noqa: F401

__all__ = ["Format", "Sample", "detect", "formats", "register", "resolve"]
