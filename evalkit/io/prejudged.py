"""A TREC run read against the gold it is scored on: its judged rows ranked in the reading pass, its other rows only counted.

Scoring needs, of a run, only its queries, how many rows each retrieved and
where each judged document ranks (see :class:`~evalkit.metrics.base.Judged`).
A 5,000,000-row run against 150,000 judgments holds 500,000 distinct documents,
and coding them (a table larger than the cache, probed at random) is most of
reading it. :func:`read_judged` reads the run query by query instead
(:mod:`evalkit.native._native`'s ``judge_run``): each query's rows are kept until its
last one, then its judged rows are ranked against its own rows by the one
ranking rule (score descending, ties by document id descending,
:mod:`evalkit.data.ranking`): rank = 1 + the rows ranked before. Nothing else of
the run is kept.

The result is a :class:`DeferredRun`: a :class:`~evalkit.data.Run` whose
queries, tag and warnings are known now and whose rows (document ids, codes,
scores) are read by the general reader the first time anything asks for them,
so every other use of the run gives what it gives for any run. Scoring it
against the same gold takes :class:`RunJudgments` instead of ranking it. The
pass declines (the general reader reads the run, with its messages) wherever
the general reader could decide anything else: a line it refuses, a query
whose rows are not contiguous, a document listed twice for one query (the
repeat warning), a NUL byte.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

import numpy as np

from evalkit.data import Qrels, Run, Source
from evalkit.core.digest import sha256_of_file
from evalkit.core.errors import InputError
from evalkit.data.ids import object_array
from evalkit.io.streamed import STREAM_BYTES, Streamed, file_key, judge_open_file
from evalkit.io.textio import LoadedFile, check_regular, decode_check, max_input_bytes, read_input_bytes

DEFERRED = ("doc_ids", "qidx", "didx", "scores")  # the fields a DeferredRun reads when first asked for


@dataclass(frozen=True, eq=False)
class RunJudgments:
    """A run's rows as scoring against ``qrels`` needs them: rows per run query (codes of ``Run.query_ids``), each
    run query's place in ``qrels.query_ids`` (-1: not there; the lookup its rows were judged by) and, for each row
    whose document is judged for its query (any grade), its query code, rank and judgment row in ``qrels``; grouped
    by query code, rank ascending."""

    qrels: Qrels
    rows_per_query: np.ndarray
    gold_of: np.ndarray
    hit_query: np.ndarray
    hit_rank: np.ndarray
    hit_row: np.ndarray

    def judged(self, run_query_pos: np.ndarray, depth: int | None, pooled: bool
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(qpos, rank, grade, pool_qpos, pool_rank)`` of the evaluated queries (``run_query_pos``: per run query, its
        evaluated position or -1), as :func:`evalkit.metrics.evaluation.judge` defines them: rows judged with a grade >= 0,
        and (``pooled``) those judged with a negative grade; ``depth`` keeps the top of each ranking."""
        qpos = run_query_pos[self.hit_query]
        keep = qpos >= 0
        if depth is not None:
            keep &= self.hit_rank <= depth
        grade = self.qrels.grades[self.hit_row]
        judged = keep & (grade >= 0)
        empty = np.zeros(0, dtype=np.int64)
        pool = keep & (grade < 0) if pooled else None
        return (qpos[judged], self.hit_rank[judged], grade[judged],
                qpos[pool] if pooled else empty, self.hit_rank[pool] if pooled else empty)

    def retrieved(self, depth: int | None) -> np.ndarray:
        """Rows retrieved per run query, at most ``depth``."""
        return self.rows_per_query if depth is None else np.minimum(self.rows_per_query, depth)


