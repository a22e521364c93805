"""Inputs read ahead: a command's input files read and hashed on a second thread while it imports what it needs.

``evalkit score RUN GOLD`` first imports numpy, click and evalkit, then reads
a large run and takes its sha256; the two wait on different things (the
interpreter, the kernel's copy), so they can overlap. :func:`start` reads each regular file it is given on a
second thread (the GIL is free while the kernel copies and hashlib hashes),
hashes the small ones, then parses each large TREC-shaped one with the C
reader (:func:`_parse`: its GIL-free pass overlaps the imports too) while a
third thread hashes them. Where the command names the gold its runs are
scored on (``score RUN GOLD``, ``compare`` / ``report GOLD RUNS...``), each
large run is read against the gold's table instead (:func:`_judge`,
:mod:`evalkit.io.prejudged`), and where the command shows no manifest (no
sha256 of its bytes to take) it is judged straight from its file, never read
whole (:func:`_stream`, :mod:`evalkit.io.streamed`; :func:`take_streamed`);
:func:`take` hands :func:`evalkit.io.textio.load` the bytes and their sha256 when
the file is the one that was read (same device, inode, size and modification
time), else nothing, and load reads it itself. It is only a hint: a file that
is missing, not regular, larger than the limit or unreadable is left to load,
which names the problem as it always does.
"""
from __future__ import annotations

import hashlib
import os
import stat
import threading

from evalkit.io.signatures import CHANGED_BY_LOAD
from evalkit.io.streamed import STREAM_BYTES, Streamed, file_key, judge_open_file

_AHEAD: dict[str, "_Ahead"] = {}


class _Ahead:
    """One file on the read-ahead thread: ``read`` is set once its bytes are in (or it was skipped), ``hashed`` once
    their sha256 is taken (the bytes are handed over before), by the hashing thread or by the first to ask for it."""

    def __init__(self) -> None:
        self.read = threading.Event()
        self.hashed = threading.Event()
        self.key: tuple[int, ...] | None = None
        self.data: bytes | None = None
        self.hex: str | None = None
        self.taken = False  # handed to its reader (or asked for): past that, a table parsed ahead may come too late
        self.lock = threading.Lock()  # held while its hash is taken
        self.stream = False  # a run to judge from its file (evalkit.io.streamed): ``read`` is set once it is judged
        self.streamed: Streamed | None = None

    def result(self) -> str:
        """The sha256, waiting for the hashing thread or taking it here if that has not begun (the interface of
        :class:`evalkit.core.digest.Digest`)."""
        self.read.wait()
        _hash([self])
        assert self.hex is not None
        return self.hex


def _read(path: str, ahead: _Ahead, limit: int) -> None:
    try:  # O_NONBLOCK: a path swapped for a FIFO since it was checked opens without waiting for a writer (then skipped)
        with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as handle:
            info = os.fstat(handle.fileno())
            if stat.S_ISREG(info.st_mode) and info.st_size <= limit:
                data = handle.read(limit + 1)
                if len(data) <= limit:
                    ahead.key, ahead.data = file_key(info), data
    except (OSError, MemoryError, ValueError):
        pass  # load reads it and names the problem


# From 1 MiB a TREC-shaped file is parsed on the read-ahead thread too (the C reader frees the GIL): 0.2 s of a
# 35 MB run's reading overlaps the command's imports.
PARSE_AHEAD_BYTES = 1 << 20


def _shape(data: bytes):
    """The TREC table ``data``'s first data line suggests (six fields or more: a run; four: qrels), or ``None``. A
    guess, never a decision: a reader takes a table read ahead only for these very bytes (``load`` hands them over
    unchanged: no BOM, no CR, no container) and the shape its format asks for (:func:`evalkit.native.kernels.read_table`)."""
    if data.startswith(CHANGED_BY_LOAD):
        return None
    start = 0
    while start < len(data):
        end = data.find(b"\n", start, start + 65536)
        if end < 0:
            return None
        line = data[start:end]
        fields = line.split()
        if b"\r" in line:  # CR line ends: load hands over other bytes
            return None
        if fields and not fields[0].startswith(b"#"):
            break
        start = end + 1
    else:
        return None
    from evalkit.native import kernels  # the extension only (no numpy): nothing the command may be importing meanwhile

    return kernels.TREC_RUN if len(fields) >= 6 else kernels.TREC_QRELS if len(fields) == 4 else None


def _parse(data: bytes, registered=None) -> None:
    """Parse ``data`` ahead of its reader as the TREC table it looks like (:func:`_shape`); ``registered``: as
    :func:`evalkit.native.kernels.read_table_ahead`'s."""
    from evalkit.native import kernels

    shape = _shape(data)
    if shape is not None:
        kernels.read_table_ahead(data, shape, registered=registered)


