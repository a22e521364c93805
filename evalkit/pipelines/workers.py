"""The local engine: large model work spread over worker processes on this machine, the rest in this process.

One Python process drives math libraries with a thread pool, and on a few
cores that pool leaves time on the table: tokenising, batching, pooling and
the small operations between matrix products run on one thread while the
others wait, and on a shared machine a descheduled thread holds its
siblings at every barrier. Worker processes with one thread each have no
such barriers. :class:`LocalEngine` therefore runs a :class:`Work` with
enough items in ``workers`` processes (default: one per usable core), each
holding a copy of the work's owner (the system, its model loaded) and
running ``threads`` math threads (default: the cores shared among the
workers). The items are cut into the units a distributed engine uses
(:func:`~evalkit.pipelines.engine.work_units`: whole model batches in the
method's own order), so every model batch is the batch the in-process run
makes, and the results come back by position: the output is the in-process
one at the same thread count, bit for bit (``tests/pipelines/test_local_workers.py``).

Work stays in this process when it is small (fewer than two units), when
the work says so (``Work.processes=False``: e.g. BM25 search, whose index
costs more to ship than the search), or when its owner cannot be pickled or
pickles to more than :data:`MAX_OWNER_BYTES` (a large local LLM is not
copied per core). The workers start on the first large work (``spawn``: a
fresh interpreter, safe with threaded math libraries), live as long as the
engine, and receive each new owner once.
"""
from __future__ import annotations

import multiprocessing
import os
import pickle
import sys
import time
import traceback
from typing import Any, Iterator

import numpy as np

from evalkit.core.errors import UsageError
from evalkit.pipelines.engine import Engine, EngineOptions, UnitEngine, Work, as_array, unit_args, work_units

MAX_OWNER_BYTES = 2 << 30  # a pickled owner above this stays in this process (one copy per worker otherwise)
MIN_BATCHES_PER_WORKER = 4  # less work than this per worker stays in this process (shipping the owner costs more)


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def plan(options: EngineOptions, cores: int | None = None) -> tuple[int, int]:
    """``(workers, threads per worker)`` for ``options`` on ``cores`` usable cores (0 means: chosen from the cores)."""
    cores = cores or usable_cores()
    workers = options.workers or cores
    threads = options.threads or max(1, cores // workers)
    return workers, threads


def set_threads(threads: int) -> None:
    """Math threads of this process: torch's pool (ONNX Runtime sessions follow torch's count) and BLAS/OpenMP."""
    for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[variable] = str(threads)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)


def worker_main(connection: Any, threads: int) -> None:
    """A worker's loop: ``("owner", token, bytes)`` loads an owner; ``("unit", token, method, keywords, args)`` runs one
    unit. Every answer is ``("ok", array or None, cpu)`` or ``("error", kind, message, cpu)``, ``cpu`` the worker's
    CPU seconds so far; ``None`` ends the loop."""
    set_threads(threads)
    owners: dict[int, Any] = {}
    while True:
        try:
            message = connection.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        try:
            if message[0] == "owner":
                owners.clear()  # one owner at a time: the previous work is finished
                owner = pickle.loads(message[2])  # bytes this engine's driver pickled, never a file's
                set_threads(threads)  # unpickling the owner imported its math library: size its pool now
                if hasattr(owner, "prepare_worker"):
                    owner.prepare_worker()
                owners[message[1]] = owner
                connection.send(("ok", None, time.process_time()))
                continue
            _, token, method, keywords, args = message
            values = as_array(getattr(owners[token], method)(*args, **keywords))
            connection.send(("ok", values, time.process_time()))
        except BaseException as exc:  # noqa: BLE001 - every failure goes back to the driver as one message
            kind = "usage" if isinstance(exc, UsageError) else type(exc).__name__
            text = str(exc) if isinstance(exc, UsageError) else "".join(traceback.format_exception(exc))[-2000:]
            connection.send(("error", kind, text, time.process_time()))


