"""File formats: a registry of readers with auto-detection.

Each format is one module that registers a :class:`Format` with a ``sniff``
function (does this sample look like me?) and a ``read`` function. Runs and
gold files are read through :func:`read_run` and :func:`read_qrels`; with
``fmt="auto"`` the first registered format whose sniff accepts the file wins.
Collections and query files register the same way (kind ``"collection"``) and
are read through :func:`evalkit.io.formats.collections.read_corpus` /
:func:`~evalkit.io.formats.collections.read_queries`.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from evalkit.core.columns import KNOWN_HEADER
from evalkit.core.errors import InputError, UsageError, shown
from evalkit.io.textio import LoadedFile, load


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
    read: Callable[..., object]
    # headed tables: the same reading from rows already split, ``(header, records, label, **options)`` with
    # records ``(line, fields)`` as :func:`~evalkit.io.formats.tables.read_delimited` yields (a DataFrame's rows)
    read_rows: Callable[..., object] | None = None
    # runs: the same run read against the gold it will be scored on, ``(loaded, qrels)``, its rows read only when
    # asked for (a DeferredRun of evalkit.io.prejudged), or None where ``read`` must read it
    read_against: Callable[..., object] | None = None


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


def _sample(data: bytes, n: int, whole: bool) -> Sample | None:
    """:func:`sample_of` on ``data``; ``None`` where its lines run past its end and it is not the whole file."""
    lines, position = [], 0
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
    if len(sample.header("\t")) == 1 and len(sample.header(",")) == 1 and any(c in first.lower() for c in KNOWN_HEADER):
        raise InputError(loaded.label, f"header {shown(first.strip())} is not tab- or comma-separated", 1)
    names = ", ".join(f.name for f in formats(kind))
    raise InputError(loaded.label, f"cannot recognise the format (expected one of: {names}; force one with {option})", 1)


def _resolve(loaded: LoadedFile, kind: str, fmt: str, option: str) -> Format:
    if fmt == "auto":
        return detect(loaded, kind, option)
    formats()
    chosen = _REGISTRY.get(fmt)
    if chosen is None or chosen.kind != kind:
        names = ", ".join(f.name for f in formats(kind))
        raise UsageError(f"unknown {kind} format {fmt!r} (known: auto, {names})")
    return chosen


def read_run(
    path: str | os.PathLike, fmt: str = "auto", *, column: str | None = None, name: str | None = None, option: str = "--format",
    against=None,
):
    """Read a run or submission file in any supported format into a :class:`~evalkit.data.Run`.

    ``option`` is the command-line option that forces a format, named when detection fails. ``against``: the
    :class:`~evalkit.data.Qrels` the run will be scored on, for a format that reads a run against its gold
    (``read_against``: the same run, its rows read only when asked for).
    """
    streamed = None
    if against is not None and fmt in ("auto", "trec-run"):  # a large run judged from its file (evalkit.io.streamed)
        from evalkit.io.prejudged import DECLINED, read_streamed

        streamed = read_streamed(str(path), against)
    loaded = load(path) if streamed is None or streamed is DECLINED else streamed
    chosen = _resolve(loaded, "run", fmt, option)
    from dataclasses import replace

    from evalkit.data import Source

    judged = against is not None and chosen.read_against is not None and streamed is not DECLINED
    run = chosen.read_against(loaded, against) if judged else None
    general = run is None
    if general:
        run = chosen.read(loaded, column=column)
    source = Source(path=str(path), format=chosen.name, sha256=loaded.digest, member=loaded.member)  # the hash: when asked for
    name = name or display_name(str(path))
    return replace(run, name=name, source=source) if general else run.named(name, source)


def read_qrels(path: str | os.PathLike, fmt: str = "auto"):
    """Read a gold file in any supported format into a :class:`~evalkit.data.Qrels`; ``irds:<id>`` reads the judgments of
    an ir_datasets dataset (:mod:`evalkit.io.datasets`) as TREC qrels."""
    from dataclasses import replace

    from evalkit.data import Source
    from evalkit.io.datasets import dataset_name, is_dataset_id

    if is_dataset_id(path):
        name = dataset_name(str(path))
        loaded, fmt = _dataset_judgments(name, fmt), "trec-qrels"
    else:
        loaded, name = load(path), display_name(str(path))
    chosen = _resolve(loaded, "qrels", fmt, "--gold-format")
    qrels = chosen.read(loaded)
    source = Source(path=str(path), format=chosen.name, sha256=loaded.digest, member=loaded.member)
    return replace(qrels, name=name, source=source)


def _dataset_judgments(name: str, fmt: str) -> LoadedFile:
    """The judgments of ir_datasets' ``name`` as the TREC qrels lines a file would hold (read by the TREC qrels reader)."""
    import hashlib

    from evalkit.io.datasets import PREFIX, irds

    label = PREFIX + name
    if fmt not in ("auto", "trec-qrels"):
        raise UsageError(f"{shown(label)}: the judgments of a dataset are read as trec-qrels, not {shown(fmt)} (drop --gold-format)")
    raw = irds.qrels_lines(name)
    return LoadedFile(label, raw, hashlib.sha256(raw).hexdigest())


# registration order is sniffing order: most specific headers first (a judging sheet's header also names query_id and
# doc_id, which BEIR qrels claim); a task's own formats take their places when their entry points load (before=)
from evalkit.io.formats import judging_sheet  # noqa: E402
from evalkit.io.formats import beir_qrels, list_run, trec_qrels, trec_run  # noqa: E402, F401


def _register_collections() -> None:
    """Collections and query files register on first use (scoring reads none), in their own sniffing order: binary
    tables, then text formats by their first bytes."""
    from evalkit.io.formats import collection_binary, beir_jsonl, trec_sgml, smart, collection_table, id_text  # noqa: F401

__all__ = ["Format", "Sample", "detect", "formats", "read_qrels", "read_run", "register"]
