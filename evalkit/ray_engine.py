"""The Ray engine: a reranker's model calls as Ray Data ``map_batches`` over an actor pool.

Each actor holds one copy of the system (one loaded model). evalkit cuts the
pairs into work units (:func:`evalkit.engine.chunk_order`: the reranker's
own order, whole model batches), each unit is one Ray Data row processed by
one actor call, and the scores come back by position, so the result is the
local one bit for bit on deterministic hardware. A killed actor is restarted
and its unit redone (``max_restarts`` / ``max_task_retries``); finished units
are checkpointed under the cache, so a restarted driver recomputes only the
rest. Needs ``pip install 'evalkit[ray]'``.
"""
from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from evalkit.engine import ChunkStore, Engine, EngineOptions, checkpoint_folder, chunk_key, chunk_order, system_fingerprint
from evalkit.errors import UsageError

if TYPE_CHECKING:  # pragma: no cover
    from evalkit.stages import Reranker


class ScoreActor:
    """One model per actor: scores whole work units with the system's ``score_pairs``."""

    def __init__(self, system: Any) -> None:
        import ray

        self.system = ray.get(system) if isinstance(system, ray.ObjectRef) else system

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        out = np.empty(len(batch["unit"]), dtype=object)
        for i, (queries, texts) in enumerate(zip(batch["queries"], batch["texts"])):
            out[i] = np.asarray(self.system.score_pairs(list(queries), list(texts)), dtype=np.float64)
        return {"unit": batch["unit"], "scores": out}


class RayEngine(Engine):
    """Distributes :meth:`Reranker.score_pairs` over ``options.concurrency`` actors."""

    name = "ray"

    def __init__(self, options: EngineOptions) -> None:
        super().__init__()
        options.check()
        self.options = options
        import ray

        self._started = False
        if not ray.is_initialized():
            quiet = {"include_dashboard": False, "log_to_driver": False, "logging_level": "ERROR"}
            try:
                if options.address:
                    ray.init(address=options.address, **quiet)
                else:
                    ray.init(**quiet)
                    self._started = True
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise UsageError(f"--ray-address {options.address}: cannot reach a Ray cluster ({exc})") from None
        resources = ray.cluster_resources()
        if options.num_gpus and resources.get("GPU", 0) < options.num_gpus:
            raise UsageError(f"the Ray cluster has {resources.get('GPU', 0):g} GPUs; {options.num_gpus:g} per actor were asked for")
        if resources.get("CPU", 0) < options.num_cpus:
            raise UsageError(f"the Ray cluster has {resources.get('CPU', 0):g} CPUs; {options.num_cpus:g} per actor were asked for")
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False
        self.resources = {k: float(v) for k, v in resources.items() if k in ("CPU", "GPU", "memory")}
        self.ray_version = ray.__version__

    def describe(self) -> dict[str, Any]:
        o = self.options
        return {"name": "ray", "ray_version": self.ray_version, "address": o.address or "local instance", "cluster": self.resources,
                "concurrency": o.concurrency, "chunk_batches": o.chunk_batches, "num_cpus": o.num_cpus, "num_gpus": o.num_gpus}

    def score_pairs(self, system: "Reranker", queries: Sequence[str], texts: Sequence[str]) -> list[float]:
        import ray

        units = chunk_order(system, queries, texts, self.options.chunk_batches)
        store = ChunkStore(checkpoint_folder(system)) if self.options.checkpoint else None
        fingerprint = system_fingerprint(system)
        scores = np.zeros(len(texts), dtype=np.float64)
        keys, todo = [], []
        for number, unit in enumerate(units):
            unit_queries, unit_texts = [queries[i] for i in unit], [texts[i] for i in unit]
            key = chunk_key(fingerprint, unit_queries, unit_texts)
            keys.append(key)
            done = store.load(key) if store else None
            if done is not None and len(done) == len(unit):
                scores[unit] = done
                self.stats.from_checkpoint += 1
            else:
                todo.append({"unit": number, "queries": unit_queries, "texts": unit_texts})
        self.stats.chunks += len(units)
        self.stats.pairs += len(texts)
        if todo:
            started, finished_pairs = time.perf_counter(), 0
            dataset = ray.data.from_items(todo, override_num_blocks=len(todo))
            attached, system.engine = system.engine, None  # the actors get the system, not the engine
            try:
                system_ref = ray.put(system)
            finally:
                system.engine = attached
            scored = dataset.map_batches(
                ScoreActor, fn_constructor_args=(system_ref,), batch_size=1, batch_format="numpy",
                concurrency=self.options.concurrency, num_cpus=self.options.num_cpus, num_gpus=self.options.num_gpus or None,
                max_restarts=-1, max_task_retries=-1,
            )
            for row in scored.iter_rows():
                number, values = int(row["unit"]), np.asarray(row["scores"], dtype=np.float64)
                unit = units[number]
                if len(values) != len(unit):
                    raise UsageError(f"reranker {system.name!r}: {len(values)} scores for {len(unit)} pairs")
                scores[unit] = values
                if store:
                    store.save(keys[number], values)
                self.stats.computed += 1
                finished_pairs += len(unit)
                rate = finished_pairs / max(time.perf_counter() - started, 1e-9)
                print(f"\r{system.name} on ray: {finished_pairs}/{sum(len(units[t['unit']]) for t in todo)} pairs, {rate:.0f} pairs/s",
                      end="", file=sys.stderr)
            print(file=sys.stderr)
        return scores.tolist()

    def close(self) -> None:
        if self._started:
            import ray

            ray.shutdown()
