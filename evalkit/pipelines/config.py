"""Pipelines: registered systems chained into stages, from a TOML config.

A config names stages in order; each stage's output run is named after the
stage and can feed later stages::

    name = "bm25-dense-rrf-ce"
    seed = 42

    [[stages]]
    name = "bm25"                 # a retriever: corpus + queries -> top k
    system = "bm25"
    k = 1000
    options = { analyzer = "stem" }

    [[stages]]
    name = "dense"
    system = "dense"
    k = 100

    [[stages]]
    name = "rrf"                  # a fusion of earlier stages (evalkit.fusion.fuse)
    fuse = ["bm25", "dense"]
    method = "rrf"                # any ranx method, or "alpha"
    params = { k = 60 }
    depth = 100

    [[stages]]
    name = "ce"                   # a reranker (or labeler): re-scores the top depth of its input
    system = "cross-encoder"
    input = "rrf"                 # default: the previous stage
    depth = 10
    load = "models/ce"            # optional: a fitted system saved by `evalkit train` / save
    save = "models/ce"            # optional: save after fitting

A stage can also be a run read from a file, ``run = "first-stage.trec"``
(any format ``evalkit score`` reads; ``format`` forces one), e.g. another
team's first stage for a reranker; it is restricted to the queries being run.

The run of the ``output`` stage (default: the last) is the pipeline's result.
With training queries and qrels, every learnable stage without ``load`` is
fitted in order on them; its ``first_stage`` is its input stage's run on the
training queries (``fit_input = "STAGE"`` names another earlier stage; ``fit_input = ""``
lets the system mine its own candidates), and only the stages those inputs need
run on the training queries. Unknown keys, systems, options and stage references are
refused before any work starts.
"""
from __future__ import annotations

import dataclasses
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from evalkit.core.errors import UsageError, listed, unquoted
from evalkit.core.options import MAX_SEED  # one range for every seed
from evalkit.pipelines.engine import EngineOptions

STAGE_KEYS = {"name", "system", "options", "input", "k", "depth", "fuse", "method", "norm", "weights", "params", "load", "save", "fit",
              "fit_input", "run", "format"}
TOP_KEYS = {"name", "description", "seed", "output", "stages", "reference", "engine"}
DEFAULT_K = 1000


@dataclass
class StageSpec:
    """One stage of a pipeline: a registered system, a fusion of earlier stages, or a run file."""

    name: str
    system: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    input: str | None = None
    k: int = DEFAULT_K
    depth: int | None = None
    fuse: list[str] | None = None
    method: str = "rrf"
    norm: str | None = "min-max"
    weights: list[float] | None = None
    params: dict[str, Any] = field(default_factory=dict)
    load: str | None = None
    save: str | None = None
    fit: bool = True
    fit_input: str | None = None
    run: str | None = None
    format: str = "auto"

    @property
    def is_fusion(self) -> bool:
        return self.fuse is not None

    @property
    def is_file(self) -> bool:
        return self.run is not None


@dataclass
class PipelineConfig:
    name: str
    stages: list[StageSpec]
    description: str = ""
    seed: int = 42
    output: str | None = None
    reference: str = ""
    path: str | None = None
    engine: Any = None  # the config's `engine` value (name or table), parsed by evalkit.pipelines.engine.parse_engine

    def as_dict(self) -> dict[str, Any]:
        """The config as plain data, for manifests."""
        return {
            "name": self.name, "description": self.description, "seed": self.seed, "output": self.output_stage, "engine": self.engine,
            "stages": [{k: v for k, v in dataclasses.asdict(s).items() if v not in (None, {}, [])} for s in self.stages],
        }

    @property
    def output_stage(self) -> str:
        return self.output or self.stages[-1].name


# ----------------------------------------------------------------- parsing
def _where(path: str | None) -> str:
    return f"{path}: " if path else ""


STAGE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,99}\Z")  # it names files under --report: no paths
MAX_K = 10_000_000
TEXT_KEYS = ("name", "system", "input", "method", "norm", "load", "save", "run", "format", "fit_input")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _finite(value: Any) -> bool:
    return (_is_int(value) or isinstance(value, float)) and math.isfinite(value)


