"""On-disk cache of LLM answers: one JSONL file per backend and model.

Every answer is appended (one line ``{"key": ..., "answer": ...}``) and
flushed as soon as it arrives, so an interrupted run keeps all finished work
and a rerun asks the model nothing twice. The key is the sha256 of the
canonical JSON of backend, model, generation settings and messages
(:func:`answer_key`). A truncated or otherwise unreadable line (a run killed
mid-write) is skipped on reading; the next append starts on a fresh line.
Files live under ``evalkit.systems._models.modelio.cache_dir("llm")``.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from pathlib import Path
from typing import Any, Mapping, Sequence

Messages = Sequence[Mapping[str, str]]


def answer_key(backend: str, model: str, messages: Messages, settings: Mapping[str, Any]) -> str:
    """sha256 of ``{"backend", "model", "settings", "messages"}`` as canonical JSON."""
    payload = {"backend": backend, "model": model, "settings": dict(settings), "messages": [dict(m) for m in messages]}
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def cache_file(backend: str, model: str, folder: str | os.PathLike | None = None) -> Path:
    """``<cache>/llm/<backend>-<model slug>-<8 hex of the full model name>.jsonl``."""
    if folder is None:
        from evalkit.systems._models.modelio import cache_dir

        folder = cache_dir("llm")
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(model).name or model)[:60]
    digest = hashlib.sha256(f"{backend}\x00{model}".encode("utf-8")).hexdigest()[:8]
    return Path(folder) / f"{backend}-{slug}-{digest}.jsonl"


class AnswerCache:
    """Thread-safe append-only answer store (see the module docstring)."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._answers: dict[str, str] = {}
        self.skipped_lines = 0
        self._load()

    def _load(self) -> None:
        if not self.path.exists():
            return
        with open(self.path, "rb") as handle:
            for raw in handle:
                try:
                    record = json.loads(raw.decode("utf-8"))
                    self._answers[str(record["key"])] = str(record["answer"])
                except (ValueError, KeyError, TypeError, UnicodeDecodeError):
                    self.skipped_lines += 1  # truncated last line of an interrupted run

    def __len__(self) -> int:
        return len(self._answers)

    def __contains__(self, key: str) -> bool:
        return key in self._answers

    def get(self, key: str) -> str | None:
        return self._answers.get(key)

    def put(self, key: str, answer: str) -> None:
        """Remember ``answer`` and append it to the file at once (flushed)."""
        line = json.dumps({"key": key, "answer": answer}, ensure_ascii=False, allow_nan=False) + "\n"
        with self._lock:
            self._answers[key] = answer
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "ab+") as handle:
                handle.seek(0, os.SEEK_END)
                if handle.tell() > 0:
                    handle.seek(-1, os.SEEK_END)
                    if handle.read(1) != b"\n":  # after a truncated line: start afresh
                        handle.write(b"\n")
                handle.write(line.encode("utf-8"))
                handle.flush()
