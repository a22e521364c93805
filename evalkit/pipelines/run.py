"""Running a pipeline as a Python API: ``evalkit.run_pipeline(config, corpus, queries, ...)``.

``config`` is a TOML pipeline file, a shipped config name (``evalkit
systems`` lists them) or one registered system with its options::

    import evalkit
    result = evalkit.run_pipeline("bm25", "corpus.jsonl", "queries.jsonl", set_options=["analyzer=stem"], gold="qrels.txt")
    evalkit.score(result.run, "qrels.txt").official
    result.save("runs/bm25.trec")          # the TREC run and its manifest

``evalkit run`` is this plus the files it writes. :func:`load_pipeline`
checks the config (systems, options, run-file stages) without reading the
corpus, so a caller can refuse bad input before any long work.
"""
from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from evalkit.core.errors import UsageError

if TYPE_CHECKING:  # pragma: no cover
    from evalkit.data.corpus import Corpus, Queries
    from evalkit.data import Qrels, Run
    from evalkit.pipelines.runner import Pipeline
    from evalkit.pipelines.config import PipelineConfig
    from evalkit.io.reading import QrelsLike
    from evalkit.pipelines.engine import Engine, EngineOptions
    from evalkit.report.timings import StageTimings
    from evalkit.api.report import ReportResult

Progress = Callable[[str], None]
VERSIONED = ("torch", "transformers", "sentence-transformers", "rank-bm25", "PyStemmer", "scipy", "numpy")


def versions() -> dict[str, str]:
    """Installed versions of the libraries a run's result depends on (for the manifest)."""
    import importlib.metadata as md

    out = {}
    for package in VERSIONED:
        try:
            out[package] = md.version(package)
        except md.PackageNotFoundError:
            continue
    return out


def check_training_pair(train_queries: object, train_qrels: object) -> None:
    """Training queries and training qrels come together or not at all."""
    if bool(train_queries) != bool(train_qrels):
        raise UsageError("give both --train-queries and --train-qrels, or neither")


def build_config(config: str, set_options: Sequence[str] = (), k: int | None = None, seed: int | None = None,
                 input_run: str | None = None, input_format: str = "auto", depth: int | None = None) -> "PipelineConfig":
    """CONFIG as a TOML file, a shipped config name, or one registered system with ``KEY=VALUE`` options
    (a reranker or labeler then re-scores ``input_run``); with a config, options are ``STAGE.KEY=VALUE``.
    ``k``: documents per query of every retriever; ``depth``: documents re-scored or labelled by every reranker and labeler."""
    from evalkit.pipelines.config import load_config, parse_config, shipped_configs, single_system_config
    from evalkit.pipelines.registry import get_system_class, parse_set_options, split_stage_depth, system_names

    if k is not None and k <= 0:
        raise UsageError(f"--k must be positive (got {k})")
    if depth is not None and not 0 < depth <= 10_000_000:
        raise UsageError(f"--depth must be a whole number from 1 to 10,000,000 (got {depth})")
    if config in system_names() and not Path(config).exists():
        cls = get_system_class(config)
        options = parse_set_options(cls, set_options)
        if input_run and cls.kind == "retriever":
            raise UsageError(f"--input: {config} is a retriever; --input feeds a reranker or labeler")
        if depth is not None and cls.kind == "retriever":
            raise UsageError(f"--depth: {config} is a retriever (its documents per query are --k); --depth is for rerankers and labelers")
        if input_run:
            options, stage_depth = split_stage_depth(cls, options, "--set")
            stage: dict[str, Any] = {"name": config, "system": config, "options": options}
            if depth is not None or stage_depth is not None:
                stage["depth"] = depth if depth is not None else stage_depth
            stages = [{"name": "input", "run": input_run, "format": input_format}, stage]
            pipeline_config = parse_config({"name": config, "stages": stages})
        else:
            pipeline_config = single_system_config(config, options, k or 1000)
    elif input_run:
        raise UsageError("--input goes with one reranker or labeler; in a config file, write a stage with run = FILE")
    elif Path(config).exists() or config in shipped_configs():
        pipeline_config = load_config(config)
        for pair in set_options:
            stage_key, sep, value = pair.partition("=")
            stage_name, dot, key = stage_key.partition(".")
            spec = next((s for s in pipeline_config.stages if s.name == stage_name), None)
            if not sep or not dot or spec is None or spec.system is None:
                raise UsageError(f"--set {pair!r}: with a config write STAGE.key=value (system stages: "
                                 f"{', '.join(s.name for s in pipeline_config.stages if s.system)})")
            system = get_system_class(spec.system)
            options, stage_depth = split_stage_depth(system, parse_set_options(system, [f"{key}={value}"]), f"--set {pair}")
            spec.options.update(options)
            if stage_depth is not None:
                spec.depth = stage_depth
        for spec in pipeline_config.stages:
            kind = get_system_class(spec.system).kind if spec.system else None
            if k is not None and kind == "retriever":
                spec.k = k
            if depth is not None and kind in ("reranker", "labeler"):
                spec.depth = depth
    else:
        raise UsageError(f"{config}: no such config file, shipped config ({', '.join(shipped_configs())}) "
                         f"or system ({', '.join(system_names())})")
    if seed is not None:
        pipeline_config.seed = seed
    return pipeline_config