class DeferredRun(Run):
    """A :class:`~evalkit.data.Run` read against one gold (:func:`read_judged`): its rows are read by ``reread`` (the
    general reader) when first asked for; scored against that gold, it is never read again."""

    def __getattr__(self, name: str):  # only for attributes not set: the deferred fields before their first use
        if name not in DEFERRED:
            raise AttributeError(name)
        full = self.__dict__["_reread"]()
        if full.query_ids.tolist() != self.query_ids.tolist():  # the two readers disagree: a bug, never a result
            raise RuntimeError(f"{self.name}: the run read again has other queries than its judged reading")
        for field in DEFERRED:
            object.__setattr__(self, field, getattr(full, field))
        return getattr(full, name)

    def named(self, name: str, source: Source | None) -> "DeferredRun":
        """The same run under ``name`` and ``source``, its rows still unread (``dataclasses.replace`` reads them)."""
        run = object.__new__(DeferredRun)
        for key, value in {**self.__dict__, "name": name, "source": source}.items():
            object.__setattr__(run, key, value)
        return run

    def with_name(self, name: str) -> "DeferredRun":
        return self.named(name, self.source)

    def judgments_for(self, qrels: Qrels) -> RunJudgments | None:
        found = self.__dict__.get("_judgments")  # none on a copy made by dataclasses.replace (a Run like any other)
        return found if found is not None and found.qrels is qrels else None

    def duplicated_queries(self) -> np.ndarray:
        if "_judgments" in self.__dict__:
            return np.zeros(0, dtype=np.int64)  # the judged reading declines a run that lists a document twice
        return super().duplicated_queries()


def read_judged(loaded: LoadedFile, qrels: Qrels, reread: Callable[[], Run], *, warnings: Callable[[int, int], tuple[str, ...]],
                tag: Callable[[], str | None]) -> DeferredRun | None:
    """The TREC run ``loaded`` read against ``qrels`` (name and source: :meth:`DeferredRun.named`); ``None`` where the
    general reader must read it (or without the compiled kernel). ``reread`` reads it the general way (its rows are
    taken from there); ``warnings(n_extra, first_extra)`` and ``tag()`` give what that reader's run carries. A
    :class:`StreamedFile` was judged from its file already: taken when judged against these very judgments."""
    from evalkit.native import kernels

    query_ids, doc_ids = qrels.query_ids.tolist(), qrels.doc_ids.tolist()
    if isinstance(loaded, StreamedFile):
        streamed = loaded.streamed
        assert streamed.found is not None  # a StreamedFile is made of a judged file only (declined: DECLINED)
        same = kernels.same_gold(streamed.gold, query_ids, qrels.qidx, qrels.didx, doc_ids)
        found = kernels.judged_arrays(streamed.found) if same else None
    else:  # declined on a NUL byte too (judge_run.c): numpy's str arrays drop trailing NULs, the general reader decides
        found = kernels.judge_run(loaded.data, query_ids, qrels.qidx, qrels.didx, doc_ids)
    if found is None:
        return None
    n_extra, first_extra, query_ids, rows_per_query, gold_of, hit_query, hit_rank, hit_row = found
    run = object.__new__(DeferredRun)
    fields = dict(query_ids=object_array(query_ids), labels=None,
                  declared_ranks=None, name="run", source=None, warnings=warnings(n_extra, first_extra), tag=tag(),
                  as_written=None, _reread=reread,
                  _judgments=RunJudgments(qrels, rows_per_query, gold_of, hit_query, hit_rank, hit_row))
    for key, value in fields.items():
        object.__setattr__(run, key, value)
    return run


class StreamedFile(LoadedFile):
    """A TREC run judged from its file (:mod:`evalkit.io.streamed`): its first and last bytes held, its whole bytes
    read when first asked for (its rows, its sha256), and only while the file is the one judged (else one line:
    it changed while evalkit read it). Plain ASCII with LF line ends: its bytes are the file's as stored."""

    streamed: Streamed  # what judging its file found (set in __init__; an annotation only, not a dataclass field)

    def __init__(self, path: str, streamed: Streamed) -> None:
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "member", None)
        object.__setattr__(self, "_sha256", _FileDigest(self))
        object.__setattr__(self, "streamed", streamed)

    @property
    def data(self) -> bytes:  # type: ignore[override]
        whole = self.__dict__.get("_data")
        if whole is None:
            whole = _read_unchanged(self.path, self.streamed.key)
            object.__setattr__(self, "_data", whole)
        return whole

    def prefix(self) -> tuple[bytes, bool]:
        return self.streamed.head, len(self.streamed.head) == self.streamed.key[2]

    def suffix(self) -> tuple[bytes, bool]:
        return self.streamed.tail, len(self.streamed.tail) == self.streamed.key[2]


