"""Where the model work of a pipeline runs: in this process (``local``) or on a Ray cluster (``ray``).

A reranker's model calls all go through one hook, :meth:`Reranker.score_pairs
<evalkit.stages.Reranker.score_pairs>`; an engine decides where that call
runs. evalkit, not the engine, fixes the work units: the pairs are put in
the reranker's own processing order (:meth:`Reranker.pair_order`, e.g. the
cross-encoder's length order) and cut into chunks of a multiple of the
model's batch size, so every model batch is the batch the local run makes,
with the same padding; results are reassembled by position. Finished chunks
are checkpointed (:class:`ChunkStore`) so a restarted driver pays only for
what was unfinished.

The local engine needs nothing; the Ray engine (:mod:`evalkit.ray_engine`)
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
    from evalkit.stages import Reranker

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
    pairs: int = 0


class Engine:
    """Runs a reranker's :meth:`score_pairs` over all pairs; ``local`` calls it directly."""

    name = "local"

    def __init__(self) -> None:
        self.stats = EngineStats()

    def score_pairs(self, system: "Reranker", queries: Sequence[str], texts: Sequence[str]) -> list[float]:
        self.stats.pairs += len(texts)
        return list(system.score_pairs(queries, texts))

    def describe(self) -> dict[str, Any]:
        """The engine as the manifest records it."""
        return {"name": self.name}

    def close(self) -> None:
        """Release what the engine started."""


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
    from evalkit.ray_engine import RayEngine

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
def chunk_order(system: "Reranker", queries: Sequence[str], texts: Sequence[str], chunk_batches: int) -> list[list[int]]:
    """Pair indices in the reranker's processing order, cut at multiples of its model batch size."""
    order = list(system.pair_order(queries, texts))
    if sorted(order) != list(range(len(texts))):
        raise UsageError(f"reranker {system.name!r}: pair_order() must return a permutation of the pairs")
    size = max(1, int(system.model_batch_size()) * int(chunk_batches))
    return [order[start:start + size] for start in range(0, len(order), size)]


def chunk_key(fingerprint: str, queries: Sequence[str], texts: Sequence[str]) -> str:
    """A chunk's identity: the system's fingerprint and the exact pairs, in order."""
    digest = hashlib.sha256(fingerprint.encode("utf-8"))
    for query, text in zip(queries, texts):
        digest.update(b"\x00" + query.encode("utf-8") + b"\x01" + text.encode("utf-8"))
    return digest.hexdigest()


@dataclass
class ChunkStore:
    """Finished chunks' scores on disk (``FOLDER/KEY.npy``, written atomically)."""

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
        return values if values.dtype == np.float64 and values.ndim == 1 else None

    def save(self, key: str, values: Sequence[float]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self.folder / f".{key}.{os.getpid()}.tmp.npy"
        np.save(tmp, np.asarray(values, dtype=np.float64), allow_pickle=False)
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
