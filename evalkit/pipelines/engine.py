"""Where the model work of a pipeline runs: in this process (``local``) or on a Ray cluster (``ray``).

The engine is an execution context handed to every stage call (``retrieve``,
``rerank``, ``label``, ``fit``: see :mod:`evalkit.pipelines.stages`); a system
never keeps one. Every model call of a system is described as one
:class:`Work`, and there is one idiom for handing it over::

    embeddings = engine.run(Work(self.embed_sequences, (sequences,), order=by_length, batch_size=32))

A :class:`Work` holds the system's method to call (a bound method: the
system travels with it), its input columns (one item per row: a pair, a
token sequence, a document), the order the method processes items in, and
its model batch size. The local engine calls the method once on everything;
a distributed engine cuts the items, in that order, into units of whole model
batches (:func:`work_units`), runs the method on each unit wherever it likes,
and puts the results back by position, so every model batch is the batch the
local run makes, with the same padding, and the output is the local one bit
for bit. Finished units are checkpointed (:class:`ChunkStore`) so a restarted
driver pays only for what was unfinished.

What goes through an engine: every reranker's :meth:`Reranker.score_pairs
<evalkit.pipelines.stages.Reranker.score_pairs>` (so plugins are distributed
without knowing it), the dense encoder's window embeddings (documents and
queries), the NLI verifier's class probabilities, the LLM verifier's prompts
and every ``label_claim`` labeler (units of whole claims), RankGPT's
permutations, DocT5Query's generation, and BM25's query blocks.

The local engine needs nothing; the Ray engine (:mod:`evalkit.pipelines.ray_engine`)
needs ``pip install 'evalkit-ir[ray]'`` and is imported only when asked for.
"""
from __future__ import annotations

import hashlib
import inspect
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Protocol, Sequence

import numpy as np

from evalkit.core.errors import UsageError



class PairScorer(Protocol):
    """What an engine needs of a pointwise reranker (:class:`evalkit.pipelines.stages.Reranker` is one)."""

    name: str

    def score_pairs(self, queries: Sequence[str], texts: Sequence[str]) -> Sequence[float]: ...

    def pair_order(self, queries: Sequence[str], texts: Sequence[str]) -> list[int]: ...

    def model_batch_size(self) -> int: ...