class _FileDigest:
    """The sha256 of a :class:`StreamedFile` when first asked for: of its bytes if they were read, else of its file
    read 1 MiB at a time (never held whole), while it is the file judged."""

    def __init__(self, loaded: StreamedFile) -> None:
        self._loaded = loaded
        self._hex: str | None = None

    def result(self) -> str:
        import hashlib

        if self._hex is None:
            whole = self._loaded.__dict__.get("_data")
            if whole is not None:
                self._hex = hashlib.sha256(whole).hexdigest()
            else:
                self._hex = _hash_unchanged(self._loaded.path, self._loaded.streamed.key)
        return self._hex


def _changed(path: str) -> InputError:
    return InputError(path, "changed while evalkit was reading it (score it again once it is written)")


def _hash_unchanged(path: str, key: tuple[int, ...]) -> str:
    """The sha256 of the file at ``path`` read 1 MiB at a time, if it is the file of ``key`` before and after."""
    try:
        with open(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)), "rb") as handle:
            if file_key(os.fstat(handle.fileno())) != key:
                raise _changed(path)
            hex_digest, size = sha256_of_file(handle)
            if file_key(os.fstat(handle.fileno())) != key:
                raise _changed(path)
    except OSError as exc:
        raise InputError(path, f"cannot read ({exc.strerror or exc})") from None
    if size != key[2]:
        raise _changed(path)
    return hex_digest


def _read_unchanged(path: str, key: tuple[int, ...]) -> bytes:
    """The bytes of ``path`` if it is still the file of ``key`` (:func:`evalkit.io.streamed.file_key`) before and after
    the read; else one line."""
    before = check_regular(path)
    data = read_input_bytes(path)
    if file_key(before) != key or file_key(check_regular(path)) != key or len(data) != key[2]:
        raise _changed(path)
    return decode_check(data, path)


DECLINED = "declined"  # read_streamed: the judged reading declined the run; the general reader reads it


def read_streamed(path: str, qrels: Qrels) -> StreamedFile | str | None:
    """The run at ``path`` judged from its file against ``qrels`` (:mod:`evalkit.io.streamed`): by the read-ahead thread
    of a command (:func:`evalkit.io.readahead.take_streamed`) or now; :data:`DECLINED` where the judged reading declined
    it (:func:`evalkit.io.textio.load` reads it, for the general reader only); ``None`` where load must read it (smaller
    than :data:`~evalkit.io.streamed.STREAM_BYTES`, larger than the input limit, not plain, or without the kernel)."""
    from evalkit.native import kernels
    from evalkit.io import readahead

    if not kernels.COMPILED or not hasattr(os, "pread"):  # (no pread, as on Windows: read whole)
        return None
    info, limit = check_regular(path), max_input_bytes()
    if not STREAM_BYTES <= info.st_size <= limit:
        return None
    if readahead.streams(path):
        streamed = readahead.take_streamed(path, info, limit)
    elif readahead.holds(path):  # its bytes read ahead (and judged from them): load takes them
        return None
    else:
        streamed = _judge_now(path, info, qrels)
    if streamed is None:
        return None
    return DECLINED if streamed.found is None else StreamedFile(path, streamed)


def _judge_now(path: str, info: os.stat_result, qrels: Qrels) -> Streamed | None:
    gold = (qrels.query_ids.tolist(), np.ascontiguousarray(qrels.qidx, dtype=np.int64),
            np.ascontiguousarray(qrels.didx, dtype=np.int64), qrels.doc_ids.tolist())
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a path swapped for a FIFO since its stat: not waited on
    except OSError:
        return None  # load names the problem
    try:
        opened = os.fstat(fd)
        return judge_open_file(fd, opened, gold) if file_key(opened) == file_key(info) else None
    finally:
        os.close(fd)