def _gold_table(gold: bytes):
    """The gold's table (``score``, ``compare``, ``report``), read ahead as TREC qrels when it looks like them (``None``
    else)."""
    from evalkit.native import kernels

    if _shape(gold) != kernels.TREC_QRELS:
        return None
    # registered for the gold's reader where it reads with the kernel (a smaller gold's Python reader takes none)
    return kernels.read_table_ahead(gold, kernels.TREC_QRELS, register=len(gold) >= kernels.COMPILED_READ_BYTES)


def _judge(run: bytes, gold_table) -> None:
    """A run read ahead against its gold's table (:mod:`evalkit.io.prejudged`) when it looks like a TREC run and the gold
    like TREC qrels; else parsed as it looks (:func:`_parse`)."""
    from evalkit.native import kernels

    if gold_table is not None and _shape(run) == kernels.TREC_RUN:
        kernels.judge_run_ahead(run, gold_table)
    else:
        _parse(run)


def _stream(path: str, ahead: _Ahead, limit: int, gold_table) -> None:
    """The run at ``path`` judged from its file against the gold's table (:mod:`evalkit.io.streamed`); where it cannot
    be, read whole and read ahead as any run (:func:`_judge`; only parsed where the kernel declined it already)."""
    from evalkit.native import kernels

    try:
        if gold_table is not None:
            with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as handle:
                info = os.fstat(handle.fileno())
                if stat.S_ISREG(info.st_mode) and info.st_size <= limit:
                    ahead.streamed = judge_open_file(handle.fileno(), info, kernels.judgments_of(gold_table),
                                                     kernels.ahead_threads(info.st_size))
    except Exception:  # noqa: BLE001 (a hint only, as every read ahead)
        ahead.streamed = None
    try:
        if ahead.streamed is not None and ahead.streamed.found is not None:
            return
        _read(path, ahead, limit)
        if ahead.streamed is not None and ahead.data is not None:  # declined: its reader reads it the general way,
            _parse(ahead.data, registered=ahead.read.set)  # waiting for the table parsed here
            return
    finally:
        ahead.read.set()
    if ahead.data is not None and not ahead.taken:
        _judge(ahead.data, gold_table)


def _hash(files: list[_Ahead]) -> None:
    """Hash each file not yet hashed (by another thread)."""
    for ahead in files:
        with ahead.lock:
            if ahead.hashed.is_set():
                continue
            try:
                if ahead.data is not None:
                    ahead.hex = hashlib.sha256(ahead.data).hexdigest()
            finally:
                ahead.hashed.set()


