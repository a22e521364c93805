"""The append-only journal of ``evalkit judge``: every judgment on disk the moment it is made.

One JSON object a line, ``{"key", "query_id", "doc_id", "judge", "grade",
"answer", "error"}``, written with one ``write`` and made durable with
``fsync`` before the next judgment is taken as done. ``key`` is the sha256
of what decides the judgment (:func:`judgment_key`: backend, model, prompt
sha256, generation settings, the pair's ids and both texts), so a journal
read back by a run with another model, prompt, setting or text simply holds
nothing for it. Reading keeps the first record of each key; a last line cut
short (a process killed mid-write) is dropped and the file cut back to the
last whole line, so the next append starts clean and no judgment is read
twice or half.
"""
from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any, Mapping

from evalkit.core.errors import InputError

MAX_JOURNAL_BYTES = 1 << 30


def judgment_key(what: Mapping[str, Any]) -> str:
    """sha256 of the canonical JSON of ``what`` (the model, prompt, settings and pair deciding one judgment)."""
    text = json.dumps(dict(what), sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Journal:
    """The judgments already made (``records``: key -> record) and a durable append (see the module docstring)."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self.records: dict[str, dict[str, Any]] = {}
        self.dropped_tail = False  # a last line cut short was dropped
        self.repeated = 0  # records of a key already read (kept: the first)
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._read()

    def _read(self) -> None:
        if not self.path.exists():
            return
        label = os.fspath(self.path)
        if self.path.stat().st_size > MAX_JOURNAL_BYTES:
            raise InputError(label, f"a journal over {MAX_JOURNAL_BYTES:,} bytes")
        raw = self.path.read_bytes()
        whole = raw.rfind(b"\n") + 1
        if whole < len(raw):
            self.dropped_tail = True
        for number, line in enumerate(raw[:whole].split(b"\n")[:-1], start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line.decode("utf-8"))
                key = str(record["key"])
            except (ValueError, KeyError, TypeError, UnicodeDecodeError):
                raise InputError(label, "not a judgment of evalkit judge (a journal line must be one JSON object with a key)",
                                 number) from None
            if key in self.records:
                self.repeated += 1
                continue
            self.records[key] = record
        if self.dropped_tail:
            with open(self.path, "r+b") as handle:
                handle.truncate(whole)
                handle.flush()
                os.fsync(handle.fileno())

    def __contains__(self, key: str) -> bool:
        return key in self.records

    def append(self, record: Mapping[str, Any]) -> None:
        """Write ``record`` as one line and fsync it; a key already journaled is not written again."""
        key = str(record["key"])
        line = (json.dumps(dict(record), ensure_ascii=False, sort_keys=True, allow_nan=False) + "\n").encode("utf-8")
        with self._lock:
            if key in self.records:
                return
            if self._fd is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            written = 0
            while written < len(line):
                written += os.write(self._fd, line[written:])
            os.fsync(self._fd)
            self.records[key] = dict(record)

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
