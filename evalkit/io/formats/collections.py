"""Collections and query files: the registry side of :mod:`evalkit.io.formats` for documents and queries.

``read_corpus(path)`` and ``read_queries(path)`` detect the format (``fmt`` forces
one) and return a :class:`~evalkit.data.corpus.Corpus` / :class:`~evalkit.data.corpus.Queries`.
Each format is a :class:`~evalkit.io.formats.Format` of kind ``"collection"``,
registered by its own module in sniffing order (binary tables, BEIR JSONL, TREC
SGML, SMART, delimited tables, ``id<TAB>text``); its ``sniff`` looks at a
:class:`Probe` of the file, its ``read(path, mapping, trust_pickle)`` returns the
records and the :class:`~evalkit.data.Source`. The formats:

* ``pickle`` -- the official CheckThat! 4b collection (a pickled pandas DataFrame).
  Unpickling runs code, so it is refused unless ``trust_pickle=True``
  (``--trust-pickle``); never use it on files from people you do not trust.
* ``parquet`` -- a Parquet table, columns found as in ``table``.
* ``beir-jsonl`` -- one JSON object a line: ``_id``, ``title``, ``text``, ``metadata``
  (BEIR corpus.jsonl / queries.jsonl; ``id``/``doc_id``/``cord_uid`` also taken).
* ``trec-sgml`` -- ``<DOC><DOCNO>id</DOCNO> ... </DOC>`` (TREC collections, MEDLINE ``MED.ALL``).
* ``smart`` -- ``.I id`` records with ``.T`` title / ``.W`` text / ``.A`` authors fields
  (the classic SMART collections, MEDLINE ``MED.QRY``).
* ``table`` -- CSV / TSV with a header; columns found by their usual names
  (:data:`evalkit.core.columns.COLLECTION_FIELDS`) or mapped explicitly, ``columns={"text": "abstract"}``.
  The 4b query tweets (``post_id``, ``tweet_text``) and ClimateCheck claims read here.
* ``id-text`` -- header-less ``id<TAB>text`` lines (NFCorpus ``.docs`` / ``.queries``).

The main body of a document is always the field ``text`` (``abstract``,
``body``, ``contents`` are renamed to it); other fields keep their names
(``title``, ``authors``, ``journal``, ``source``). Duplicate ids and documents
or queries without any text are refused with ``FILE:LINE: problem``.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Callable, Iterator, Mapping

from evalkit.core.columns import COLLECTION_DOC_ID, COLLECTION_FIELDS, COLLECTION_QUERY_ID
from evalkit.data.corpus import Corpus, Queries
from evalkit.data import Source
from evalkit.core.errors import InputError, UsageError, shown
from evalkit.io.formats import Format, formats, register
from evalkit.io.textio import LoadedFile, check_regular, load

KIND = "collection"
Record = tuple[int, dict[str, str]]  # (line, {field: value}) with the id under "_id"
Reader = Callable[[str, Mapping[str, str], bool], tuple[Iterator[Record], Source]]


@dataclass(frozen=True)
class Probe:
    """What a collection format's ``sniff`` sees: the file name and its first 4,096 bytes."""

    name: str  # lower-cased file name, ``.gz`` dropped
    head: bytes  # the first bytes as stored (not decompressed)
    id_column: str | None = None  # an id column mapped by the user (``--map id=COLUMN``)

    @property
    def text(self) -> str:
        """The head as text, without a BOM or leading white space."""
        return self.head.decode("utf-8", "replace").lstrip("\ufeff").lstrip()

    @property
    def cells(self) -> list[str]:
        """The lower-cased cells of the first line, split on tabs and commas, quotes dropped."""
        first = self.text.split("\n", 1)[0].lower()
        return [c.strip().strip('"') for c in re.split(r"[\t,]", first)]


def register_collection(name: str, description: str, sniff: Callable[[Probe], bool], read: Reader) -> Format:
    """Register a collection format (registration order is sniffing order)."""
    return register(Format(name, KIND, description, sniff, read))


def text_reader(name: str, records: Callable[[LoadedFile, Mapping[str, str]], Iterator[Record]]) -> Reader:
    """A :data:`Reader` for a text format: the file read through :func:`evalkit.io.textio.load`, then ``records``."""

    def read(path: str, mapping: Mapping[str, str], trust_pickle: bool = False) -> tuple[Iterator[Record], Source]:
        loaded = load(path)
        return records(loaded, mapping), Source(path, name, loaded.digest, loaded.member)

    return read


def collection_formats() -> list[Format]:
    """The registered collection formats, in sniffing order."""
    return formats(KIND)


def format_names() -> tuple[str, ...]:
    return tuple(f.name for f in collection_formats())


# --------------------------------------------------------------------- records
def canonical(record: Mapping[str, object], mapping: Mapping[str, str], label: str, line: int) -> dict[str, str]:
    """Rename the columns of one record to evalkit's field names (``_id``, ``title``, ``text``, ...)."""
    out: dict[str, str] = {}
    keys = {k.strip().lower(): k for k in record}
    aliases: tuple[str, ...] = COLLECTION_QUERY_ID if mapping.get("__kind__") == "query" else COLLECTION_DOC_ID
    id_key = mapping.get("id") or next((keys[a] for a in aliases if a in keys), None)
    if id_key is None or id_key not in record:
        raise InputError(label, f"no id column (expected one of {', '.join(aliases)}, or map one with id=COLUMN)", line)
    out["_id"] = id_of(record[id_key], label, line)
    taken = {id_key}
    for field, aliases in COLLECTION_FIELDS.items():
        key = mapping.get(field) or next((keys[a] for a in aliases if a in keys and keys[a] not in taken), None)
        if key is not None and key in record:
            out[field] = text_of(record[key])
            taken.add(key)
    for field, key in mapping.items():  # extra mapped fields (e.g. fields={"venue": "journal_name"})
        if field not in out and field != "id" and not field.startswith("__") and key in record:
            out[field] = text_of(record[key])
    return out


