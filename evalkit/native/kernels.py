"""The one place evalkit calls its compiled kernels (``evalkit.native._native``, built from ``evalkit/native/csrc/``).

``native`` is the extension module, or ``None`` where ``pip install`` had no C
compiler. Each function below is a typed wrapper of one kernel: it takes and
returns numpy arrays and plain values, and returns ``None`` when the kernel is
not there, so the caller takes its pure-Python twin (same results; the twins
are held equal in ``tests/native/test_native.py``). The wrappers read ``native``
when they run, so a test switches every kernel off by setting this one
attribute. The buffers' layout (contiguous int64, uint8 masks) is known here
only: the scoring modules read as semantics. numpy is imported by the
functions that use it, not with the module: a command's read-ahead thread
parses its run through :func:`read_table_ahead` while the command itself
still imports numpy.
"""
from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any, Callable, NamedTuple

if TYPE_CHECKING:
    import numpy as np

try:
    from evalkit.native import _native as native
except ImportError:  # built without a C compiler: the pure-Python twins
    native = None  # type: ignore[assignment]  # mypy cannot type a module-or-None name; every use checks for None

COMPILED = native is not None
SEED = int.from_bytes(os.urandom(8), "little")  # the id tables' hash seed, per process as Python's own str hashing (codes never depend on it)


# From 4 MB a table is read in two halves on two threads where a core is idle: the halves' id tables are joined after,
# so the two threads do 1.4-1.7x the work of one (a 35-177 MB run): a gain only with a core to spare.
SPLIT_BYTES = 1 << 22
# From 256 KiB a whitespace table is read by read_table (evalkit/io/formats/tables.py; smaller ones by the Python reader).
COMPILED_READ_BYTES = 1 << 18


def keep_freed_memory() -> bool:
    """For a short command's process: glibc's malloc keeps the memory freed at the top of its heap and grows the
    heap 64 MiB at a time, so the next allocations reuse pages already faulted in (fewer page faults, a little more
    memory at the peak); ``False`` where nothing was done (no kernel, not glibc). Process-wide:
    the command line asks for it for its scoring commands, which exit right after; the library never does."""
    return native is not None and native.keep_freed_memory()


def text_marks(data: bytes) -> tuple[int, bool]:
    """The offset of the first CR byte of ``data`` (-1: none) and whether all its bytes are ASCII: one compiled pass
    (instead of two passes, ``find`` and ``isascii``), else those two. Where these very bytes are
    being read against a gold ahead (:func:`judge_run_ahead`), that pass's lexer sees every byte: once it has read
    them all, plain ASCII without a CR is known without a pass of its own (else this pass decides)."""
    if native is None:
        return data.find(b"\r"), data.isascii()
    judged = _JUDGED_AHEAD.get(id(data))
    if judged is not None and judged.data is data:
        judged.done.wait()  # its reader waits for it next (else the general reader reads the run, 5 times longer)
        if judged.found and judged.found[0] is not None and judged.found[0][-1]:
            return -1, True
    return native.text_marks(data)


def idle_cores() -> float:
    """The cores this process may run on less the system's load (the last minute's average of runnable tasks)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cores - (os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0)


def _int64(array: np.ndarray) -> np.ndarray:
    import numpy as np

    return np.ascontiguousarray(array, dtype=np.int64)


def judged_rows(qidx: np.ndarray, didx: np.ndarray, rank: np.ndarray, first: np.ndarray, run_query_pos: np.ndarray,
                run_to_qdoc: np.ndarray, offsets: np.ndarray, judged_docs: np.ndarray, judged_grades: np.ndarray,
                depth: int | None, n_qdocs: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(query position, rank, grade) of every ranked row whose document is judged for its evaluated query, in one pass.

    The run's rows in rank order (``qidx``, ``didx``, ``rank``, ``first``: not
    a repeat); ``run_query_pos``: each run query's evaluated position (-1: not
    evaluated); ``run_to_qdoc``: each run document's code among the
    ``n_qdocs`` judged documents (-1: never judged); ``offsets``: where each
    evaluated query's judgments start in ``judged_docs`` / ``judged_grades``
    (qrels document codes). ``None`` without the kernel.
    """
    import numpy as np

    if native is None:
        return None
    doc_run_code = np.full(max(n_qdocs, 1), -1, dtype=np.int64)  # each judged document's run code (-1: not in the run)
    named = np.flatnonzero(run_to_qdoc >= 0)
    doc_run_code[run_to_qdoc[named]] = named
    room = len(judged_docs)
    qpos, ranks, grades = np.empty(room, dtype=np.int64), np.empty(room, dtype=np.int64), np.empty(room, dtype=np.float64)
    count = native.judged_rows(
        _int64(qidx), _int64(didx), _int64(rank), np.ascontiguousarray(first, dtype=bool).view(np.uint8), _int64(run_query_pos),
        doc_run_code, _int64(offsets), _int64(judged_docs), np.ascontiguousarray(judged_grades, dtype=np.float64), depth or 0,
        qpos, ranks, grades,
    )
    return qpos[:count], ranks[:count], grades[:count]


