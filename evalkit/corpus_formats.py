"""Readers of document collections and query sets, by format.

``read_corpus(path)`` and ``read_queries(path)`` detect the format (``fmt`` forces
one) and return a :class:`~evalkit.corpus.Corpus` / :class:`~evalkit.corpus.Queries`:

* ``beir-jsonl`` -- one JSON object a line: ``_id``, ``title``, ``text``, ``metadata``
  (BEIR corpus.jsonl / queries.jsonl; ``id``/``doc_id``/``cord_uid`` also taken).
* ``table`` -- CSV / TSV with a header, or Parquet; columns found by their usual
  names (:data:`evalkit.columns.COLLECTION_FIELDS`) or mapped explicitly, ``columns={"text": "abstract"}``.
  The 4b query tweets (``post_id``, ``tweet_text``) and ClimateCheck claims read here.
* ``id-text`` -- header-less ``id<TAB>text`` lines (NFCorpus ``.docs`` / ``.queries``).
* ``trec-sgml`` -- ``<DOC><DOCNO>id</DOCNO> ... </DOC>`` (TREC collections, MEDLINE ``MED.ALL``).
* ``smart`` -- ``.I id`` records with ``.T`` title / ``.W`` text / ``.A`` authors fields
  (the classic SMART collections, MEDLINE ``MED.QRY``).
* ``pickle`` -- the official CheckThat! 4b collection (a pickled pandas DataFrame).
  Unpickling runs code, so it is refused unless ``trust_pickle=True``
  (``--trust-pickle``); never use it on files from people you do not trust.

The main body of a document is always the field ``text`` (``abstract``,
``body``, ``contents`` are renamed to it); other fields keep their names
(``title``, ``authors``, ``journal``, ``source``). Duplicate ids and documents
or queries without any text are refused with ``FILE:LINE: problem``.
"""
from __future__ import annotations

import os
import re
from typing import Callable, Iterator, Mapping

from evalkit.columns import COLLECTION_DOC_ID, COLLECTION_FIELDS, COLLECTION_ID, COLLECTION_QUERY_ID
from evalkit.corpus import Corpus, Queries
from evalkit.data import Source
from evalkit.errors import InputError, UsageError
from evalkit.textio import LoadedFile, check_regular, load, parse_json

SKIP_JSON_KEYS = {"metadata"}
Record = tuple[int, dict[str, str]]  # (line, {field: value}) with the id under "_id"


# --------------------------------------------------------------------- helpers
def _canonical(record: Mapping[str, object], mapping: Mapping[str, str], label: str, line: int) -> dict[str, str]:
    """Rename the columns of one record to evalkit's field names (``_id``, ``title``, ``text``, ...)."""
    out: dict[str, str] = {}
    keys = {k.strip().lower(): k for k in record}
    aliases = COLLECTION_QUERY_ID if mapping.get("__kind__") == "query" else COLLECTION_DOC_ID
    id_key = mapping.get("id") or next((keys[a] for a in aliases if a in keys), None)
    if id_key is None or id_key not in record:
        raise InputError(label, f"no id column (expected one of {', '.join(aliases)}, or map one with id=COLUMN)", line)
    out["_id"] = _text(record[id_key]).strip()
    taken = {id_key}
    for field, aliases in COLLECTION_FIELDS.items():
        key = mapping.get(field) or next((keys[a] for a in aliases if a in keys and keys[a] not in taken), None)
        if key is not None and key in record:
            out[field] = _text(record[key])
            taken.add(key)
    for field, key in mapping.items():  # extra mapped fields (e.g. fields={"venue": "journal_name"})
        if field not in out and field != "id" and not field.startswith("__") and key in record:
            out[field] = _text(record[key])
    return out


def _text(value: object) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, (list, tuple)):
        return "; ".join(_text(v) for v in value)
    return str(value)


def _sniff_text(loaded: LoadedFile) -> str:
    return loaded.text()[:4096]


# --------------------------------------------------------------------- formats
def _beir_jsonl(loaded: LoadedFile, mapping: Mapping[str, str]) -> Iterator[Record]:
    for number, raw in enumerate(loaded.text().splitlines(), start=1):
        if not raw.strip():
            continue
        obj = parse_json(raw, loaded.label, number)
        if not isinstance(obj, dict):
            raise InputError(loaded.label, "not a JSON object", number)
        record = _canonical({k: v for k, v in obj.items() if k not in SKIP_JSON_KEYS}, mapping, loaded.label, number)
        if isinstance(obj.get("metadata"), dict):
            record["__metadata__"] = obj["metadata"]  # type: ignore[assignment]
        yield number, record


def _table(loaded: LoadedFile, mapping: Mapping[str, str]) -> Iterator[Record]:
    from evalkit.formats.tables import header_delimiter, read_delimited

    header, records = read_delimited(loaded, header_delimiter(loaded))
    seen: set[str] = set()
    for name in header:
        if name.strip().lower() in seen:
            raise InputError(loaded.label, f"column {name.strip()!r} appears twice in the header (which one holds the data?)", 1)
        seen.add(name.strip().lower())
    for line, fields in records:
        yield line, _canonical(dict(zip(header, fields)), mapping, loaded.label, line)