def load_pipeline(config: "str | PipelineConfig", *, set_options: Sequence[str] = (), k: int | None = None, seed: int | None = None,
                  input_run: str | None = None, input_format: str = "auto", depth: int | None = None) -> "Pipeline":
    """The checked pipeline: unknown systems, bad options and unreadable run files fail here, before any corpus is read."""
    from evalkit.pipelines.runner import Pipeline
    from evalkit.pipelines.config import PipelineConfig

    the_config = config if isinstance(config, PipelineConfig) else build_config(config, set_options, k, seed, input_run, input_format, depth)
    return Pipeline(the_config, {"input": "--input-format"} if input_run else None)


def read_inputs(corpus: str, queries: str, *, corpus_format: str = "auto", queries_format: str = "auto", mapping: Sequence[str] = (),
                trust_pickle: bool = False, progress: Progress | None = None) -> "tuple[Corpus, Queries]":
    """The corpus and the queries (``mapping``: ``FIELD=COLUMN`` for tables; ``text=`` applies to the corpus only)."""
    from evalkit.io.formats.collections import read_corpus, read_queries

    the_corpus = read_corpus(corpus, corpus_format, list(mapping), trust_pickle=trust_pickle)
    the_queries = read_queries(queries, queries_format, [m for m in mapping if not m.startswith("text=")] or None)
    if progress:
        assert the_corpus.source is not None  # read_corpus records the file it read
        progress(f"corpus {corpus}: {len(the_corpus)} documents ({the_corpus.source.format}); queries {queries}: {len(the_queries)}")
    return the_corpus, the_queries


def read_training(train_queries: str, train_qrels: str, corpus: "Corpus", queries_format: str = "auto", mapping: Sequence[str] = (),
                  progress: Progress | None = None) -> "tuple[Queries, Qrels]":
    """Training queries restricted to those the qrels judge, the judged documents checked against the corpus."""
    from evalkit.data.corpus import check_judged_docs
    from evalkit.io.reading import read_qrels
    from evalkit.io.formats.collections import read_queries
    from evalkit.pipelines.runner import judged_queries

    qrels = read_qrels(train_qrels)
    queries = judged_queries(read_queries(train_queries, queries_format, None), qrels, str(train_queries), str(train_qrels))
    check_judged_docs(corpus, qrels, str(train_qrels))
    if progress:
        progress(f"training: {len(queries)} queries, {qrels.n_rows} judgments from {train_qrels}")
    return queries, qrels


def restrict_to_gold(queries: "Queries", gold: "Qrels", progress: Progress | None = None) -> "Queries":
    """Keep the queries the gold judges (BEIR style); refuse judged ids missing from the query file."""
    from evalkit.pipelines.runner import judged_queries

    gold_label = gold.source.path if gold.source else "the gold"
    kept = judged_queries(queries, gold, str(queries.source.path if queries.source else "queries"), str(gold_label))
    if len(kept) < len(queries) and progress:
        progress(f"running the {len(kept)} of {len(queries)} queries judged in {gold_label}")
    return kept


