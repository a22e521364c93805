"""Where the model work of a pipeline runs: in this process (``local``) or on a Ray cluster (``ray``).

Every model call of a system is described as one :class:`Work`: the system's
method to call, its input columns (one item per row: a pair, a token
sequence, a document), the order the method processes items in, and its
model batch size. The local engine calls the method once on everything; a
distributed engine cuts the items, in that order, into units of whole model
batches (:func:`work_units`), runs the method on each unit wherever it likes,
and puts the results back by position, so every model batch is the batch the
local run makes, with the same padding, and the output is the local one bit
for bit. Finished units are checkpointed (:class:`ChunkStore`) so a restarted
driver pays only for what was unfinished.

What goes through an engine: every reranker's :meth:`Reranker.score_pairs
<evalkit.pipelines.stages.Reranker.score_pairs>` (so plugins are distributed without
knowing it), the dense encoder's window embeddings (documents and queries),
the NLI verifier's class probabilities, the LLM verifier's prompts and every
``label_claim`` labeler (units of whole claims), DocT5Query's generation, and
BM25's query batches (:meth:`Engine.search`, the index shipped once).

The local engine needs nothing; the Ray engine (:mod:`evalkit.pipelines.ray_engine`)
needs ``pip install 'evalkit[ray]'`` and is imported only when asked for.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from evalkit.errors import UsageError

if TYPE_CHECKING:  # pragma: no cover
    from evalkit.pipelines.stages import Reranker

ENGINES = ("local", "ray")


@dataclass
class EngineOptions:
    """How a distributed engine runs the model work (ignored by ``local``)."""

    address: str | None = None  # None: start a local Ray instance; "auto": join the running cluster
    concurrency: int = 2  # actors, one loaded model each
    chunk_batches: int = 8  # model batches per work unit
    num_cpus: float = 1.0  # per actor
    num_gpus: float = 0.0  # per actor
    checkpoint: bool = True  # keep finished chunks under the cache

    def check(self) -> None:
        if self.concurrency < 1 or self.chunk_batches < 1:
            raise UsageError("engine concurrency and chunk_batches must be positive")
        if self.num_cpus < 0 or self.num_gpus < 0:
            raise UsageError("engine num_cpus and num_gpus must not be negative")


@dataclass
class EngineStats:
    chunks: int = 0
    from_checkpoint: int = 0
    computed: int = 0
    pairs: int = 0  # items of every Work (pairs, sequences, documents)
    items: dict[str, int] = field(default_factory=dict)  # items per method

    def count(self, method: str, items: int) -> None:
        self.pairs += items
        self.items[method] = self.items.get(method, 0) + items


@dataclass
class Work:
    """One model call of a system: ``getattr(system, method)(*columns)`` returns one result per item.

    ``order`` is the order the method itself processes items in (e.g. by
    length), ``batch_size`` its model batch; a distributed engine cuts units of
    whole batches in that order. With ``groups`` (e.g. query ids) a unit ends
    only where the group changes (methods that treat a query's items
    together). The result is a sequence or an array whose first axis is the
    items, in input order.
    """

    method: str
    columns: tuple[Sequence[Any], ...]
    order: Sequence[int] | None = None
    batch_size: int = 32
    groups: Sequence[Any] | None = None
    what: str = "pairs"

    def __len__(self) -> int:
        return len(self.columns[0]) if self.columns else 0


class Engine:
    """Runs a system's model :class:`Work`; ``local`` calls the method directly, in this process."""

    name = "local"

    def __init__(self) -> None:
        self.stats = EngineStats()

    def run(self, system: Any, work: Work) -> Any:
        """The results of ``work`` (one per item, input order)."""
        self.stats.count(work.method, len(work))
        return getattr(system, work.method)(*work.columns)

    def score_pairs(self, system: "Reranker", queries: Sequence[str], texts: Sequence[str]) -> list[float]:
        """A reranker's scores of ``(queries[i], texts[i])``: its :meth:`score_pairs` as one :class:`Work`."""
        work = Work("score_pairs", (list(queries), list(texts)), order=system.pair_order(queries, texts),
                    batch_size=system.model_batch_size())
        return list(self.run(system, work))

    def search(self, index: Any, query_tokens: Sequence[Sequence[str]], k: int, tie_rank: np.ndarray,
               progress: bool = False) -> list[tuple[np.ndarray, np.ndarray]]:
        """BM25: ``index.search`` of every query (``(doc rows, scores)`` per query, input order)."""
        return list(index.search(query_tokens, k, tie_rank, progress=progress))

    def describe(self) -> dict[str, Any]:
        """The engine as the manifest records it."""
        return {"name": self.name}

    def close(self) -> None:
        """Release what the engine started."""


def distributed_work(cls: type) -> str:
    """What of system class ``cls`` a distributed engine runs remotely, for ``evalkit systems``: its
    ``distributed`` text, else by kind (a pointwise reranker's :meth:`score_pairs`, a ``label_claim``
    labeler's claims; an overridden ``score_lists`` / ``label_pairs`` or a retriever runs in the driver)."""
    from evalkit.pipelines.stages import Labeler, Reranker

    declared = getattr(cls, "distributed", None)
    if declared is not None:
        return declared or "nothing (runs in the driver)"
    if issubclass(cls, Reranker) and cls.score_lists is Reranker.score_lists:
        return "score_pairs, units of whole model batches"
    if issubclass(cls, Labeler) and cls.label_pairs is Labeler.label_pairs:
        return "label_claim, whole claims per unit"
    return "nothing (runs in the driver)"