def first_occurrences(qidx: np.ndarray, didx: np.ndarray, n_docs: int) -> np.ndarray | None:
    """False for rows repeating an earlier (query, document) pair of their query (rows grouped by query); ``None`` without the kernel."""
    import numpy as np

    if native is None:
        return None
    first = np.ones(len(qidx), dtype=bool)
    native.first_occurrences(_int64(qidx), _int64(didx), n_docs, first.view(np.uint8))
    return first


class TableShape(NamedTuple):
    """What :func:`read_table` takes from each line of a whitespace table: ``n_fields`` fields (more allowed with
    ``extra``), the columns ``keep`` coded, the column ``numeric`` a number."""

    n_fields: int
    extra: bool
    keep: tuple[int, ...]
    numeric: int


TREC_RUN = TableShape(6, True, (0, 2), 4)  # qid Q0 docid rank score tag [ignored...] (evalkit/io/formats/trec_run.py)
TREC_QRELS = TableShape(4, False, (0, 2), 3)  # qid iteration docid grade (evalkit/io/formats/trec_qrels.py)


class _Ahead(NamedTuple):
    data: bytes
    shape: TableShape
    done: threading.Event
    found: list  # [result] once read; empty when the read failed (the reader then reads again and meets the failure)


# Read ahead, a table is read in two halves from 64 MB: a command's imports take one core for their first 0.2-0.3 s,
# the read of a larger table outlasts them (a 177 MB run: 0.7 s instead of 1.0 s; a 35 MB run gains nothing).
AHEAD_SPLIT_BYTES = 1 << 26
_READ_AHEAD: dict[int, _Ahead] = {}  # id(data) -> a table read ahead of its reader (the entry holds data: the id stays its)


def read_table_ahead(data: bytes, shape: TableShape, register: bool = True, registered: Callable[[], None] | None = None
                     ) -> tuple | None:
    """Read ``data`` as a ``shape`` table now, on the calling thread (no numpy; two halves on two threads from
    :data:`AHEAD_SPLIT_BYTES`), for the :func:`read_table`
    of the same bytes object with the same shape: the read-ahead thread of a command (:mod:`evalkit.io.readahead`)
    parses its input while the command imports what it needs. A later read of other bytes or another shape reads
    for itself. Returns the kernel's result (``None``: not read); ``register=False`` only returns it.
    ``registered`` is called once the table is registered, before it is read (its reader may then wait for it)."""
    if native is None:
        return None
    ahead = _Ahead(data, shape, threading.Event(), [])
    if register:
        _READ_AHEAD[id(data)] = ahead
    if registered is not None:
        registered()
    return _read_into(ahead)


def ahead_threads(size: int) -> int:
    """Threads for a read ahead of ``size`` bytes: two from :data:`AHEAD_SPLIT_BYTES` (the command's imports hold the
    other core before)."""
    return 2 if size >= AHEAD_SPLIT_BYTES else 1


def _threads(size: int, threads: int | None) -> int:
    """``threads``, or by default two from :data:`SPLIT_BYTES` where a second core is idle (:func:`idle_cores`)."""
    if threads is not None:
        return threads
    return 2 if size >= SPLIT_BYTES and idle_cores() >= 1.5 else 1


def _taken(registry: dict, data: bytes, matches) -> list:
    """What was read ahead of ``data`` in ``registry`` for a reader it ``matches`` (``[result]``, waiting for it; empty:
    read it yourself). The entry is taken out either way: a later read reads for itself."""
    ahead = registry.pop(id(data), None)
    if ahead is None or ahead.data is not data or not matches(ahead):
        return []
    ahead.done.wait()
    return ahead.found


