"""BEIR JSONL collections and queries: one JSON object a line, ``_id``, ``title``, ``text``, ``metadata``."""
from __future__ import annotations

from typing import Iterator, Mapping

from evalkit.core.errors import InputError
from evalkit.io.formats.collections import Probe, Record, canonical, register_collection, text_reader
from evalkit.io.textio import LoadedFile, parse_json

SKIP_JSON_KEYS = {"metadata"}


def records(loaded: LoadedFile, mapping: Mapping[str, str]) -> Iterator[Record]:
    for number, raw in enumerate(loaded.text().splitlines(), start=1):
        if not raw.strip():
            continue
        obj = parse_json(raw, loaded.label, number)
        if not isinstance(obj, dict):
            raise InputError(loaded.label, "not a JSON object", number)
        record = canonical({k: v for k, v in obj.items() if k not in SKIP_JSON_KEYS}, mapping, loaded.label, number)
        if isinstance(obj.get("metadata"), dict):
            record["__metadata__"] = obj["metadata"]  # type: ignore[assignment]
        yield number, record


def sniff(probe: Probe) -> bool:
    return probe.text.startswith("{") or probe.name.endswith((".jsonl", ".json"))


FORMAT = register_collection("beir-jsonl", "BEIR JSONL: one object a line, _id, title, text, metadata", sniff, text_reader("beir-jsonl", records))