def _id_text(loaded: LoadedFile, mapping: Mapping[str, str]) -> Iterator[Record]:
    for number, raw in enumerate(loaded.text().splitlines(), start=1):
        if not raw.strip():
            continue
        doc_id, sep, body = raw.partition("\t")
        if not sep:
            raise InputError(loaded.label, "expected id<TAB>text", number)
        yield number, {"_id": doc_id.strip(), "text": body.strip()}


_DOC_TAG = re.compile(r"<(/?)DOC>", re.I)
_DOCNO_OPEN = re.compile(r"<DOCNO>", re.I)
_DOCNO_CLOSE = re.compile(r"</DOCNO>", re.I)
_TITLE_OPEN = re.compile(r"<(TITLE|HEADLINE|HL)>", re.I)
_TAG = re.compile(r"<[^<>]*>")


def _element(body: str, opening: re.Pattern, closing: re.Pattern, what: str, label: str, line: int) -> tuple[str, str] | None:
    """(the text inside the first ``what`` element, the body without it), ``None`` without one; linear scans only."""
    start = opening.search(body)
    if start is None:
        return None
    end = closing.search(body, start.end())
    if end is None:
        raise InputError(label, f"<{what}> without </{what}> in the <DOC> starting here", line)
    return body[start.end():end.start()], body[: start.start()] + " " + body[end.end():]


def _outside(text: str, start: int, end: int, label: str) -> None:
    """Only white space may stand between documents."""
    gap = text[start:end]
    if gap.strip():
        stray = start + len(gap) - len(gap.lstrip())
        raise InputError(label, "text outside <DOC> ... </DOC>", text.count("\n", 0, stray) + 1)


def _trec_sgml(loaded: LoadedFile, mapping: Mapping[str, str]) -> Iterator[Record]:
    """``<DOC><DOCNO>id</DOCNO> ... </DOC>`` read strictly, in one linear pass: an unclosed or nested
    ``<DOC>``, a stray ``</DOC>``, text outside documents and a document without exactly one DOCNO are
    errors naming the line (never documents merged or lost)."""
    text, label = loaded.text(), loaded.label
    line, counted, after_last = 1, 0, 0
    open_at: int | None = None
    open_line = 0
    for tag in _DOC_TAG.finditer(text):
        line += text.count("\n", counted, tag.start())
        counted = tag.start()
        if tag.group(1) != "/":
            if open_at is not None:
                raise InputError(label, f"<DOC> inside the <DOC> opened on line {open_line} (missing </DOC>)", line)
            _outside(text, after_last, tag.start(), label)
            open_at, open_line = tag.end(), line
            continue
        if open_at is None:
            raise InputError(label, "</DOC> without an open <DOC>", line)
        body = text[open_at: tag.start()]
        open_at, after_last = None, tag.end()
        docno = _element(body, _DOCNO_OPEN, _DOCNO_CLOSE, "DOCNO", label, open_line)
        if docno is None:
            raise InputError(label, "<DOC> without <DOCNO>", open_line)
        doc_id, rest = docno[0].strip(), docno[1]
        if not doc_id:
            raise InputError(label, "empty <DOCNO>", open_line)
        if _DOCNO_OPEN.search(rest):
            raise InputError(label, "<DOC> with two <DOCNO>s", open_line)
        title = ""
        match = _TITLE_OPEN.search(rest)
        if match:
            closing = re.compile(f"</{re.escape(match.group(1))}>", re.I)
            element = _element(rest, _TITLE_OPEN, closing, match.group(1), label, open_line)
            if element is not None:
                title, rest = " ".join(_TAG.sub(" ", element[0]).split()), element[1]
        yield open_line, {"_id": doc_id, "title": title, "text": " ".join(_TAG.sub(" ", rest).split())}
    if open_at is not None:
        raise InputError(label, "<DOC> never closed (missing </DOC>)", open_line)
    _outside(text, after_last, len(text), label)


_SMART_FIELDS = {".T": "title", ".W": "text", ".A": "authors", ".B": "journal"}


def _smart(loaded: LoadedFile, mapping: Mapping[str, str]) -> Iterator[Record]:
    record: dict[str, str] | None = None
    start = 0
    field: str | None = None
    parts: dict[str, list[str]] = {}

    def finish() -> Record | None:
        if record is None:
            return None
        record.update({name: " ".join(" ".join(lines).split()) for name, lines in parts.items()})
        return start, record

    for number, raw in enumerate(loaded.text().splitlines(), start=1):
        marker = raw[:2]
        if raw.startswith(".I"):
            done = finish()
            if done:
                yield done
            doc_id = raw[2:].strip()
            if not doc_id:
                raise InputError(loaded.label, ".I without an id", number)
            record, start, field, parts = {"_id": doc_id}, number, None, {}
        elif marker in _SMART_FIELDS and raw[2:].strip() == "":
            if record is None:
                raise InputError(loaded.label, f"{marker} before the first .I", number)
            field = _SMART_FIELDS[marker]
            parts.setdefault(field, [])
        elif raw.startswith(".") and len(raw.strip()) == 2 and raw[1].isalpha():
            field = None  # a SMART field evalkit does not use (.X cross references, .K keywords, ...)
        elif field is not None:
            parts[field].append(raw)
    done = finish()
    if done:
        yield done