@dataclass(frozen=True, eq=False)
class PipelineResult:
    """A pipeline's output run (named after the config), every stage's run, where the time went and the manifest's parts."""

    run: "Run"
    stages: "dict[str, Run]"
    timings: dict[str, float]
    config: "PipelineConfig"
    inputs: list[dict[str, Any]] = field(repr=False)
    engine: dict[str, Any] = field(repr=False)
    cpu_timings: dict[str, float] = field(default_factory=dict)  # CPU seconds per step (this process, children, engine workers)
    wall_seconds: float | None = None  # the whole pipeline: reading the inputs, fitting, every stage

    def manifest(self, task: str | None = None, command: str = "run") -> dict[str, Any]:
        from evalkit.io.manifest import build_manifest

        options = {"config": self.config.as_dict(), "config_file": self.config.path, "versions": versions(),
                   "engine": self.engine, "stage_seconds": self.timings, "stage_cpu_seconds": self.cpu_timings,
                   "command_seconds": self.wall_seconds}
        return build_manifest(task, self.inputs, options, seed=self.config.seed, command=command)

    def write_report(self, gold: "QrelsLike", out: str | os.PathLike, *, stage_runs: "Sequence[Run] | None" = None,
                     force: bool = False, baseline_timings: "StageTimings | None" = None) -> "ReportResult":
        """The Markdown report on every stage's run against ``gold`` (``stage_runs``: the stages as named and
        sourced for the report, default as held), ending with the wall and CPU seconds per step and of the whole
        pipeline (``baseline_timings``: an earlier run's, side by side)."""
        from evalkit.report.timings import StageTimings, timing_section
        from evalkit.api.report import prepare_report, save_markdown

        prepared = prepare_report(gold, list(stage_runs) if stage_runs is not None else list(self.stages.values()))
        this = StageTimings(self.timings, self.cpu_timings, self.wall_seconds, self.engine)
        return save_markdown(prepared, Path(out), force=force, appendix=timing_section(this, baseline_timings))

    def save(self, out: str | os.PathLike, *, force: bool = False, task: str | None = None, command: str = "run") -> list[Path]:
        """Write the run as TREC to ``out`` with ``OUT.manifest.json`` (and ``OUT.labels.tsv`` for a labeler's verdicts)."""
        from evalkit.io.formats.trec_run import format_trec_run, labels_tsv
        from evalkit.io.manifest import write_sidecar
        from evalkit.io.transactions import atomic_write, committed_together, sidecar_of

        target = Path(out)
        manifest = self.manifest(task, command)
        labels_path = target.with_name(target.name + ".labels.tsv") if self.run.labels is not None else None  # TREC runs have no label column
        with committed_together([target, sidecar_of(target), labels_path], force, inputs=[entry.get("path") for entry in self.inputs]):
            atomic_write(target, format_trec_run(self.run, tag=self.config.name), force=force)
            written = [target, Path(write_sidecar(target, manifest))]
            if labels_path is not None:
                atomic_write(labels_path, labels_tsv(self.run), force=force)
                written.append(labels_path)
        return written


def run_pipeline(
    config: "str | PipelineConfig | Pipeline",
    corpus: str | os.PathLike,
    queries: str | os.PathLike,
    *,
    set_options: Sequence[str] = (),
    k: int | None = None,
    depth: int | None = None,
    seed: int | None = None,
    gold: "str | os.PathLike | Qrels | None" = None,
    train_queries: str | os.PathLike | None = None,
    train_qrels: str | os.PathLike | None = None,
    corpus_format: str = "auto",
    queries_format: str = "auto",
    mapping: Sequence[str] = (),
    trust_pickle: bool = False,
    engine: "str | tuple[str, EngineOptions] | None" = None,
    engine_options: Mapping[str, Any] | None = None,
    progress: Progress | None = None,
) -> PipelineResult:
    """Fit the learnable stages on ``train_queries``/``train_qrels`` (when given), then run every stage on ``queries``.

    ``config`` may also be a :class:`~evalkit.pipelines.runner.Pipeline` from
    :func:`load_pipeline` (``set_options``, ``k``, ``depth`` and ``seed`` are then already
    applied and ignored here). ``gold`` keeps only the queries it judges. The
    engine is the config's ``engine`` (default ``local``), as on the command
    line; ``engine`` (``"local"``, ``"ray"`` or ``(name, EngineOptions)``) and
    ``engine_options`` (EngineOptions fields, e.g. ``{"concurrency": 4}``)
    override it; it is handed to every stage call and closed at the end.
    ``progress`` receives one line per step. Nothing is written: see
    :meth:`PipelineResult.save`.
    """
    from evalkit.io.reading import as_qrels
    from evalkit.io.manifest import input_entry
    from evalkit.pipelines.config import engine_choice
    from evalkit.pipelines.runner import Pipeline

    started = time.perf_counter()
    check_training_pair(train_queries, train_qrels)
    pipeline = config if isinstance(config, Pipeline) else load_pipeline(config, set_options=set_options, k=k, depth=depth, seed=seed)
    if isinstance(engine, tuple):
        engine_name, chosen_options = engine[0], engine[1]
        chosen_options = dataclasses.replace(chosen_options, **dict(engine_options or {}))
        chosen_options.check()
    else:
        engine_name, chosen_options = engine_choice(pipeline.config, engine, **dict(engine_options or {}))
    the_gold = as_qrels(gold) if gold is not None else None
    the_corpus, the_queries = read_inputs(str(corpus), str(queries), corpus_format=corpus_format, queries_format=queries_format,
                                          mapping=mapping, trust_pickle=trust_pickle, progress=progress)
    if the_gold is not None:
        the_queries = restrict_to_gold(the_queries, the_gold, progress)
    inputs = [input_entry("corpus", the_corpus.source), input_entry("queries", the_queries.source)]
    training = None
    if train_queries:
        training = read_training(str(train_queries), str(train_qrels), the_corpus, queries_format, mapping, progress)
        inputs += [input_entry("train-queries", training[0].source), input_entry("train-qrels", training[1].source)]
    the_engine = get_engine(engine_name, chosen_options)  # started last: every refusal above leaves nothing running
    try:
        if training is not None:
            tq, tqrels = training
            pipeline.fit(the_corpus, tq, tqrels, progress=progress, engine=the_engine)
        runs = pipeline.run(the_corpus, the_queries, progress=progress, engine=the_engine)
        described = the_engine.describe()
    finally:
        the_engine.close()
    inputs += [input_entry(f"run:{name}", run.source) for name, run in pipeline.file_runs.items()]
    the_config = pipeline.config
    return PipelineResult(run=runs[the_config.output_stage].with_name(the_config.name), stages=runs, timings=dict(pipeline.timings),
                          config=the_config, inputs=inputs, engine=described, cpu_timings=dict(pipeline.cpu_timings),
                          wall_seconds=round(time.perf_counter() - started, 3))