def run_work(system: Any, work: Work) -> Any:
    """``work`` on the system's engine (``system.engine``; none: this process)."""
    return (getattr(system, "engine", None) or LOCAL).run(system, work)


LOCAL = Engine()


def get_engine(name: str = "local", options: EngineOptions | None = None) -> Engine:
    """The engine ``name`` (``local`` or ``ray``) with ``options``."""
    if name == "local":
        return Engine()
    if name != "ray":
        raise UsageError(f"unknown engine {name!r} (choose {', '.join(ENGINES)})")
    try:
        import ray  # noqa: F401
    except ImportError:
        raise UsageError("the ray engine needs Ray: pip install 'evalkit[ray]'") from None
    from evalkit.pipelines.ray_engine import RayEngine

    return RayEngine(options or EngineOptions())


ENGINE_KEYS = {"name": str, "address": str, "concurrency": int, "chunk_batches": int, "num_cpus": (int, float),
               "num_gpus": (int, float), "checkpoint": bool}


def parse_engine(value: Any, where: str = "") -> tuple[str, EngineOptions]:
    """A config's ``engine = "ray"`` or ``[engine]`` table (name, address, concurrency, chunk_batches,
    num_cpus, num_gpus, checkpoint) as (name, options); wrong keys or types are one line."""
    if value is None:
        return "local", EngineOptions()
    table = {"name": value} if isinstance(value, str) else value
    if not isinstance(table, dict):
        raise UsageError(f"{where}engine must be a name (\"local\", \"ray\") or a table")
    for key, item in table.items():
        kind = ENGINE_KEYS.get(key)
        if kind is None:
            raise UsageError(f"{where}engine: unknown key {key!r} (known: {', '.join(ENGINE_KEYS)})")
        if isinstance(item, bool) and kind is not bool or not isinstance(item, kind):
            raise UsageError(f"{where}engine: {key} = {item!r} has the wrong type")
    name = table.get("name", "local")
    if name not in ENGINES:
        raise UsageError(f"{where}unknown engine {name!r} (choose {', '.join(ENGINES)})")
    options = EngineOptions(**{k: v for k, v in table.items() if k != "name"})
    options.check()
    return name, options


# ----------------------------------------------------------------- work units
def work_units(work: Work, chunk_batches: int) -> list[list[int]]:
    """Item indices in ``work.order``, cut at multiples of ``batch_size * chunk_batches`` items
    (with ``groups``: at the first group change from that size on)."""
    n = len(work)
    order = list(range(n)) if work.order is None else [int(i) for i in work.order]
    if len(order) != n or sorted(order) != list(range(n)):
        raise UsageError(f"{work.method}: the processing order must be a permutation of the {n} items")
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


def chunk_order(system: "Reranker", queries: Sequence[str], texts: Sequence[str], chunk_batches: int) -> list[list[int]]:
    """A reranker's pairs cut into units (:func:`work_units` of its :meth:`score_pairs` work)."""
    work = Work("score_pairs", (list(queries), list(texts)), order=system.pair_order(queries, texts),
                batch_size=system.model_batch_size())
    try:
        return work_units(work, chunk_batches)
    except UsageError:
        raise UsageError(f"reranker {system.name!r}: pair_order() must return a permutation of the pairs") from None


def chunk_key(fingerprint: str, *columns: Sequence[Any], method: str = "score_pairs") -> str:
    """A unit's identity: the system's fingerprint, the method and the exact items, in order."""
    digest = hashlib.sha256(fingerprint.encode("utf-8"))
    if method != "score_pairs":  # keys of reranker units stay what they were
        digest.update(method.encode("utf-8"))
    if len(columns) == 2 and all(isinstance(v, str) for col in columns for v in col):
        for query, text in zip(*columns):
            digest.update(b"\x00" + query.encode("utf-8") + b"\x01" + text.encode("utf-8"))
    else:
        digest.update(json.dumps([list(c) for c in columns], ensure_ascii=False, default=str).encode("utf-8"))
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
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self.folder / f".{key}.{os.getpid()}.tmp.npy"
        np.save(tmp, as_array(values), allow_pickle=False)
        os.replace(tmp, self.folder / f"{key}.npy")
        self.written.append(key)


def checkpoint_folder(system: "Reranker") -> Path:
    """``$EVALKIT_CACHE/engine/<system fingerprint>`` (default ``.evalkit-cache``, as every evalkit cache)."""
    root = Path(os.environ.get("EVALKIT_CACHE", ".evalkit-cache"))
    return root / "engine" / hashlib.sha256(system_fingerprint(system).encode("utf-8")).hexdigest()[:16]


def system_fingerprint(system: "Reranker") -> str:
    """What makes two systems score alike: name, options, and the model state when the system says."""
    state = system.fingerprint() if hasattr(system, "fingerprint") else ""
    return json.dumps({"system": system.name, "config": system.config(), "state": state}, sort_keys=True, default=str)


def as_array(values: Any) -> np.ndarray:
    """A unit's results as a plain array (numbers or unicode texts; never objects, so never pickled)."""
    array = np.asarray(values)
    if array.dtype == object:
        raise UsageError("a model call returned results that are neither numbers nor texts of one shape")
    return array
