"""``evalkit run`` (a pipeline or one system -> run, submission, report), ``evalkit train`` and ``evalkit systems``."""
from __future__ import annotations

from pathlib import Path

import click

from evalkit.io.transactions import announce

from evalkit.cli.common import FORCE_OPTION, SEED, FiniteFloat

CORPUS_OPTIONS = [
    click.option("--corpus", required=True, type=click.Path(dir_okay=False),
                 help="Documents: BEIR JSONL, CSV/TSV/Parquet, id<TAB>text, TREC SGML, SMART, pickle."),
    click.option("--corpus-format", default="auto", show_default=True, help="Force the collection format (see `evalkit systems`)."),
    click.option("--queries-format", default="auto", show_default=True, help="Force the query file format."),
    click.option("--map", "mapping", multiple=True, metavar="FIELD=COLUMN", help="Column mapping for tables, e.g. --map text=abstract --map id=cord_uid."),
    click.option("--trust-pickle", is_flag=True, help="Allow reading a pickled collection (unpickling runs code: trusted files only)."),
]


def corpus_options(func):
    for option in reversed(CORPUS_OPTIONS):
        func = option(func)
    return func


def _echo(message: str) -> None:
    from evalkit.core.safetext import visible

    click.echo(f"[evalkit] {visible(message)}", err=True)


def _announce(message: str) -> None:
    """``message`` as :func:`_echo` prints it, once the outputs are committed."""
    from evalkit.core.safetext import visible

    announce(f"[evalkit] {visible(message)}")


@click.command("run")
@click.argument("config")
@corpus_options
@click.option("--queries", required=True, type=click.Path(dir_okay=False), help="Queries: BEIR JSONL, table, id<TAB>text, SMART.")
@click.option("--input", "input_run", type=click.Path(dir_okay=False), default=None,
              help="A run file for the reranker or labeler CONFIG to re-score (any run format evalkit reads).")
@click.option("--input-format", default="auto", show_default=True, help="Force the --input run format (see `evalkit formats`).")
@click.option("--train-queries", type=click.Path(dir_okay=False), default=None, help="Training queries (fit learnable stages).")
@click.option("--train-qrels", type=click.Path(dir_okay=False), default=None, help="Training qrels (TREC or BEIR).")
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False), help="The TREC run to write (OUT.manifest.json beside it).")
@click.option("--set", "set_pairs", multiple=True, metavar="KEY=VALUE", help="System option (STAGE.KEY=VALUE with a config file).")
@click.option("--k", type=int, default=None, help="Documents per query of retriever stages (default 1000).")
@click.option("--depth", type=click.IntRange(1, 10_000_000), default=None,
              help="Documents per query a reranker re-scores or a labeler labels (every such stage; default: the stage's, else 100 / 10).")
@click.option("--seed", type=SEED, default=None, help="Seed, 0 to 2**32-1 (default: the config's, 42).")
@click.option("--gold", type=click.Path(dir_okay=False), default=None, help="Run only the queries this gold judges, then score the result.")
@click.option("--submit", "submit_task", default=None, metavar="TASK", help="Also write the official submission of TASK (validated).")
@click.option("--submission", "submission_path", default=None, type=click.Path(dir_okay=False), help="Submission file (default submissions/OUT-STEM.zip).")
@click.option("--report", "report_path", default=None, type=click.Path(dir_okay=False), help="Also write a Markdown report of every stage (needs --gold).")
@click.option("--compare-timings", "timings_baseline", default=None, type=click.Path(dir_okay=False),
              help="The manifest of an earlier run (OUT.manifest.json): the report's time per stage shows both, with ratios.")
@click.option("--engine", "engine_name", type=click.Choice(["local", "ray"]), default=None,
              help="Where rerankers' model calls run (default: the config's engine, else local). ray: pip install 'evalkit[ray]'.")
@click.option("--workers", type=click.IntRange(min=0), default=None,
              help="Local engine: worker processes for large model work (default 0 = one per usable core; 1 = this process only).")
@click.option("--threads", type=click.IntRange(min=0), default=None,
              help="Local engine: math threads per worker process (default 0 = the usable cores shared among the workers).")