def check_stage_types(raw: Mapping[str, Any], label: str) -> None:
    """Each key of a stage has its type (a wrong one is one line, never a traceback or a silent guess)."""
    for key in TEXT_KEYS:
        if key in raw and not isinstance(raw[key], str):
            raise UsageError(f"{label}: {key} = {raw[key]!r} must be a string")
    for key in ("k", "depth"):
        if key in raw and not (_is_int(raw[key]) and 0 < raw[key] <= MAX_K):
            raise UsageError(f"{label}: {key} = {raw[key]!r} must be a whole number from 1 to {MAX_K:,}")
    if "fuse" in raw and not (isinstance(raw["fuse"], list) and all(isinstance(x, str) for x in raw["fuse"])):
        raise UsageError(f"{label}: fuse = {raw['fuse']!r} must be a list of stage names, e.g. fuse = [\"bm25\", \"dense\"]")
    if "weights" in raw and not (isinstance(raw["weights"], list) and all(_finite(w) for w in raw["weights"])):
        raise UsageError(f"{label}: weights = {raw['weights']!r} must be a list of finite numbers")
    for key in ("options", "params"):
        if key in raw and not isinstance(raw[key], Mapping):
            raise UsageError(f"{label}: {key} must be a table, e.g. {key} = {{ k = 60 }}")
    for name, value in dict(raw.get("params") or {}).items():
        if isinstance(value, float) and not math.isfinite(value):
            raise UsageError(f"{label}: params.{name} = {value!r} must be finite")
    for name, value in dict(raw.get("options") or {}).items():
        if isinstance(value, float) and not math.isfinite(value):
            raise UsageError(f"{label}: options.{name} = {value!r} must be finite")
    if "fit" in raw and not isinstance(raw["fit"], bool):
        raise UsageError(f"{label}: fit = {raw['fit']!r} must be true or false")
    if "name" in raw and not STAGE_NAME.match(raw["name"]):
        raise UsageError(f"{label}: name {raw['name']!r} must be letters, digits, '.', '_', '+' or '-' "
                         "(it names output files), starting with a letter or digit")


def check_top_types(data: Mapping[str, Any], where: str) -> None:
    for key in ("name", "description", "output", "reference"):
        if key in data and not isinstance(data[key], str):
            raise UsageError(f"{where}{key} = {data[key]!r} must be a string")
    if "seed" in data and not (_is_int(data["seed"]) and 0 <= data["seed"] <= MAX_SEED):
        raise UsageError(f"{where}seed = {data['seed']!r} must be a whole number from 0 to {MAX_SEED}")


def parse_config(data: Mapping[str, Any], path: str | None = None) -> PipelineConfig:
    """Check a config's structure and references; raise one-line :class:`UsageError` s."""
    where = _where(path)
    unknown = sorted(set(data) - TOP_KEYS)
    if unknown:
        raise UsageError(f"{where}unknown key {unknown[0]!r} (known: {', '.join(sorted(TOP_KEYS))})")
    check_top_types(data, where)
    raw_stages = data.get("stages")
    if not isinstance(raw_stages, list) or not raw_stages:
        raise UsageError(f"{where}no [[stages]] given")
    stages: list[StageSpec] = []
    seen: set[str] = set()
    for number, raw in enumerate(raw_stages, start=1):
        if not isinstance(raw, Mapping):
            raise UsageError(f"{where}stage {number} is not a table")
        bad = sorted(set(raw) - STAGE_KEYS)
        if bad:
            raise UsageError(f"{where}stage {number}: unknown key {bad[0]!r} (known: {', '.join(sorted(STAGE_KEYS))})")
        check_stage_types(raw, f"{where}stage {number}")
        if sum(key in raw for key in ("system", "fuse", "run")) != 1:
            raise UsageError(f"{where}stage {number}: give exactly one of system = NAME, fuse = [STAGES] or run = FILE")
        spec = StageSpec(**{"name": "", **raw})
        spec.name = str(spec.name or spec.system or (Path(spec.run).stem if spec.run else f"fuse{number}"))
        if not STAGE_NAME.match(spec.name):
            raise UsageError(f"{where}stage {number}: name {spec.name!r} must be letters, digits, '.', '_', '+' or '-' (give name = ...)")
        if spec.name in seen:
            raise UsageError(f"{where}stage {number}: name {spec.name!r} used twice (give each stage a name)")
        for ref in ([spec.input] if spec.input else []) + list(spec.fuse or []) + ([spec.fit_input] if spec.fit_input else []):
            if ref not in seen:
                raise UsageError(f"{where}stage {spec.name!r}: input {ref!r} is not an earlier stage (earlier: {', '.join(seen) or 'none'})")
        if spec.is_fusion and len(spec.fuse or []) < 2:
            raise UsageError(f"{where}stage {spec.name!r}: fuse needs at least two earlier stages")
        if int(spec.k) <= 0 or (spec.depth is not None and int(spec.depth) <= 0):
            raise UsageError(f"{where}stage {spec.name!r}: k and depth must be positive")
        seen.add(spec.name)
        stages.append(spec)
    config = PipelineConfig(
        name=str(data.get("name") or (Path(path).stem if path else stages[-1].name)), stages=stages,
        description=str(data.get("description", "")), seed=int(data.get("seed", 42)), output=data.get("output"),
        reference=str(data.get("reference", "")), path=path, engine=data.get("engine"),
    )
    parse_engine(config.engine, where)  # checked now, before any work
    if config.output and config.output not in seen:
        raise UsageError(f"{where}output {config.output!r} is not a stage")
    return config


