"""Running a pipeline: its systems built from a checked config, fitted and run stage by stage.

Each stage call receives the execution context (:mod:`evalkit.pipelines.engine`):
the pipeline hands its engine to every retriever, reranker and labeler it
runs, and to every fit.
"""
from __future__ import annotations

import contextlib
import time
from typing import Callable, Iterator, Mapping, cast

from evalkit.data.corpus import Corpus, Queries
from evalkit.data import Qrels, Run
from evalkit.core.errors import UsageError
from evalkit.pipelines.config import PipelineConfig, StageSpec, _where
from evalkit.pipelines.engine import LOCAL, Engine
from evalkit.pipelines.stages import Labeler, Reranker, Retriever, System, call_stage

# ----------------------------------------------------------------- running
Progress = Callable[[str], None]


class Pipeline:
    """A checked config with its systems built (no model is loaded until a stage runs)."""

    def __init__(self, config: PipelineConfig, format_options: Mapping[str, str] | None = None) -> None:
        """``format_options`` names, per run-file stage, the option that forces its format (for errors;
        default ``format = ...`` in that stage)."""
        self.timings: dict[str, float] = {}  # wall seconds per step, in order ("fit dense", "run ce", ...)
        self.cpu_timings: dict[str, float] = {}  # CPU seconds (user + system) per step: this process, its children, the engine's workers
        from evalkit.fusion import get_method
        from evalkit.pipelines.registry import check_option_values, get_system_class, split_stage_depth

        self.config = config
        self.systems: dict[str, System] = {}
        self.file_runs: dict[str, Run] = {}  # run-file stages, read once
        for spec in config.stages:
            if spec.is_fusion:
                get_method(spec.method)
                continue
            if spec.is_file:  # read now: a bad run file fails before any corpus is read or model trained
                from evalkit.io.reading import read_run

                option = (format_options or {}).get(spec.name, f"format = ... in stage {spec.name!r}")
                self.file_runs[spec.name] = read_run(str(spec.run), spec.format, option=option)
                continue
            assert spec.system is not None  # parse_config: a stage that is neither a fusion nor a run file names its system
            cls = get_system_class(spec.system)  # unknown system -> UsageError
            label = f"{_where(config.path)}stage {spec.name!r}"
            check_option_values(cls, spec.options, label)
            spec.options, depth = split_stage_depth(cls, spec.options, label)  # options = { depth = 5 }: the stage's depth
            if depth is not None:
                spec.depth = depth
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

    def _stage(self, spec: StageSpec, corpus: Corpus, queries: Queries, runs: Mapping[str, Run], engine: Engine) -> Run:
        from evalkit.fusion import fuse

        if spec.is_file:
            return self.file_runs[spec.name].restrict(queries.ids).with_name(spec.name)
        if spec.is_fusion:
            return fuse([runs[n] for n in spec.fuse or []], spec.method, spec.norm, weights=spec.weights,
                        params=spec.params or None, depth=spec.depth, name=spec.name)
        system = self.systems[spec.name]
        # the registry admits only stage classes: a system's kind says which of Retriever, Reranker, Labeler it is
        if system.kind == "retriever":
            run = call_stage(cast(Retriever, system).retrieve, corpus, queries, k=int(spec.k), engine=engine)
        else:  # a stage without depth leaves the system's own default (its depth option)
            depth = {"depth": int(spec.depth)} if spec.depth else {}
            call = cast(Reranker, system).rerank if system.kind == "reranker" else cast(Labeler, system).label
            source = self._input_of(spec)
            assert source is not None  # __init__ refused a reranker or labeler without an input stage
            run = call_stage(call, corpus, queries, runs[source], engine=engine, **depth)
        return run.with_name(spec.name)

    @contextlib.contextmanager
    def _timed(self, step: str, engine: Engine) -> Iterator[None]:
        """Wall seconds of ``step`` into :attr:`timings`, CPU seconds into :attr:`cpu_timings` (fit, runs on the
        training queries, runs)."""
        start, cpu = time.perf_counter(), cpu_seconds(engine)
        try:
            yield
        finally:
            self.timings[step] = round(self.timings.get(step, 0.0) + time.perf_counter() - start, 3)
            self.cpu_timings[step] = round(self.cpu_timings.get(step, 0.0) + cpu_seconds(engine) - cpu, 3)

    def fit(self, corpus: Corpus, queries: Queries, qrels: Qrels, progress: Progress | None = None, *, engine: Engine = LOCAL) -> None:
        """Fit every learnable stage in order on the training queries (earlier stages run on them first); model work on ``engine``."""
        from evalkit.pipelines.seeding import seed_everything

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
                with self._timed(f"fit {spec.name}", engine):
                    call_stage(self.systems[spec.name].fit, corpus, queries, qrels, first_stage=first_stage, engine=engine)
                    if spec.save:
                        self.systems[spec.name].save(spec.save)
            if spec.name in needed:
                if progress:
                    progress(f"running {spec.name} on the training queries")
                with self._timed(f"{spec.name} on the training queries", engine):
                    runs[spec.name] = self._stage(spec, corpus, queries, runs, engine)

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

    def run(self, corpus: Corpus, queries: Queries, progress: Progress | None = None, *, engine: Engine = LOCAL) -> dict[str, Run]:
        """Every stage's run, in order (each stage call handed ``engine``); the result is ``runs[config.output_stage]``."""
        from evalkit.pipelines.seeding import seed_everything

        runs: dict[str, Run] = {}
        for spec in self.config.stages:
            if progress:
                what = f"fuse {', '.join(spec.fuse or [])} ({spec.method})" if spec.is_fusion else spec.system or f"run file {spec.run}"
                progress(f"stage {spec.name}: {what}")
            seed_everything(self.config.seed)
            with self._timed(f"run {spec.name}", engine):
                runs[spec.name] = self._stage(spec, corpus, queries, runs, engine)
            if spec.is_file and progress and len(runs[spec.name].query_ids) < len(queries):
                progress(f"stage {spec.name}: {len(queries) - len(runs[spec.name].query_ids)} of {len(queries)} queries are not in {spec.run}")
        return runs


def cpu_seconds(engine: Engine) -> float:
    """CPU seconds (user + system) so far of this process, its finished children and ``engine``'s worker processes."""
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime + engine.stats.worker_cpu_seconds


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