def _pickle(path: str, trust_pickle: bool, mapping: Mapping[str, str]) -> Iterator[Record]:
    if not trust_pickle:
        raise UsageError(
            f"{path}: is a pickle; unpickling runs code from the file, so evalkit reads it only with --trust-pickle "
            "(use it only on files from a source you trust, e.g. the official CheckThat! 4b collection)"
        )
    try:
        import pandas as pd

        frame = pd.read_pickle(path)  # noqa: S301 - explicitly trusted by the user
    except Exception as exc:  # noqa: BLE001 - any unpickling failure is a bad input
        raise InputError(path, f"cannot read pickle ({type(exc).__name__}: {exc})") from None
    if not hasattr(frame, "to_dict"):
        raise InputError(path, f"pickle holds a {type(frame).__name__}, not a table")
    for position, row in enumerate(frame.reset_index(drop=True).to_dict("records"), start=1):
        yield position, _canonical(row, mapping, path, position)


def _parquet(path: str, mapping: Mapping[str, str]) -> Iterator[Record]:
    try:
        import pyarrow.parquet as pq

        table = pq.read_table(path)
    except Exception as exc:  # noqa: BLE001
        raise InputError(path, f"cannot read Parquet ({type(exc).__name__}: {exc})") from None
    for position, row in enumerate(table.to_pylist(), start=1):
        yield position, _canonical(row, mapping, path, position)


READERS: dict[str, Callable[[LoadedFile, Mapping[str, str]], Iterator[Record]]] = {
    "beir-jsonl": _beir_jsonl,
    "table": _table,
    "id-text": _id_text,
    "trec-sgml": _trec_sgml,
    "smart": _smart,
}
FORMATS = (*READERS, "parquet", "pickle")


def detect(path: str, head: bytes, id_column: str | None = None) -> str:
    """The format of ``path`` from its name and first bytes (``id_column``: a mapped id column name)."""
    name = path.lower().removesuffix(".gz")
    if name.endswith((".pkl", ".pickle")) or head[:1] == b"\x80":
        return "pickle"
    if name.endswith(".parquet") or head[:4] == b"PAR1":
        return "parquet"
    text = head.decode("utf-8", "replace").lstrip("\ufeff").lstrip()
    if text.startswith("{") or name.endswith((".jsonl", ".json")):
        return "beir-jsonl"
    if text[:5].upper() == "<DOC>":
        return "trec-sgml"
    if text.startswith(".I"):
        return "smart"
    first = text.split("\n", 1)[0].lower()
    cells = [c.strip().strip('"') for c in re.split(r"[\t,]", first)]
    if any(c in COLLECTION_ID or c == (id_column or "").lower() for c in cells) or name.endswith(".csv"):
        return "table"
    if "\t" in first:
        return "id-text"
    raise UsageError(f"{path}: cannot tell the collection format; pass --corpus-format (one of {', '.join(FORMATS)})")


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


def _records(path: str | os.PathLike, fmt: str, columns, trust_pickle: bool, kind: str) -> tuple[Iterator[Record], Source]:
    path = str(path)
    mapping = {**parse_mapping(columns), "__kind__": kind}
    check_regular(path)  # a missing file, a folder, a FIFO: one line, never a wait
    with open(path, "rb") as handle:
        head = handle.read(4096)
    chosen = detect(path, head, mapping.get("id")) if fmt == "auto" else fmt
    if chosen not in FORMATS:
        raise UsageError(f"unknown collection format {fmt!r} (known: {', '.join(FORMATS)})")
    if chosen in ("pickle", "parquet"):
        from evalkit.textio import sha256_of

        source = Source(path, chosen, sha256_of(path))
        return (_pickle(path, trust_pickle, mapping) if chosen == "pickle" else _parquet(path, mapping)), source
    loaded = load(path)
    return READERS[chosen](loaded, mapping), Source(path, chosen, loaded.sha256, loaded.member)


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
            raise InputError(label, f"duplicate {what} id {doc_id!r} (first on line {first_line[doc_id]})", line)
        if not any(str(v).strip() for v in record.values()):
            raise InputError(label, f"{what} {doc_id!r} has no text", line)
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
    label = source.path
    ids, rows, metadata = _collect(records, label, "document")
    names = list(dict.fromkeys(k for row in rows for k in row))
    return Corpus(ids=ids, fields={n: [row.get(n, "") for row in rows] for n in names}, source=source, metadata=metadata)


def read_queries(path: str | os.PathLike, fmt: str = "auto", columns=None) -> Queries:
    """Read queries; the query text is the ``text`` field (or ``title`` when there is no text)."""
    records, source = _records(path, fmt, columns, False, "query")
    ids, rows, metadata = _collect(records, source.path, "query")
    texts = [row.get("text") or row.get("title", "") for row in rows]
    return Queries(ids=ids, texts=texts, source=source, metadata=metadata)