def load_config(path: str | os.PathLike) -> PipelineConfig:
    """Read a TOML pipeline config (a path, or the name of one shipped in ``systems/configs``)."""
    import tomllib

    path = str(path)
    target = Path(path)
    if not target.exists():
        shipped = shipped_configs().get(path)
        if shipped is None:
            raise UsageError(f"{path}: no such config file, shipped config or system (see `evalkit systems`)")
        target = shipped
    from evalkit.io.textio import read_input_bytes

    raw = read_input_bytes(target)
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{target}: not valid TOML ({exc})") from None
    except UnicodeDecodeError:
        raise UsageError(f"{target}: not UTF-8 text") from None
    except RecursionError:
        raise UsageError(f"{target}: TOML nested too deeply") from None
    return parse_config(data, str(target))


def systems_folder(name: str) -> Path:
    """``systems/NAME`` of the installed built-in systems (``configs``, ``examples``), found without importing them:
    nothing imports the systems except through their entry points."""
    import importlib.util

    spec = importlib.util.find_spec("evalkit.systems")
    if spec is None or not spec.submodule_search_locations:
        raise UsageError("the built-in systems are not installed (pip install 'evalkit-ir[systems]')")
    return Path(list(spec.submodule_search_locations)[0]) / name


def shipped_configs() -> dict[str, Path]:
    """``{name: path}`` of the pipeline configs that ship in ``systems/configs``."""
    return {p.stem: p for p in sorted(systems_folder("configs").glob("*.toml"))}


def single_system_config(system: str, options: Mapping[str, Any], k: int = DEFAULT_K, seed: int = 42) -> PipelineConfig:
    """A one-stage pipeline running one registered retriever."""
    return parse_config({"name": system, "seed": seed, "stages": [{"name": system, "system": system, "options": dict(options), "k": k}]})


# ----------------------------------------------------------------- engine
ENGINES = ("local", "ray")
ENGINE_KEYS: dict[str, type | tuple[type, ...]] = {"name": str, "address": str, "concurrency": int, "chunk_batches": int, "num_cpus": (int, float),
               "num_gpus": (int, float), "checkpoint": bool, "workers": int, "threads": int}
LOCAL_KEYS = ("workers", "threads")  # the local engine's options; the others are Ray's


def parse_engine(value: Any, where: str = "") -> tuple[str, EngineOptions]:
    """A config's ``engine = "ray"`` or ``[engine]`` table (name; local: workers, threads; ray: address,
    concurrency, chunk_batches, num_cpus, num_gpus, checkpoint) as (name, options); wrong keys or types are one line."""
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


def engine_choice(config: "PipelineConfig", name: str | None = None, **overrides: Any) -> tuple[str, EngineOptions]:
    """(engine name, options): the config's ``engine``, overridden by ``name`` and ``overrides`` (EngineOptions
    fields; ``None``: not given). The command line and :func:`evalkit.run_pipeline` both choose the engine here."""
    configured, options = parse_engine(config.engine)
    given = {k: v for k, v in overrides.items() if v is not None}
    unknown = sorted(set(given) - {f.name for f in dataclasses.fields(EngineOptions)})
    if unknown:
        raise UsageError(f"unknown engine option(s) {listed(unknown, 5, unquoted)}")
    chosen = name or configured
    if chosen not in ENGINES:
        raise UsageError(f"unknown engine {chosen!r} (choose {', '.join(ENGINES)})")
    misplaced = sorted(k for k in given if (k in LOCAL_KEYS) != (chosen == "local"))
    if misplaced:
        raise UsageError(f"engine options ({listed(misplaced, 5, unquoted)}) need the {'ray' if chosen == 'local' else 'local'} engine")
    options = dataclasses.replace(options, **given)
    options.check()
    return chosen, options