def get_engine(name: str = "local", options: "EngineOptions | None" = None) -> "Engine":
    """The engine ``name`` (``local`` or ``ray``) with ``options`` (the Ray one starts or joins Ray here)."""
    from evalkit.pipelines.config import ENGINES
    from evalkit.pipelines.engine import EngineOptions

    if name == "local":
        from evalkit.pipelines.workers import LocalEngine

        return LocalEngine(options)
    if name != "ray":
        raise UsageError(f"unknown engine {name!r} (choose {', '.join(ENGINES)})")
    try:
        import ray  # noqa: F401
    except ImportError:
        raise UsageError("the ray engine needs Ray: pip install 'evalkit-ir[ray]'") from None
    from evalkit.pipelines.ray_engine import RayEngine

    return RayEngine(options or EngineOptions())


def train_system(
    system: str,
    corpus: str | os.PathLike,
    train_queries: str | os.PathLike,
    train_qrels: str | os.PathLike,
    out: str | os.PathLike,
    *,
    set_options: Sequence[str] = (),
    first_stage: "str | os.PathLike | Run | None" = None,
    seed: int = 42,
    force: bool = False,
    corpus_format: str = "auto",
    queries_format: str = "auto",
    mapping: Sequence[str] = (),
    trust_pickle: bool = False,
    engine: "Engine | None" = None,
    progress: Progress | None = None,
) -> Path:
    """Fit the registered ``system`` (``set_options``: ``KEY=VALUE``) on the training queries and qrels and save it to
    ``out`` with a ``training.manifest.json``; a stage loads it with ``load = OUT``. ``first_stage``: a run on the
    training queries to mine negatives from. Refused before any work when ``out`` is a non-empty folder (without ``force``)
    or holds an input (even with it); the folder appears whole when the system is saved, or ``out`` stays as it was
    (:func:`evalkit.io.writing.folders.staged_folder`)."""
    from evalkit.io.formats.collections import read_corpus
    from evalkit.io.reading import as_run
    from evalkit.io.manifest import build_manifest, input_entry, write_sidecar
    from evalkit.io.writing.folders import check_folder, staged_folder
    from evalkit.pipelines.engine import LOCAL
    from evalkit.pipelines.registry import get_system_class, parse_set_options
    from evalkit.pipelines.seeding import seed_everything
    from evalkit.pipelines.stages import call_stage

    cls = get_system_class(system)
    if not cls.learnable:
        raise UsageError(f"system {system} is not trainable")
    inputs = [corpus, train_queries, train_qrels, first_stage]
    target = check_folder(out, force, inputs)  # before any work
    instance = cls(**parse_set_options(cls, set_options))
    the_corpus = read_corpus(str(corpus), corpus_format, list(mapping), trust_pickle=trust_pickle)
    queries, qrels = read_training(str(train_queries), str(train_qrels), the_corpus, queries_format, mapping, progress)
    run = as_run(first_stage) if first_stage is not None else None
    seed_everything(seed)
    call_stage(instance.fit, the_corpus, queries, qrels, first_stage=run, engine=engine or LOCAL)
    with staged_folder(target, force, inputs) as staging:  # the folder appears whole, or the target stays as it was
        folder = instance.save(staging)
        manifest = build_manifest(None, [input_entry("corpus", the_corpus.source), input_entry("train-queries", queries.source),
                                         input_entry("train-qrels", qrels.source)], {**instance.config(), "versions": versions()},
                                  seed=seed, command="train")
        write_sidecar(os.path.join(folder, "training"), manifest)
    return target


__all__ = ["PipelineResult", "build_config", "get_engine", "load_pipeline", "read_inputs", "read_training", "restrict_to_gold", "run_pipeline",
           "train_system", "versions"]
