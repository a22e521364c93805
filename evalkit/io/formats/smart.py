"""SMART collections and queries: ``.I id`` records with ``.T`` title / ``.W`` text / ``.A`` authors fields
(the classic SMART collections, MEDLINE ``MED.QRY``)."""
from __future__ import annotations

from typing import Iterator, Mapping

from evalkit.core.errors import InputError
from evalkit.io.formats.collections import Probe, Record, register_collection, text_reader
from evalkit.io.textio import LoadedFile

_SMART_FIELDS = {".T": "title", ".W": "text", ".A": "authors", ".B": "journal"}


def records(loaded: LoadedFile, mapping: Mapping[str, str]) -> Iterator[Record]:
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


def sniff(probe: Probe) -> bool:
    return probe.text.startswith(".I")


FORMAT = register_collection("smart", "SMART: .I id records with .T title, .W text, .A authors (MEDLINE MED.QRY)", sniff, text_reader("smart", records))