def _read_into(ahead: _Ahead) -> tuple | None:
    try:
        ahead.found.append(native.read_table(ahead.data, *ahead.shape, SEED, ahead_threads(len(ahead.data))))
        return ahead.found[0]
    except Exception:  # noqa: BLE001 (out of memory, say): the reader reads again and meets it itself
        return None
    finally:
        ahead.done.set()


class _JudgedAhead(NamedTuple):
    data: bytes
    gold: tuple  # the gold table's (query ids, query codes, doc codes, doc ids) it was read against
    done: threading.Event
    found: list  # [result] once read (None: declined)


_JUDGED_AHEAD: dict[int, _JudgedAhead] = {}  # id(run data) -> the run read against a gold ahead of its reader


def judgments_of(gold_table: tuple) -> tuple:
    """The judgments of a qrels table read ahead (:func:`read_table_ahead`'s result, TREC_QRELS) as the judged
    readings take them: ``(query ids, query codes, document codes, document ids)``."""
    _, _, _, (query_ids, doc_ids), (qidx, didx), _ = gold_table
    return query_ids, qidx, didx, doc_ids


def judge_run_ahead(data: bytes, gold_table: tuple | None) -> None:
    """Read the TREC run ``data`` against a qrels table read ahead (:func:`read_table_ahead`'s result, TREC_QRELS)
    now, on the calling thread, for the :func:`judge_run` of the same bytes against the same judgments (compared by
    value there); where the kernel declines, the run's general table is read ahead instead (:func:`read_table`)."""
    if native is None or gold_table is None:
        return
    gold = query_ids, qidx, didx, doc_ids = judgments_of(gold_table)
    ahead = _JudgedAhead(data, gold, threading.Event(), [])
    _JUDGED_AHEAD[id(data)] = ahead
    general = None
    try:
        ahead.found.append(native.judge_run(data, query_ids, qidx, didx, doc_ids, SEED, ahead_threads(len(data))))
        if ahead.found[0] is None:  # registered before its reader hears of the decline: it waits for this table
            general = _READ_AHEAD[id(data)] = _Ahead(data, TREC_RUN, threading.Event(), [])
    except Exception:  # noqa: BLE001 (out of memory, say): the reader reads again and meets it itself
        pass
    finally:
        ahead.done.set()
    if general is not None:
        _read_into(general)


def read_table(data: bytes, n_fields: int, extra: bool, keep: tuple[int, ...], numeric: int, threads: int | None = None
               ) -> tuple[list[tuple[np.ndarray, list[str]]], np.ndarray, int, int] | None:
    """A whitespace table's kept columns coded (codes, distinct ids in code order), its numeric column, the lines
    with extra fields and the first of them, in one pass; ``None`` without the kernel or where the Python reader must
    name a bad line (a wrong field count, a number it refuses). ``threads``: 2 reads the two halves at once, 1 in
    one pass; by default two from :data:`SPLIT_BYTES` where a second core is idle (:func:`idle_cores`). A table read
    ahead of these bytes in this shape (:func:`read_table_ahead`) is taken, waiting for it if need be."""
    if native is None:
        return None
    import numpy as np

    shape = (n_fields, extra, tuple(keep), numeric)
    taken = _taken(_READ_AHEAD, data, lambda ahead: ahead.shape == shape)
    found = taken[0] if taken else native.read_table(data, *shape, SEED, _threads(len(data), threads))
    if found is None:
        return None
    rows, n_extra, first_extra, uniques, codes, values = found
    columns = [(np.frombuffer(column, dtype=np.int64, count=rows), ids) for column, ids in zip(codes, uniques)]
    return columns, np.frombuffer(values, dtype=np.float64, count=rows), n_extra, first_extra


def same_gold(gold: tuple, query_ids: list[str], qidx: np.ndarray, didx: np.ndarray, doc_ids: list[str]) -> bool:
    """Whether ``gold`` (query ids, query codes, document codes, document ids: what a run was judged against ahead)
    holds these very judgments, compared by value."""
    import numpy as np

    gold_query_ids, gold_qidx, gold_didx, gold_doc_ids = gold
    return (gold_query_ids == query_ids and gold_doc_ids == doc_ids and np.array_equal(np.frombuffer(gold_qidx, dtype=np.int64), qidx)
            and np.array_equal(np.frombuffer(gold_didx, dtype=np.int64), didx))