def id_of(value: object, label: str, line: int) -> str:
    """A document or query id: text, or a whole number (``7`` -> ``"7"``); ``true``, ``1.0``, ``[1]``, ``null`` are refused
    (turned into text they would silently become ``"True"``, ``"1.0"``, ``"[1]"``)."""
    import numbers

    if isinstance(value, str):
        return value.strip()
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return str(int(value))
    try:
        shown = json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        shown = repr(value)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    raise InputError(label, f"id {shown} is not a string or a whole number; write ids as strings", line)


def text_of(value: object) -> str:
    """A cell as text: ``None`` and NaN empty, lists joined with ``; ``."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, (list, tuple)):
        return "; ".join(text_of(v) for v in value)
    return str(value)


def parse_mapping(pairs: Mapping[str, str] | list[str] | tuple[str, ...] | None) -> dict[str, str]:
    """``["text=abstract", "id=cord_uid"]`` (or a dict) -> ``{"text": "abstract", "id": "cord_uid"}``."""
    if not pairs:
        return {}
    if isinstance(pairs, Mapping):
        return {str(k): str(v) for k, v in pairs.items()}
    out = {}
    for pair in pairs:
        field, sep, column = pair.partition("=")
        if not sep or not field.strip() or not column.strip():
            raise UsageError(f"column mapping {pair!r}: write it as FIELD=COLUMN, e.g. text=abstract")
        out[field.strip()] = column.strip()
    return out


# --------------------------------------------------------------------- detection and reading
def detect_collection(path: str, head: bytes, id_column: str | None = None) -> str:
    """The format of ``path`` from its name and first bytes (``id_column``: a mapped id column name)."""
    probe = Probe(path.lower().removesuffix(".gz"), head, id_column)
    for fmt in collection_formats():
        if fmt.sniff(probe):
            return fmt.name
    raise UsageError(f"{path}: cannot tell the collection format; pass --corpus-format (one of {', '.join(format_names())})")


def _records(path: str | os.PathLike, fmt: str, columns, trust_pickle: bool, kind: str) -> tuple[Iterator[Record], Source]:
    path = str(path)
    mapping = {**parse_mapping(columns), "__kind__": kind}
    from evalkit.io.datasets import dataset_name, is_dataset_id

    if is_dataset_id(path):  # irds:<id>: streamed from ir_datasets, each record named as a file's columns are
        from evalkit.io.datasets import irds

        if fmt not in ("auto", "irds"):
            raise UsageError(f"{shown(path)}: a dataset's {kind}s are read from ir_datasets, not as {shown(fmt)} (drop the format option)")
        raw, source = irds.records(dataset_name(path), kind)
        return ((line, canonical(record, mapping, path, line)) for line, record in raw), source
    check_regular(path)  # a missing file, a folder, a FIFO: one line, never a wait
    with open(path, "rb") as handle:
        head = handle.read(4096)
    chosen = detect_collection(path, head, mapping.get("id")) if fmt == "auto" else fmt
    reader = next((f for f in collection_formats() if f.name == chosen), None)
    if reader is None:
        raise UsageError(f"unknown collection format {fmt!r} (known: {', '.join(format_names())})")
    return reader.read(path, mapping, trust_pickle)


def _collect(records: Iterator[Record], label: str, what: str) -> tuple[list[str], list[dict[str, str]], dict[str, dict]]:
    ids: list[str] = []
    rows: list[dict[str, str]] = []
    metadata: dict[str, dict] = {}
    first_line: dict[str, int] = {}
    for line, record in records:
        doc_id = record.pop("_id")
        meta = record.pop("__metadata__", None)
        if not doc_id:
            raise InputError(label, f"{what} with an empty id", line)
        if doc_id in first_line:
            raise InputError(label, f"duplicate {what} id {shown(doc_id)} (first on line {first_line[doc_id]})", line)
        if not any(str(v).strip() for v in record.values()):
            raise InputError(label, f"{what} {shown(doc_id)} has no text", line)
        first_line[doc_id] = line
        ids.append(doc_id)
        rows.append(record)
        if meta:
            metadata[doc_id] = meta  # type: ignore[assignment]
    if not ids:
        raise InputError(label, f"no {what}s found")
    return ids, rows, metadata


def read_corpus(path: str | os.PathLike, fmt: str = "auto", columns=None, *, trust_pickle: bool = False) -> Corpus:
    """Read a document collection (see the module docstring for the formats)."""
    records, source = _records(path, fmt, columns, trust_pickle, "document")
    ids, rows, metadata = _collect(records, source.path, "document")
    names = list(dict.fromkeys(k for row in rows for k in row))
    return Corpus(ids=ids, fields={n: [row.get(n, "") for row in rows] for n in names}, source=source, metadata=metadata)


def read_queries(path: str | os.PathLike, fmt: str = "auto", columns=None) -> Queries:
    """Read queries; the query text is the ``text`` field (or ``title`` when there is no text)."""
    records, source = _records(path, fmt, columns, False, "query")
    ids, rows, metadata = _collect(records, source.path, "query")
    texts = [row.get("text") or row.get("title", "") for row in rows]
    return Queries(ids=ids, texts=texts, source=source, metadata=metadata)
