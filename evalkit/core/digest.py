"""The sha256 of an input, taken on a second thread for large ones while its reader parses it; or of an open file.

hashlib releases the GIL while hashing, so a large run's digest overlaps
the reader's single-threaded work instead of adding to it.
"""
from __future__ import annotations

import hashlib
import threading
from typing import BinaryIO, Protocol


class PendingDigest(Protocol):
    """A sha256 still being taken: ``result()`` waits for it (or takes it) and gives its hex digest."""

    def result(self) -> str: ...


def taken(digest: "str | PendingDigest") -> str:
    """The hex sha256 that ``digest`` is or gives (its ``result()``, waited for)."""
    return digest if isinstance(digest, str) else digest.result()


class Digest:
    """The sha256 of large bytes, taken on a second thread (hashlib releases the GIL) while the reader parses them."""

    def __init__(self, raw: bytes) -> None:
        self._hex: str | None = None
        self._thread = threading.Thread(target=self._run, args=(raw,), daemon=True)
        self._thread.start()

    def _run(self, raw: bytes) -> None:
        self._hex = hashlib.sha256(raw).hexdigest()

    def result(self) -> str:
        self._thread.join()
        assert self._hex is not None
        return self._hex


BACKGROUND_DIGEST_BYTES = 1 << 23  # 8 MB: below, a thread costs more than it saves


def sha256_of_file(handle: BinaryIO) -> tuple[str, int]:
    """The hex sha256 of what is left to read in the open binary file ``handle``, read 1 MiB at a time (never held
    whole), and how many bytes that was."""
    digest, size = hashlib.sha256(), 0
    for block in iter(lambda: handle.read(1 << 20), b""):
        digest.update(block)
        size += len(block)
    return digest.hexdigest(), size