class WorkerPool:
    """``size`` worker processes (``spawn``: fresh interpreters), each running :func:`worker_main` with ``threads``
    math threads. A unit that fails ends the work once the busy workers have answered; a worker that dies, or a
    driver interrupted mid-work, closes the pool (the next work starts a fresh one)."""

    def __init__(self, size: int, threads: int) -> None:
        context = multiprocessing.get_context("spawn")
        self.connections: list[Any] = []
        self.processes: list[Any] = []
        for _ in range(size):
            mine, theirs = context.Pipe()
            process = context.Process(target=worker_main, args=(theirs, threads), daemon=True, name="evalkit-worker")
            process.start()
            theirs.close()
            self.connections.append(mine)
            self.processes.append(process)
        self.loaded: list[int | None] = [None] * size  # the owner token each worker holds
        self.cpu: list[float] = [0.0] * size  # each worker's CPU seconds so far

    @property
    def cpu_seconds(self) -> float:
        """CPU seconds of every worker so far (start-up included)."""
        return sum(self.cpu)

    def run(self, token: int, owner: bytes, method: str, keywords: dict[str, Any], units: list[tuple[int, list[list[Any]]]],
            label: str) -> Iterator[tuple[int, np.ndarray]]:
        """Every ``(number, args)`` unit through ``method`` of the owner, on whichever worker is free; yields as they finish."""
        from multiprocessing.connection import wait

        pending = list(reversed(units))
        busy: dict[int, int | None] = {}  # worker -> unit number (None: loading the owner)

        def feed(worker: int) -> None:
            if self.loaded[worker] != token:
                self.connections[worker].send(("owner", token, owner))
                self.loaded[worker] = token
                busy[worker] = None
            elif pending:
                number, args = pending.pop()
                self.connections[worker].send(("unit", token, method, keywords, args))
                busy[worker] = number

        for worker in range(min(len(self.connections), len(pending))):
            feed(worker)
        failure: BaseException | None = None
        while busy:
            for ready in wait([self.connections[w] for w in busy]):
                worker = self.connections.index(ready)
                try:
                    answer = self.connections[worker].recv()
                except (EOFError, OSError):
                    raise UsageError(f"{label}: a worker process of the local engine died (exit code "
                                     f"{self.processes[worker].exitcode}); rerun with --workers 1 to run in this process") from None
                number = busy.pop(worker)
                self.cpu[worker] = answer[-1]
                if answer[0] == "error":  # the other workers finish their unit first: no answer stays in a pipe
                    failure = failure or (UsageError(answer[2]) if answer[1] == "usage" else
                                          RuntimeError(f"{label}: {answer[1]} in a worker process of the local engine:\n{answer[2]}"))
                    pending.clear()
                    continue
                if number is not None and failure is None:
                    yield number, answer[1]
                if pending:
                    feed(worker)
        if failure is not None:
            raise failure

    def close(self) -> None:
        """Ask every worker to end; kill those still running after a few seconds."""
        for connection in self.connections:
            try:
                connection.send(None)
                connection.close()
            except OSError:
                pass
        for process in self.processes:
            process.join(timeout=5)
            if process.is_alive():
                process.kill()
                process.join()
        self.connections, self.processes = [], []


class LocalEngine(UnitEngine):
    """The ``local`` engine: large model work in worker processes on this machine (see the module), the rest here."""

    name = "local"
    checkpoints = False  # units are redone on a rerun, as in-process work is

    def __init__(self, options: EngineOptions | None = None) -> None:
        super().__init__()
        self.options = options or EngineOptions()
        self.options.check()
        self.workers, self.threads = plan(self.options)
        self._pool: WorkerPool | None = None
        self._shipping: tuple[int, bytes] | None = None  # (token, owner pickle) of the work being run
        self._works = 0  # tokens: one per work sent to the workers

    def describe(self) -> dict[str, Any]:
        return {"name": "local", "workers": self.workers, "threads_per_worker": self.threads}

    def spread(self, work: Work) -> bool:
        """Whether ``work`` goes to the worker processes: several workers, work that allows it, at least
        :data:`MIN_BATCHES_PER_WORKER` model batches per worker."""
        return self.workers > 1 and work.processes and len(work) >= MIN_BATCHES_PER_WORKER * self.workers * max(1, work.batch_size)

    def run(self, work: Work) -> Any:
        if not self.spread(work):
            return Engine.run(self, work)
        try:
            owner = pickle.dumps(work.owner, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001 - an owner that cannot travel works here
            return Engine.run(self, work)
        if len(owner) > MAX_OWNER_BYTES:
            return Engine.run(self, work)
        self._works += 1
        self._shipping = (self._works, owner)
        try:
            return super().run(work)
        finally:
            self._shipping = None

    def compute(self, work: Work, units: list[list[int]], todo: list[int]) -> Iterator[tuple[int, np.ndarray]]:
        assert self._shipping is not None
        if self._pool is None:
            self._pool = WorkerPool(self.workers, self.threads)
        pool, before, settled = self._pool, self._pool.cpu_seconds, False
        try:
            yield from pool.run(self._shipping[0], self._shipping[1], work.method, dict(work.keywords),
                                [(n, unit_args(work, units[n])) for n in todo], f"{work.owner_name} ({work.method})")
            settled = True
        except (UsageError, RuntimeError):
            settled = not any(p.exitcode is not None for p in pool.processes)  # a unit failed; every worker answered
            raise
        finally:
            self.stats.worker_cpu_seconds += pool.cpu_seconds - before
            if not settled:  # a dead worker or an interruption: answers may be on their way; start afresh next time
                self.close()

    def units(self, work: Work) -> list[list[int]]:
        """One model batch per unit: a free worker always finds the next batch (no pipe is slower than a batch)."""
        return work_units(work, 1)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None