@dataclass
class EngineOptions:
    """How an engine runs the model work: ``workers`` and ``threads`` for ``local``, the rest for ``ray``
    (``chunk_batches`` for both)."""

    address: str | None = None  # None: start a local Ray instance; "auto": join the running cluster
    concurrency: int = 2  # actors, one loaded model each
    chunk_batches: int = 8  # model batches per work unit
    num_cpus: float = 1.0  # per actor
    num_gpus: float = 0.0  # per actor
    checkpoint: bool = True  # keep finished chunks under the cache (ray)
    workers: int = 0  # local: worker processes for large model work; 0 = one per usable core, 1 = this process only
    threads: int = 0  # local: math threads per worker process; 0 = the usable cores shared among the workers

    def check(self) -> None:
        """Types and ranges (from TOML or the command line): one line each, never a traceback or a NaN passed to Ray."""
        import math

        for name in ("concurrency", "chunk_batches"):
            value = getattr(self, name)
            if not (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
                raise UsageError(f"engine {name} = {value!r} must be a whole number >= 1")
        for name in ("num_cpus", "num_gpus"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0):
                raise UsageError(f"engine {name} = {value!r} must be a finite number >= 0")
        for name in ("workers", "threads"):  # 0: chosen from the usable cores
            value = getattr(self, name)
            if not (isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 1024):
                raise UsageError(f"engine {name} = {value!r} must be a whole number from 0 (chosen from the usable cores) to 1024")
        if self.address is not None and not isinstance(self.address, str):
            raise UsageError(f"engine address = {self.address!r} must be a string")
        if not isinstance(self.checkpoint, bool):
            raise UsageError(f"engine checkpoint = {self.checkpoint!r} must be true or false")


@dataclass
class EngineStats:
    chunks: int = 0
    from_checkpoint: int = 0
    computed: int = 0
    pairs: int = 0  # items of every Work (pairs, sequences, documents)
    items: dict[str, int] = field(default_factory=dict)  # items per method
    worker_cpu_seconds: float = 0.0  # CPU seconds spent in worker processes (local engine), beside this process's own

    def count(self, method: str, items: int) -> None:
        self.pairs += items
        self.items[method] = self.items.get(method, 0) + items


@dataclass
class Work:
    """One model call of a system: ``call(*columns)`` returns one result per item.

    ``call`` is a method of the system (or of the object holding the model, e.g.
    a BM25 search over its index): a distributed engine ships that object to its
    workers once and calls the same method there on units of the items.
    ``order`` is the order the method itself processes items in (e.g. by
    length), ``batch_size`` its model batch; a distributed engine cuts units of
    whole batches in that order. With ``groups`` (e.g. query ids) a unit ends
    only where the group changes (methods that treat a query's items
    together). The result is a sequence or an array whose first axis is the
    items, in input order (numbers or texts: a distributed engine sends them as
    plain arrays). ``keywords`` are passed to every call as they are (e.g. a
    progress label). ``checkpoint=False`` keeps finished units off the disk
    (work that is cheap to redo); ``processes=False`` keeps the work out of
    the local engine's worker processes (its owner costs more to copy than
    the work saves, e.g. a BM25 index).
    """

    call: Callable[..., Any]
    columns: tuple[Sequence[Any], ...]
    order: Sequence[int] | None = None
    batch_size: int = 32
    groups: Sequence[Any] | None = None
    what: str = "pairs"
    keywords: Mapping[str, Any] = field(default_factory=dict)
    checkpoint: bool = True
    processes: bool = True

    def __post_init__(self) -> None:
        if not inspect.ismethod(self.call):
            raise UsageError(f"Work needs a method of the system doing the work (self.method), not {self.call!r}")

    @property
    def owner(self) -> Any:
        """The object whose method does the work (what a distributed engine ships to its workers)."""
        assert inspect.ismethod(self.call)  # __post_init__ refused anything else
        return self.call.__self__

    @property
    def owner_name(self) -> str:
        """The owner's name in messages (a system's registry name)."""
        return getattr(self.owner, "name", "") or type(self.owner).__name__

    @property
    def method(self) -> str:
        """The method's name (statistics, checkpoint keys, messages)."""
        return self.call.__name__

    def __len__(self) -> int:
        return len(self.columns[0]) if self.columns else 0


class Engine:
    """Runs a system's model :class:`Work`; ``local`` calls the method directly, in this process."""

    name = "local"
    distributed = False  # True: work runs elsewhere, in units (a system may then skip work that only pays off locally)

    def __init__(self) -> None:
        self.stats = EngineStats()

    def run(self, work: Work) -> Any:
        """The results of ``work`` (one per item, input order)."""
        self.stats.count(work.method, len(work))
        return work.call(*work.columns, **work.keywords)

    def score_pairs(self, system: PairScorer, queries: Sequence[str], texts: Sequence[str]) -> list[float]:
        """A reranker's scores of ``(queries[i], texts[i])``: its :meth:`score_pairs` as one :class:`Work`."""
        return list(self.run(pair_work(system, queries, texts)))

    def describe(self) -> dict[str, Any]:
        """The engine as the manifest records it."""
        return {"name": self.name}

    def close(self) -> None:
        """Release what the engine started."""


def pair_work(system: PairScorer, queries: Sequence[str], texts: Sequence[str]) -> Work:
    """A pointwise reranker's :meth:`score_pairs` of ``(queries[i], texts[i])`` as one :class:`Work` (its own pair order)."""
    return Work(system.score_pairs, (list(queries), list(texts)), order=system.pair_order(queries, texts),
                batch_size=system.model_batch_size())


LOCAL = Engine()  # the default execution context of every stage call: this process


# ----------------------------------------------------------------- work units
def work_units(work: Work, chunk_batches: int) -> list[list[int]]:
    """Item indices in ``work.order``, cut at multiples of ``batch_size * chunk_batches`` items
    (with ``groups``: at the first group change from that size on)."""
    n = len(work)
    order = list(range(n)) if work.order is None else [int(i) for i in work.order]
    if len(order) != n or sorted(order) != list(range(n)):
        raise UsageError(f"{work.owner_name!r}: the processing order of {work.method} must be a permutation of its {n} items")
    size = max(1, int(work.batch_size) * int(chunk_batches))
    if work.groups is None:
        return [order[start:start + size] for start in range(0, n, size)]
    units: list[list[int]] = [[]]
    for position, item in enumerate(order):
        unit = units[-1]
        if len(unit) >= size and work.groups[item] != work.groups[order[position - 1]]:
            units.append(unit := [])
        unit.append(item)
    return [u for u in units if u]


def chunk_key(fingerprint: str, *columns: Sequence[Any], method: str = "score_pairs", keywords: Mapping[str, Any] | None = None) -> str:
    """A unit's identity: the system's fingerprint, the method (and its keywords) and the exact items, in order."""
    digest = hashlib.sha256(fingerprint.encode("utf-8"))
    if method != "score_pairs":  # keys of reranker units stay what they were
        digest.update(method.encode("utf-8"))
    if keywords:
        digest.update(json.dumps(dict(keywords), sort_keys=True, default=str, allow_nan=False).encode("utf-8"))
    if len(columns) == 2 and all(isinstance(v, str) for col in columns for v in col):
        for query, text in zip(*columns):
            digest.update(b"\x00" + query.encode("utf-8") + b"\x01" + text.encode("utf-8"))
    else:
        digest.update(json.dumps([list(c) for c in columns], ensure_ascii=False, default=str, allow_nan=False).encode("utf-8"))
    return digest.hexdigest()


@dataclass
class ChunkStore:
    """Finished units' results on disk (``FOLDER/KEY.npy``: numbers or strings, never pickles; written atomically)."""

    folder: Path
    written: list[str] = field(default_factory=list)

    def load(self, key: str) -> np.ndarray | None:
        path = self.folder / f"{key}.npy"
        if not path.is_file():
            return None
        try:
            values = np.load(path, allow_pickle=False)
        except (OSError, ValueError):
            return None  # a torn or foreign file: recompute
        return values if values.dtype != object and values.ndim >= 1 else None

    def save(self, key: str, values: Any) -> None:
        import io

        from evalkit.io.writing.temporaries import replace_with

        self.folder.mkdir(parents=True, exist_ok=True)
        buffer = io.BytesIO()
        np.save(buffer, as_array(values), allow_pickle=False)
        replace_with(self.folder / f"{key}.npy", buffer.getvalue())  # a killed run leaves no torn or hidden chunk
        self.written.append(key)


def checkpoint_folder(system: Any) -> Path:
    """``$EVALKIT_CACHE/engine/<system fingerprint>`` (default ``.evalkit-cache``, as every evalkit cache)."""
    root = Path(os.environ.get("EVALKIT_CACHE", ".evalkit-cache"))
    return root / "engine" / hashlib.sha256(system_fingerprint(system).encode("utf-8")).hexdigest()[:16]


def system_fingerprint(system: Any) -> str:
    """What makes two systems score alike: name, options, and the model state when the system says."""
    state = system.fingerprint() if hasattr(system, "fingerprint") else ""
    return json.dumps({"system": system.name, "config": system.config(), "state": state}, sort_keys=True, default=str, allow_nan=False)


def as_array(values: Any) -> np.ndarray:
    """A unit's results as a plain array (numbers or unicode texts; never objects, so never pickled)."""
    array = np.asarray(values)
    if array.dtype == object:
        raise UsageError("a model call returned results that are neither numbers nor texts of one shape")
    return array


# ----------------------------------------------------------------- engines that run units elsewhere
class UnitEngine(Engine):
    """An engine that runs a :class:`Work` in units (:func:`work_units`) elsewhere and puts the results back by
    position; finished units are checkpointed (:class:`ChunkStore`) when ``options.checkpoint``.

    Subclasses say where a unit runs (:meth:`compute`): Ray actors
    (:mod:`evalkit.pipelines.ray_engine`), worker processes on this machine
    (:mod:`evalkit.pipelines.workers`).
    """

    options: EngineOptions
    checkpoints = True  # False: this engine never keeps units on disk, whatever options.checkpoint says

    def run(self, work: Work) -> Any:
        system = work.owner
        units = self.units(work)
        store = ChunkStore(checkpoint_folder(system)) if self.checkpoints and self.options.checkpoint and work.checkpoint else None
        fingerprint = system_fingerprint(system) if store else ""
        results: list[np.ndarray | None] = [None] * len(units)
        keys, todo = [], []
        for number, unit in enumerate(units):
            key = chunk_key(fingerprint, *unit_args(work, unit), method=work.method, keywords=work.keywords) if store else ""
            keys.append(key)
            done = store.load(key) if store else None
            if done is not None and len(done) == len(unit):
                results[number] = done
                self.stats.from_checkpoint += 1
            else:
                todo.append(number)
        self.stats.chunks += len(units)
        self.stats.count(work.method, len(work))
        if todo:
            from evalkit.core.progress import progress

            shown = progress(total=sum(len(units[n]) for n in todo), desc=f"{work.owner_name} ({work.method}) on {self.name}",
                             unit=work.what)
            for number, values in self.compute(work, units, todo):
                if len(values) != len(units[number]):
                    raise UsageError(f"system {work.owner_name!r}: {work.method} returned {len(values)} results for "
                                     f"{len(units[number])} {work.what}")
                results[number] = values
                if store:
                    store.save(keys[number], values)
                self.stats.computed += 1
                shown.update(len(units[number]))
            shown.close()
        return assemble(units, results, len(work), work)

    def units(self, work: Work) -> list[list[int]]:
        """The work cut into units of ``options.chunk_batches`` model batches."""
        return work_units(work, self.options.chunk_batches)

    def compute(self, work: Work, units: list[list[int]], todo: list[int]) -> Iterator[tuple[int, np.ndarray]]:
        """``(unit number, results as an array)`` for every unit in ``todo``, in any order."""
        raise NotImplementedError


def unit_args(work: Work, unit: Sequence[int]) -> list[list[Any]]:
    """The columns of ``work`` restricted to the items of ``unit``, in the unit's order."""
    return [[column[i] for i in unit] for column in work.columns]


def assemble(units: list[list[int]], results: Sequence[np.ndarray | None], n: int, work: Work) -> np.ndarray:
    """The units' results put back in input order."""
    first = next((r for r in results if r is not None), None)
    if first is None:
        return np.zeros(0)
    out = np.empty((n, *first.shape[1:]), dtype=first.dtype if first.dtype.kind != "U" else object)
    for unit, values in zip(units, results):
        if values is None or values.shape[1:] != first.shape[1:]:
            raise UsageError(f"system {work.owner_name!r}: {work.method} returned results of different shapes")
        out[unit] = values
    if first.dtype.kind == "U":
        return out.astype(str) if out.ndim > 1 else out
    return out
