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

import contextlib
import dataclasses
import math
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from evalkit.corpus import Corpus, Queries
from evalkit.data import Qrels, Run
from evalkit.errors import UsageError
from evalkit.stages import System

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
    engine: Any = None  # the config's `engine` value (name or table), parsed by evalkit.engine.parse_engine

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
MAX_SEED = 2**32 - 1
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
    from evalkit.engine import parse_engine

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
    from evalkit.textio import read_input_bytes

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


def shipped_configs() -> dict[str, Path]:
    """``{name: path}`` of the pipeline configs that ship in ``systems/configs``."""
    import evalkit.systems

    folder = Path(evalkit.systems.__file__).parent / "configs"
    return {p.stem: p for p in sorted(folder.glob("*.toml"))}


def single_system_config(system: str, options: Mapping[str, Any], k: int = DEFAULT_K, seed: int = 42) -> PipelineConfig:
    """A one-stage pipeline running one registered retriever."""
    return parse_config({"name": system, "seed": seed, "stages": [{"name": system, "system": system, "options": dict(options), "k": k}]})


# ----------------------------------------------------------------- running
Progress = Callable[[str], None]


class Pipeline:
    """A checked config with its systems built (no model is loaded until a stage runs)."""

    def __init__(self, config: PipelineConfig, format_options: Mapping[str, str] | None = None, engine: Any = None) -> None:
        """``format_options`` names, per run-file stage, the option that forces its format (for errors;
        default ``format = ...`` in that stage); ``engine`` (:mod:`evalkit.engine`) runs the rerankers' model calls."""
        self.engine = engine
        self.timings: dict[str, float] = {}  # wall seconds per step, in order ("fit dense", "run ce", ...)
        from evalkit.fusion import get_method
        from evalkit.registry import get_system_class

        self.config = config
        self.systems: dict[str, System] = {}
        self.file_runs: dict[str, Run] = {}  # run-file stages, read once
        for spec in config.stages:
            if spec.is_fusion:
                get_method(spec.method)
                continue
            if spec.is_file:  # read now: a bad run file fails before any corpus is read or model trained
                from evalkit.formats import read_run

                option = (format_options or {}).get(spec.name, f"format = ... in stage {spec.name!r}")
                self.file_runs[spec.name] = read_run(str(spec.run), spec.format, option=option)
                continue
            cls = get_system_class(spec.system)  # unknown system -> UsageError
            if spec.load:
                self.systems[spec.name] = cls.load(spec.load)
            else:
                try:
                    self.systems[spec.name] = cls(**spec.options)
                except TypeError as exc:
                    raise UsageError(f"{_where(config.path)}stage {spec.name!r}: bad options ({exc})") from None
            if cls.kind != "retriever" and not self._input_of(spec):
                raise UsageError(f"{_where(config.path)}stage {spec.name!r}: a {cls.kind} needs an input stage before it")

    def _input_of(self, spec: StageSpec) -> str | None:
        if spec.input:
            return spec.input
        index = self.config.stages.index(spec)
        return self.config.stages[index - 1].name if index else None

    @property
    def learnable_stages(self) -> list[StageSpec]:
        return [s for s in self.config.stages if s.name in self.systems and self.systems[s.name].learnable and not s.load and s.fit]

    def _stage(self, spec: StageSpec, corpus: Corpus, queries: Queries, runs: Mapping[str, Run]) -> Run:
        from evalkit.fusion import fuse

        if spec.is_file:
            return self.file_runs[spec.name].restrict(queries.ids).with_name(spec.name)
        if spec.is_fusion:
            return fuse([runs[n] for n in spec.fuse or []], spec.method, spec.norm, weights=spec.weights,
                        params=spec.params or None, depth=spec.depth, name=spec.name)
        system = self.systems[spec.name]
        distributed = self.engine if self.engine is not None and self.engine.name != "local" else None
        for part in [system, *getattr(system, "engine_parts", lambda: [])()]:
            part.engine = distributed  # every model call of the stage goes through it (evalkit.engine)
        if system.kind == "retriever":
            run = system.retrieve(corpus, queries, k=int(spec.k))
        else:  # a stage without depth leaves the system's own default (its depth option)
            depth = {"depth": int(spec.depth)} if spec.depth else {}
            call = system.rerank if system.kind == "reranker" else system.label
            run = call(corpus, queries, runs[self._input_of(spec)], **depth)
        return run.with_name(spec.name)

    @contextlib.contextmanager
    def _timed(self, step: str) -> Iterator[None]:
        """Wall seconds of ``step`` into :attr:`timings` (fit, runs on the training queries, runs)."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.timings[step] = round(self.timings.get(step, 0.0) + time.perf_counter() - start, 3)

    def fit(self, corpus: Corpus, queries: Queries, qrels: Qrels, progress: Progress | None = None) -> None:
        """Fit every learnable stage in order on the training queries (earlier stages run on them first)."""
        from evalkit.seeding import seed_everything

        learnable = {s.name for s in self.learnable_stages}
        if not learnable:
            return
        last = max(i for i, s in enumerate(self.config.stages) if s.name in learnable)
        needed = self._needed_for_fitting(learnable)
        runs: dict[str, Run] = {}
        for spec in self.config.stages[: last + 1]:
            if spec.name in learnable:
                seed_everything(self.config.seed)
                if progress:
                    progress(f"fitting {spec.name} ({spec.system}) on {len(queries)} training queries")
                source = self._fit_input_of(spec)
                first_stage = runs.get(source) if source and self.systems[spec.name].kind != "retriever" else None
                if first_stage is not None and len(first_stage.query_ids) == 0:
                    first_stage = None  # a run file without the training queries: the system mines its own candidates
                with self._timed(f"fit {spec.name}"):
                    self.systems[spec.name].fit(corpus, queries, qrels, first_stage=first_stage)
                    if spec.save:
                        self.systems[spec.name].save(spec.save)
            if spec.name in needed:
                if progress:
                    progress(f"running {spec.name} on the training queries")
                with self._timed(f"{spec.name} on the training queries"):
                    runs[spec.name] = self._stage(spec, corpus, queries, runs)

    def _fit_input_of(self, spec: StageSpec) -> str | None:
        """The stage whose run on the training queries is ``spec``'s ``first_stage`` when fitting ("" / None: none)."""
        return spec.fit_input if spec.fit_input is not None else self._input_of(spec)

    def _needed_for_fitting(self, learnable: set[str]) -> set[str]:
        """Stages to run on the training queries: the fit inputs of learnable non-retrievers and what they are built from."""
        by_name = {s.name: s for s in self.config.stages}
        todo = [self._fit_input_of(s) for s in self.config.stages if s.name in learnable and self.systems[s.name].kind != "retriever"]
        needed: set[str] = set()
        while todo:
            name = todo.pop()
            if not name or name in needed:
                continue
            needed.add(name)
            spec = by_name[name]
            if spec.is_fusion:
                todo += list(spec.fuse or [])
            elif not spec.is_file and self.systems[spec.name].kind != "retriever":
                todo.append(self._input_of(spec))
        return needed

    def run(self, corpus: Corpus, queries: Queries, progress: Progress | None = None) -> dict[str, Run]:
        """Every stage's run, in order; the result is ``runs[config.output_stage]``."""
        from evalkit.seeding import seed_everything

        runs: dict[str, Run] = {}
        for spec in self.config.stages:
            if progress:
                what = f"fuse {', '.join(spec.fuse or [])} ({spec.method})" if spec.is_fusion else spec.system or f"run file {spec.run}"
                progress(f"stage {spec.name}: {what}")
            seed_everything(self.config.seed)
            with self._timed(f"run {spec.name}"):
                runs[spec.name] = self._stage(spec, corpus, queries, runs)
            if spec.is_file and progress and len(runs[spec.name].query_ids) < len(queries):
                progress(f"stage {spec.name}: {len(queries) - len(runs[spec.name].query_ids)} of {len(queries)} queries are not in {spec.run}")
        return runs


def judged_queries(queries: Queries, qrels: Qrels, label: str, qrels_label: str) -> Queries:
    """The queries that ``qrels`` judges (training queries, or --gold runs); refuses judged ids absent from the query file, or no overlap."""
    judged = [str(q) for q in qrels.query_ids]
    known = set(queries.ids)
    missing = [q for q in judged if q not in known]
    if len(missing) == len(judged):
        raise UsageError(f"{label}: none of the {len(judged)} query ids of {qrels_label} is in this query file (wrong file?)")
    if missing:
        raise UsageError(
            f"{label}: {len(missing)} query ids of {qrels_label} are missing from this query file (e.g. {', '.join(missing[:3])})"
        )
    return queries.subset(judged)