def start(paths: list[str], limit: int, gold: int | None = None, hash_large: bool = True) -> None:
    """Read the regular files among ``paths`` of at most ``limit`` bytes on one background thread, smallest first, then
    hash the small ones, then hash the large ones on a second thread while the first parses each (:func:`_parse`);
    ``hash_large=False`` (a command that shows no manifest) leaves the large ones' to whoever asks (never, there).
    ``gold``: which of the files found is the gold the others are scored on (``score RUN GOLD``: 1; ``compare`` and
    ``report GOLD RUNS...``: 0); each large run is then read against it instead (:func:`_judge`), and a gold read
    before a larger file has its table read on a third thread while that file's bytes come in (beside the run's read
    instead of after it)."""
    chosen: list[tuple[int, str, _Ahead]] = []
    for path in dict.fromkeys(paths):
        try:
            info = os.stat(path)
        except (OSError, ValueError):
            continue
        if stat.S_ISREG(info.st_mode) and info.st_size <= limit and path not in _AHEAD:
            chosen.append((info.st_size, path, _Ahead()))
            _AHEAD[path] = chosen[-1][2]
    named = [ahead for _, _, ahead in chosen]  # in the order given
    the_gold = named[gold] if gold is not None and len(named) >= 2 and gold < len(named) else None
    gold_table: list = []  # the gold's table once read ahead
    chosen.sort(key=lambda item: item[0])
    for size, _, ahead in chosen:  # without a manifest to show (no hash of their bytes), large runs are judged from their files
        ahead.stream = the_gold is not None and ahead is not the_gold and not hash_large and size >= STREAM_BYTES

    def read_gold_table() -> None:
        try:
            assert the_gold is not None and the_gold.data is not None  # called for a gold whose bytes are in
            gold_table.append(_gold_table(the_gold.data))
        except Exception:  # noqa: BLE001 (a hint only, as below)
            pass

    def the_gold_table(gold_reader: threading.Thread | None):
        """The gold's table for a run: read on its own thread (waited for), or now; ``None`` where it is none."""
        if gold_reader is not None:
            gold_reader.join()
        assert the_gold is not None  # asked for by a run read against a gold only
        if not gold_table and the_gold.data is not None:
            gold_table.append(_gold_table(the_gold.data))
        return gold_table[0] if gold_table else None

    def read_all() -> None:
        gold_reader = None  # the gold's table read on a thread of its own while the runs' bytes come in
        for position, (_, path, ahead) in enumerate(chosen):  # each is marked, even one already taken (its taker waits)
            if ahead.stream:  # judged from its file once the gold's table is in (below)
                continue
            try:
                _read(path, ahead, limit)
            finally:
                ahead.read.set()
            if ahead is the_gold and not ahead.taken and ahead.data is not None and len(ahead.data) >= PARSE_AHEAD_BYTES \
                    and any(not later.stream for _, _, later in chosen[position + 1:]):
                gold_reader = threading.Thread(target=read_gold_table, name="evalkit-readahead-gold", daemon=True)
                gold_reader.start()
        paths = {id(ahead): path for _, path, ahead in chosen}
        large = [ahead for _, _, ahead in chosen if ahead.stream or ahead.data is not None and len(ahead.data) >= PARSE_AHEAD_BYTES]
        small = [ahead for _, _, ahead in chosen if ahead not in large]
        _hash(small)  # the small files' first, then the large ones' on a thread of their own, smallest first, while
        # this one reads their tables; or, for a command that shows no manifest, by whoever asks (the hash of a 177 MB
        # run is 0.12 s of a core that its judged reading would take)
        if hash_large:
            threading.Thread(target=_hash, args=(large,), name="evalkit-readahead-hash", daemon=True).start()
        for ahead in large:  # each large file's table (its reader waits for it), smallest first
            try:
                if ahead.stream:  # judged from its file against the gold's table (its reader waits for it)
                    _stream(paths[id(ahead)], ahead, limit, the_gold_table(gold_reader))
                    continue
                if ahead.taken:  # a reader already past its file parses it itself
                    continue
                assert ahead.data is not None  # a large file not streamed is one whose bytes are in
                if the_gold is None:
                    _parse(ahead.data)
                elif ahead is the_gold:  # its table kept for the runs
                    if gold_reader is None:
                        read_gold_table()
                else:  # a run, read against its gold's table
                    _judge(ahead.data, the_gold_table(gold_reader))
            except Exception:  # noqa: BLE001 (a hint only: the reader parses the file itself and meets any problem)
                pass

    def read_all_then_release() -> None:
        try:
            read_all()
        finally:  # whatever happened, no reader waits for ever (one with nothing read ahead reads for itself)
            for _, _, ahead in chosen:
                ahead.read.set()

    if chosen:
        threading.Thread(target=read_all_then_release, name="evalkit-readahead", daemon=True).start()


def holds(path: str) -> bool:
    """Whether ``path`` was read ahead (or is being read) and not taken yet."""
    return path in _AHEAD


def streams(path: str) -> bool:
    """Whether ``path`` is being judged from its file ahead (:func:`take_streamed` then waits for it)."""
    ahead = _AHEAD.get(path)
    return ahead is not None and ahead.stream


def take_streamed(path: str, info: os.stat_result, limit: int) -> Streamed | None:
    """The run at ``path`` judged from its file ahead (:mod:`evalkit.io.streamed`; its ``found`` ``None``: declined),
    waiting for it, when ``info`` (its ``os.stat`` now) shows the same file of at most ``limit`` bytes; else
    ``None`` (:func:`take` then gives its bytes if they were read instead)."""
    ahead = _AHEAD.get(path)
    if ahead is None or not ahead.stream:
        return None
    ahead.read.wait()
    streamed = ahead.streamed
    if streamed is None:  # read whole instead: load takes its bytes
        return None
    if streamed.found is not None:  # judged: nothing left for load (declined: load takes the bytes read after)
        _AHEAD.pop(path, None)
        ahead.taken = True
    return streamed if streamed.key == file_key(info) and info.st_size <= limit else None


def take(path: str, info: os.stat_result, limit: int) -> tuple[bytes, _Ahead] | None:
    """The bytes of ``path`` read ahead and their pending sha256 (``.result()``), when ``info`` (its ``os.stat`` now)
    shows the same file of at most ``limit`` bytes; else ``None``."""
    ahead = _AHEAD.pop(path, None)
    if ahead is None:
        return None
    ahead.taken = True
    ahead.read.wait()
    if ahead.data is None or ahead.key != file_key(info) or len(ahead.data) > limit:
        return None
    return ahead.data, ahead
