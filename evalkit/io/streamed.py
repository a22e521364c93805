"""A TREC run judged straight from its file, its bytes never held whole.

:mod:`evalkit.io.prejudged` reads a run against the gold it is scored on and
keeps only its queries, row counts and judged rows. Reading the file whole
into fresh memory first costs more than that pass (the kernel zeroes and maps
every new page), where the same bytes read 1 MiB at a time into one buffer
are cheap and the judging pass (``judge_stream.c``) then finds them in the
cache. So a large run is judged from its open file (:func:`judge_open_file`) wherever
nothing of :func:`evalkit.io.textio.load`'s normalising applies to it: plain
ASCII with LF line ends and no container (its first bytes say so before, the
judging pass over every byte after). What is kept (:class:`Streamed`) is the
file's identity, its first and last bytes (what format detection and the run
tag read) and the judged result; :class:`evalkit.io.prejudged.StreamedFile` reads
the whole only if something asks for it, and only the same file.

A leaf module (no evalkit imports at load time): the read-ahead thread
(:mod:`evalkit.io.readahead`) judges with it while the command imports.
"""
from __future__ import annotations

import os
from typing import NamedTuple

from evalkit.io.signatures import CHANGED_BY_LOAD

# From 1 MiB a run read against its gold is judged from its file (smaller ones are read whole: nothing to save).
STREAM_BYTES = 1 << 20
# The bytes kept of each end: format detection reads the first six data lines, the run tag the last one (a file whose
# lines do not fit is read whole for them).
EDGE_BYTES = 1 << 16


def file_key(info: os.stat_result) -> tuple[int, ...]:
    """What says a file is the one read before: device, inode, size and modification time (ns)."""
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


class Streamed(NamedTuple):
    """A run judged from its file: the file's :func:`file_key`, its first and last :data:`EDGE_BYTES`, the kernel's
    result (``evalkit.native._native.judge_file``; ``None``: declined, the general reader reads the run) and the judgments
    it was read against (query ids, query codes, document codes, document ids: :func:`evalkit.native.kernels.judge_file`'s
    ``gold``)."""

    key: tuple[int, ...]
    head: bytes
    tail: bytes
    found: tuple | None  # None: declined
    gold: tuple


def plain_start(head: bytes) -> bool:
    """Whether the first bytes of a file allow judging it from the file: no container or BOM (load would hand its
    reader other bytes), plain ASCII without CR (load's normalising changes nothing; the judging pass checks the rest)."""
    return not head.startswith(CHANGED_BY_LOAD) and b"\r" not in head and head.isascii()


def judge_open_file(fd: int, info: os.stat_result, gold: tuple, threads: int | None = None) -> Streamed | None:
    """The run in the open regular file ``fd`` (``info``: its ``os.fstat``) judged against ``gold``
    (:func:`evalkit.native.kernels.judge_file`), with its edges (``found`` ``None``: the kernel declined it, as it would
    its bytes); ``None`` where it must be loaded and judged as loaded (its first bytes are not plain, a byte past
    them is a CR or not ASCII, or the file changed while read)."""
    from evalkit.native import kernels

    if not hasattr(os, "pread"):
        return None
    size = info.st_size
    head = os.pread(fd, EDGE_BYTES, 0)
    if len(head) != min(size, EDGE_BYTES) or not plain_start(head):
        return None
    found = kernels.judge_file(fd, size, gold, threads)
    if found is not None and not found[-1]:  # the last: no CR and no byte from 0x80 anywhere
        return None
    tail = head if size <= EDGE_BYTES else os.pread(fd, EDGE_BYTES, size - EDGE_BYTES)
    if len(tail) != min(size, EDGE_BYTES) or file_key(os.fstat(fd)) != file_key(info):  # changed while judged
        return None
    return Streamed(file_key(info), head, tail, found, gold)
