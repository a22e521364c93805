"""Header-less ``id<TAB>text`` lines (NFCorpus ``.docs`` / ``.queries``)."""
from __future__ import annotations

from typing import Iterator, Mapping

from evalkit.core.errors import InputError
from evalkit.io.formats.collections import Probe, Record, register_collection, text_reader
from evalkit.io.textio import LoadedFile


def records(loaded: LoadedFile, mapping: Mapping[str, str]) -> Iterator[Record]:
    for number, raw in enumerate(loaded.text().splitlines(), start=1):
        if not raw.strip():
            continue
        doc_id, sep, body = raw.partition("\t")
        if not sep:
            raise InputError(loaded.label, "expected id<TAB>text", number)
        yield number, {"_id": doc_id.strip(), "text": body.strip()}


def sniff(probe: Probe) -> bool:
    return "\t" in probe.text.split("\n", 1)[0]


FORMAT = register_collection("id-text", "header-less id<TAB>text lines (NFCorpus .docs / .queries)", sniff, text_reader("id-text", records))
