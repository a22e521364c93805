"""Corpus embeddings cached on disk: float32 ``.npy`` + JSON, never pickle.

One folder per cache entry holds ``embeddings.npy`` (float32, one row per
document, read with ``allow_pickle=False``), ``ids.json`` (the document ids
in row order) and ``settings.json`` (model identity, corpus fingerprint and
encoding settings). The folder name is a sha256 over the settings, so a
changed model, corpus or setting never reuses old vectors; an entry whose
stored ids, shape or settings do not match what is asked for is refused with
a :class:`~evalkit.core.errors.UsageError` ("mismatched embedding cache ...")
instead of being silently used.
"""
from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from evalkit.core.errors import UsageError
from evalkit.systems._models.modelio import settings_key
from evalkit.io.transactions import atomic_write

FILES = ("embeddings.npy", "ids.json", "settings.json")




def entry_folder(root: str | Path, settings: dict[str, Any]) -> Path:
    """``root / <first 24 hex of settings_key>``."""
    return Path(root) / settings_key(settings)[:24]


def load(folder: str | Path, ids: Sequence[str], settings: dict[str, Any]) -> np.ndarray | None:
    """The cached matrix in ``folder``, or None if there is no complete entry there.

    Raises UsageError when an entry exists but was made for other ids, another
    shape or other settings.
    """
    folder = Path(folder)
    if not all((folder / name).exists() for name in FILES):
        return None
    try:
        stored_settings = json.loads((folder / "settings.json").read_text(encoding="utf-8"))
        stored_ids = json.loads((folder / "ids.json").read_text(encoding="utf-8"))
        matrix = np.load(folder / "embeddings.npy", allow_pickle=False, mmap_mode=None)
    except (OSError, ValueError) as exc:
        raise UsageError(f"{folder}: mismatched embedding cache (unreadable: {exc}); delete the folder to re-encode") from None
    wanted = json.loads(json.dumps(settings, sort_keys=True, default=str, allow_nan=False))
    if stored_settings != wanted:
        differing = sorted(k for k in set(wanted) | set(stored_settings) if wanted.get(k) != stored_settings.get(k))
        raise UsageError(
            f"{folder}: mismatched embedding cache (settings differ: {', '.join(differing[:5])}); "
            "delete the folder or choose another embedding_cache"
        )
    if list(stored_ids) != list(ids):
        raise UsageError(
            f"{folder}: mismatched embedding cache (holds {len(stored_ids)} document ids, corpus has {len(ids)} "
            "in another order or with other ids); delete the folder or choose another embedding_cache"
        )
    if matrix.ndim != 2 or matrix.shape[0] != len(ids) or matrix.dtype != np.float32:
        raise UsageError(
            f"{folder}: mismatched embedding cache (matrix {matrix.dtype} {tuple(matrix.shape)} for {len(ids)} documents); "
            "delete the folder to re-encode"
        )
    return matrix


def store(folder: str | Path, ids: Sequence[str], settings: dict[str, Any], matrix: np.ndarray) -> Path:
    """Write one entry atomically (matrix first, settings last: a partial entry is never complete)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(matrix, dtype=np.float32), allow_pickle=False)
    atomic_write(folder / "embeddings.npy", buffer.getvalue(), force=True)
    atomic_write(folder / "ids.json", json.dumps(list(ids), allow_nan=False), force=True)
    atomic_write(folder / "settings.json", json.dumps(settings, sort_keys=True, indent=1, default=str, allow_nan=False) + "\n", force=True)
    return folder