@click.option("--ray-address", default=None, help="Ray cluster to join (auto: the one started with `ray start --head`); default: a local Ray instance.")
@click.option("--ray-actors", type=click.IntRange(min=1), default=None, help="Actors (one loaded model each) per stage (default 2).")
@click.option("--ray-chunk-batches", type=click.IntRange(min=1), default=None, help="Model batches per Ray work unit (default 8).")
@click.option("--ray-num-cpus", type=FiniteFloat(minimum=0), default=None, help="CPUs per actor (default 1).")
@click.option("--ray-num-gpus", type=FiniteFloat(minimum=0), default=None, help="GPUs per actor (default 0).")
@FORCE_OPTION
def run_command(config, corpus, corpus_format, queries_format, mapping, trust_pickle, queries, input_run, input_format, train_queries,
                train_qrels, out_path,
                set_pairs, k, depth, seed, gold, submit_task, submission_path, report_path, timings_baseline, engine_name, workers, threads, ray_address,
                ray_actors,
                ray_chunk_batches, ray_num_cpus, ray_num_gpus, force):
    """Run CONFIG (a TOML pipeline, a shipped config, or a system name) on a corpus and queries.

    Learnable stages are fitted first when --train-queries/--train-qrels are
    given. A reranker or labeler given by name re-scores the run file --input.
    Writes the run (TREC), a manifest, optionally the submission and a
    report (every stage's run goes next to OUT as OUT-STEM.STAGE.trec).
    """
    from evalkit.core.errors import UsageError
    from evalkit.pipelines.config import engine_choice
    from evalkit.pipelines.run import check_training_pair, load_pipeline, run_pipeline
    from evalkit.api.report import report_figures
    from evalkit.io.transactions import check_outputs, sidecar_of

    check_training_pair(train_queries, train_qrels)
    if report_path and not gold:
        raise UsageError("--report needs --gold")
    if timings_baseline and not report_path:
        raise UsageError("--compare-timings goes with --report")
    baseline_timings = None
    if timings_baseline:
        from evalkit.report.timings import StageTimings

        baseline_timings = StageTimings.from_manifest(timings_baseline)
    # unknown systems, options and unreadable run files fail here, before the corpus is read
    pipeline = load_pipeline(config, set_options=set_pairs, k=k, depth=depth, seed=seed, input_run=input_run, input_format=input_format)
    pipeline_config = pipeline.config
    engine_options = {"workers": workers, "threads": threads, "address": ray_address, "concurrency": ray_actors,
                      "chunk_batches": ray_chunk_batches, "num_cpus": ray_num_cpus, "num_gpus": ray_num_gpus}
    engine_choice(pipeline_config, engine_name, **engine_options)  # a bad combination is refused before any work
    out = Path(out_path)
    stem = out.name.rsplit(".", 1)[0]
    stage_paths = {s.name: out.with_name(f"{stem}.{s.name}.trec") for s in pipeline_config.stages} if report_path else {}
    submission_target = None
    if submit_task:
        from evalkit.tasks import get_task
        from evalkit.tasks.submissions import format_for_task

        submit_task = get_task(submit_task).name
        format_for_task(submit_task)
        submission_target = Path(submission_path or Path("submissions") / f"{stem}.zip")
    check_outputs(
        [*(report_figures(report_path) if report_path else []), out, sidecar_of(out), out.with_name(out.name + ".labels.tsv"), *stage_paths.values(),
         submission_target, submission_target and sidecar_of(submission_target), report_path],
        force, inputs=[corpus, queries, gold, train_queries, train_qrels, input_run, timings_baseline, pipeline_config.path,
                       *(spec.run for spec in pipeline_config.stages if spec.run)],
    )
    the_gold = None
    if gold:
        from evalkit.io.reading import read_qrels

        the_gold = read_qrels(gold)
    result = run_pipeline(
        pipeline, corpus, queries, gold=the_gold, train_queries=train_queries, train_qrels=train_qrels, corpus_format=corpus_format,
        queries_format=queries_format, mapping=mapping, trust_pickle=trust_pickle, engine=engine_name,
        engine_options=engine_options, progress=_echo,
    )
    if submission_target:  # first: an invalid submission is refused before anything is written
        from evalkit.tasks.submissions import write_submission

        written = write_submission(result.run, submit_task, submission_target, gold, force, command="run")
        _announce(f"wrote {written} ({submit_task} submission, validated)")
    _echo("time per stage (wall / CPU): " + ", ".join(f"{step} {seconds:.1f} s / {result.cpu_timings.get(step, 0.0):.1f} s"
                                                       for step, seconds in result.timings.items()))
    for path in result.save(out, force=force, task=submit_task):
        _announce(f"wrote {path}" + (f" ({len(result.run.query_ids)} queries)" if path == out else ""))
    stage_runs = [_write_stage(result.stages[name], f"{stem}.{name}", path, force) for name, path in stage_paths.items()]
    if the_gold is not None:
        _score_and_report(result, the_gold, stage_runs, report_path, force, baseline_timings)


