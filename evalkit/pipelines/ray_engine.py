"""The Ray engine: a system's model work as Ray Data ``map_batches`` over an actor pool.

Each actor holds one copy of the system (one loaded model). evalkit cuts the
items of a :class:`~evalkit.pipelines.engine.Work` into units (:func:`evalkit.pipelines.engine.work_units`:
the method's own processing order, whole model batches), each unit is one
Ray Data row processed by one actor call, and the results come back by
position, so the output is the local one bit for bit on deterministic
hardware. A killed actor is restarted and its unit redone (Ray Data's
``max_restarts`` / ``max_task_retries``); finished units are checkpointed under the cache, so a
restarted driver recomputes only the rest. Needs ``pip install 'evalkit-ir[ray]'``.
"""
from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from evalkit.pipelines.engine import EngineOptions, UnitEngine, Work, as_array, unit_args
from evalkit.core.errors import UsageError


def to_bytes(values: Any) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, as_array(values), allow_pickle=False)
    return buffer.getvalue()


def from_bytes(data: bytes) -> np.ndarray:
    return np.load(io.BytesIO(data), allow_pickle=False)


class UnitActor:
    """One model per actor: runs whole work units through the same method of its copy of the work's owner."""

    def __init__(self, owner: Any, method: str, keywords: dict[str, Any]) -> None:
        import ray

        self.owner = ray.get(owner) if isinstance(owner, ray.ObjectRef) else owner
        if hasattr(self.owner, "prepare_worker"):
            self.owner.prepare_worker()  # e.g. a model loaded on a CPU driver moves to this actor's GPU
        self.call = getattr(self.owner, method)  # the Work's bound method, rebound to this actor's copy
        self.keywords = keywords

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        out = [to_bytes(self.call(*json.loads(str(args)), **self.keywords)) for args in batch["args"]]
        return {"unit": batch["unit"], "result": np.array(out, dtype=object)}


CONNECT_TIMEOUT_ENV = "EVALKIT_RAY_CONNECT_TIMEOUT"  # seconds to wait for a cluster's port (default 10)
VERBOSE_ENV = "EVALKIT_RAY_VERBOSE"  # 1: Ray's own INFO lines and its workers' logs, as Ray prints them


def verbose() -> bool:
    """Read when used: a test or a caller may set the variable late."""
    return os.environ.get(VERBOSE_ENV, "") not in ("", "0")


def quiet_ray() -> None:
    """Ray's own log lines off unless EVALKIT_RAY_VERBOSE=1: its C++ core logs errors for normal events
    (``core_worker.cc ... max_restarts > 0`` when an actor pool ends), Ray Data INFO lines and warnings per dataset."""
    if verbose():
        return
    import logging
    import warnings

    os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "fatal")  # the C++ core of the driver and of the processes it starts
    warnings.filterwarnings("ignore", module=r"ray(\.|$)")
    for name in ("ray", "ray.data"):
        logging.getLogger(name).setLevel(logging.ERROR)


class native_stderr_silenced:
    """fd 2 sent to /dev/null for a block (the C++ core prints its start-up lines there, below Python's reach)."""

    def __enter__(self) -> None:
        self.saved = None
        if verbose():
            return
        try:
            sys.stderr.flush()
            self.saved = os.dup(2)
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 2)
            os.close(null)
        except OSError:
            self.saved = None

    def __exit__(self, *exc) -> None:
        if self.saved is not None:
            os.dup2(self.saved, 2)
            os.close(self.saved)


def check_reachable(address: str) -> None:
    """One line, within EVALKIT_RAY_CONNECT_TIMEOUT seconds, when nothing listens at a cluster's ``HOST:PORT``
    (``ray://HOST[:PORT]`` too; ``auto`` and local addresses are Ray's to find)."""
    import socket

    text = address.strip()
    client = text.startswith("ray://")
    text = text[len("ray://"):] if client else text
    if text in ("", "auto", "local"):
        return
    host, sep, port_text = text.rpartition(":")
    if not sep:
        host, port_text = text, "10001" if client else "6379"
    host = host.strip("[]")
    if not port_text.isdigit() or not 0 < int(port_text) < 65536 or not host:
        raise UsageError(f"--ray-address {address}: write HOST:PORT (e.g. 10.0.0.5:6379), ray://HOST:PORT or auto")
    try:
        timeout = float(os.environ.get(CONNECT_TIMEOUT_ENV) or 10)
    except ValueError:
        timeout = 10.0
    try:
        with socket.create_connection((host, int(port_text)), timeout=timeout):
            return
    except OSError as exc:
        reason = "timed out" if isinstance(exc, TimeoutError) else (exc.strerror or str(exc))
        raise UsageError(f"--ray-address {address}: cannot reach a Ray cluster ({reason} after at most {timeout:g} s; "
                         f"is `ray start --head` running there? wait longer with {CONNECT_TIMEOUT_ENV}=SECONDS)") from None