def judged_arrays(found: tuple) -> tuple[int, int, list[str], np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The kernel's judged reading (``judge_run`` / ``judge_file``) with its buffers as int64 arrays, less its last
    field (plain text)."""
    import numpy as np

    n_extra, first_extra, run_query_ids, *arrays, _ = found
    return (n_extra, first_extra, run_query_ids, *(np.frombuffer(array, dtype=np.int64) for array in arrays))


def judge_file(fd: int, size: int, gold: tuple, threads: int | None = None) -> tuple | None:
    """The TREC run of ``size`` bytes in the open file ``fd`` read against ``gold`` (query ids, query codes, document
    codes, document ids) as :func:`judge_run` reads its bytes, from the file 1 MiB at a time (``judge_stream.c``);
    the kernel's own result (its last field: plain ASCII without CR), ``None`` where the general reader must read
    the run or the file could not be read whole. ``threads``: as :func:`read_table`'s."""
    if native is None:
        return None
    query_ids, qidx, didx, doc_ids = gold
    return native.judge_file(fd, size, query_ids, qidx, didx, doc_ids, SEED, _threads(size, threads))


def judge_run(data: bytes, query_ids: list[str], qidx: np.ndarray, didx: np.ndarray, doc_ids: list[str], threads: int | None = None
              ) -> tuple[int, int, list[str], np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """A TREC run read against a gold's judgments (``query_ids``, ``doc_ids``, per judgment its codes ``qidx`` and
    ``didx``) without coding its documents: ``(n_extra, first_extra, run query ids, rows per query, gold code per run
    query (-1: not in the gold), hit query, hit rank, hit judgment row)``, see :mod:`evalkit.io.prejudged`; ``None``
    without the kernel or where the general reader must read the run. ``threads``: as :func:`read_table`'s (the second
    part starts at a query's first row). A run read ahead against the same judgments (:func:`judge_run_ahead`) is
    taken, waiting for it if need be."""
    if native is None:
        return None
    taken = _taken(_JUDGED_AHEAD, data, lambda ahead: same_gold(ahead.gold, query_ids, qidx, didx, doc_ids))
    found = taken[0] if taken else native.judge_run(data, query_ids, _int64(qidx), _int64(didx), doc_ids, SEED, _threads(len(data), threads))
    return None if found is None else judged_arrays(found)


def positions(values: list[Any], universe: list[Any]) -> np.ndarray | None:
    """Index of each value in the unique list ``universe`` (-1: absent); ``None`` without the kernel or for ids it does not
    take (not all ``str``, lone surrogates, a repeated universe id): the caller's dict decides those."""
    import numpy as np

    if native is None:
        return None
    out = np.empty(len(values), dtype=np.int64)
    try:
        native.positions(values, universe, out, SEED)
    except (TypeError, ValueError):
        return None
    return out


def permuted_sums(values: np.ndarray, bit_generator: np.random.BitGenerator, products: np.ndarray, thresholds: np.ndarray,
                  sizes: np.ndarray, permutations: int) -> np.ndarray | None:
    """The run sums of ``permutations`` replicates of the randomised Tukey HSD test (replicates x runs); ``None`` without the kernel.

    ``values``: topics x runs; every topic's row shuffled by Fisher-Yates with
    digits drawn from ``bit_generator`` (numpy's raw 64-bit draws, its lock
    held) in groups of radixes (``products``, Lemire ``thresholds``, ``sizes``),
    as :mod:`evalkit.stats.randomised_tukey` describes and its numpy twin does.
    """
    import numpy as np

    if native is None:
        return None
    values = np.ascontiguousarray(values, dtype=np.float64)
    out = np.zeros((permutations, values.shape[1]))
    with bit_generator.lock:
        native.permuted_sums(values, values.shape[1], bit_generator.capsule, np.ascontiguousarray(products, dtype=np.uint64),
                             np.ascontiguousarray(thresholds, dtype=np.uint64), _int64(sizes), permutations, out)
    return out