def _write_stage(run, name: str, path: Path, force: bool):
    """Write one stage's run as TREC to ``path``; the run in memory, named and sourced as that file (for the report's manifest)."""
    import hashlib
    from dataclasses import replace

    from evalkit.data import Source
    from evalkit.io.formats.trec_run import format_trec_run
    from evalkit.io.transactions import atomic_write

    text = format_trec_run(run, tag=run.name)
    atomic_write(path, text, force=force)
    return replace(run.with_name(name), source=Source(str(path), "trec-run", hashlib.sha256(text.encode("utf-8")).hexdigest()))


def _score_and_report(result, gold, stage_runs: list, report_path: str | None, force: bool, baseline_timings=None) -> None:
    """Score the pipeline's run in memory, then report on every stage's run (as held in memory, named as their files)."""
    from evalkit.report import text as render
    from evalkit.api import score as score_run
    from evalkit.cli.common import warn

    scored = score_run(result.run, gold)
    for message in scored.warnings:
        warn(message)
    click.echo(render.as_table(scored.task_score))  # RENDERERS["table"]
    if report_path:
        written = result.write_report(gold, report_path, stage_runs=stage_runs, force=force, baseline_timings=baseline_timings)
        announce(f"wrote {report_path} ({', '.join(p.name for p in written.figures)})")


@click.command("train")
@click.argument("system")
@corpus_options
@click.option("--train-queries", required=True, type=click.Path(dir_okay=False), help="Training queries.")
@click.option("--train-qrels", required=True, type=click.Path(dir_okay=False), help="Training qrels (TREC or BEIR).")
@click.option("--first-stage", type=click.Path(dir_okay=False), default=None, help="A run on the training queries (negatives for rerankers).")
@click.option("--set", "set_pairs", multiple=True, metavar="KEY=VALUE", help="System option.")
@click.option("--seed", type=SEED, default=42, show_default=True, help="Seed of the training run, 0 to 2**32-1.")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False), help="Folder to save the fitted system in.")
@FORCE_OPTION
def train(system, corpus, corpus_format, queries_format, mapping, trust_pickle, train_queries, train_qrels, first_stage, set_pairs, seed, out_dir, force):
    """Fit SYSTEM on training queries and qrels and save it to a folder (load it with load = FOLDER)."""
    from evalkit.pipelines.run import train_system

    folder = train_system(system, corpus, train_queries, train_qrels, out_dir, set_options=set_pairs, first_stage=first_stage, seed=seed,
                          force=force, corpus_format=corpus_format, queries_format=queries_format, mapping=mapping,
                          trust_pickle=trust_pickle, progress=_echo)
    _echo(f"saved {system} to {folder}")


@click.command("systems")
def systems():
    """List the registered systems with their options, and the shipped pipeline configs."""
    from evalkit.core.errors import UsageError
    from evalkit.pipelines.config import shipped_configs
    from evalkit.pipelines.registry import describe_options, distributed_work, get_system_class, system_names

    for name in system_names():
        try:
            cls = get_system_class(name)
        except UsageError as exc:
            click.echo(f"{name}  (unavailable: {exc.one_line()})\n")
            continue
        learn = ", trainable" if cls.learnable else ""
        click.echo(f"{name}  ({cls.kind}{learn}) {cls.description}")
        click.echo(f"    on --engine ray: {distributed_work(cls)}")
        for option, type_name, default, help_text in describe_options(cls):
            click.echo(f"    {option} ({type_name}, default {default!r}): {help_text}")
        click.echo("")
    configs = shipped_configs()
    if configs:
        click.echo("shipped pipeline configs: " + ", ".join(configs))
    from evalkit.io.formats.collections import format_names

    click.echo("collection and query formats: " + ", ".join(format_names()))