class RayEngine(UnitEngine):
    """Runs model work over ``options.concurrency`` actors, each holding one copy of the work's owner."""

    name = "ray"
    distributed = True

    def __init__(self, options: EngineOptions) -> None:
        super().__init__()
        options.check()
        self.options = options
        if options.address:
            check_reachable(options.address)  # before Ray, which retries an unreachable cluster for minutes
        quiet_ray()
        import ray

        self._started = False
        if not ray.is_initialized():
            quiet: dict[str, Any] = {"include_dashboard": False, "log_to_driver": verbose(), "logging_level": "INFO" if verbose() else "ERROR"}
            try:
                with native_stderr_silenced():
                    if options.address:
                        ray.init(address=options.address, **quiet)
                    else:
                        ray.init(**quiet)
                self._started = not options.address
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise UsageError(f"--ray-address {options.address}: cannot reach a Ray cluster ({exc})") from None
        resources = ray.cluster_resources()
        if options.num_gpus and resources.get("GPU", 0) < options.num_gpus:
            raise UsageError(f"the Ray cluster has {resources.get('GPU', 0):g} GPUs; {options.num_gpus:g} per actor were asked for")
        if resources.get("CPU", 0) < options.num_cpus:
            raise UsageError(f"the Ray cluster has {resources.get('CPU', 0):g} CPUs; {options.num_cpus:g} per actor were asked for")
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False
        quiet_ray()  # again: importing ray.data set up its own loggers
        self.resources = {k: float(v) for k, v in resources.items() if k in ("CPU", "GPU", "memory")}
        self.ray_version = ray.__version__

    def describe(self) -> dict[str, Any]:
        o = self.options
        return {"name": "ray", "ray_version": self.ray_version, "address": o.address or "local instance", "cluster": self.resources,
                "concurrency": o.concurrency, "chunk_batches": o.chunk_batches, "num_cpus": o.num_cpus, "num_gpus": o.num_gpus}

    def compute(self, work: Work, units: list[list[int]], todo: list[int]) -> Iterator[tuple[int, np.ndarray]]:
        """Every unit in ``todo`` as one Ray Data row, run by an actor holding a copy of the work's owner."""
        import ray

        rows = [{"unit": n, "args": json.dumps(unit_args(work, units[n]), ensure_ascii=False, default=_plain, allow_nan=False)} for n in todo]
        dataset = ray.data.from_items(rows, override_num_blocks=len(rows))
        system_ref = ray.put(work.owner)  # one copy for every actor
        # Ray Data's actor pools restart a dead actor and retry its unit without limit (max_restarts=-1,
        # max_task_retries=-1 are its defaults; tests/pipelines/test_ray_engine.py kills one)
        done = dataset.map_batches(
            UnitActor, fn_constructor_args=(system_ref, work.method, dict(work.keywords)), batch_size=1, batch_format="numpy",
            compute=ray.data.ActorPoolStrategy(size=self.options.concurrency), num_cpus=self.options.num_cpus,
            num_gpus=self.options.num_gpus or None, runtime_env=actor_environment(),
        )
        for row in done.iter_rows():
            yield int(row["unit"]), from_bytes(row["result"])

    def close(self) -> None:
        if self._started:
            import ray

            ray.shutdown()


def actor_environment() -> dict[str, Any] | None:
    """The driver's ``EVALKIT_CACHE`` for the actors (their model caches, e.g. LLM answers, in the same place;
    on a multi-machine cluster point it at a shared file system)."""
    cache = os.environ.get("EVALKIT_CACHE")
    return {"env_vars": {"EVALKIT_CACHE": str(Path(cache).resolve())}} if cache else None


def _plain(value: Any) -> Any:
    """JSON for numpy scalars in work columns."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"cannot send {type(value).__name__} to a Ray actor")
