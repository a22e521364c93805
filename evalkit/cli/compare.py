"""``evalkit compare GOLD RUN1 RUN2 [RUN...]``: paired significance tests against a baseline."""
from __future__ import annotations

import click

from evalkit.cli.common import (
    ALLOW_PARTIAL_OPTION,
    ALPHA_OPTION,
    COLUMN_OPTION,
    CORRECTION_OPTION,
    DEPTH_OPTION,
    FINITE,
    FORCE_OPTION,
    GOLD_FORMAT_OPTION,
    MISSING_OPTION,
    RELEVANCE_LEVEL_OPTION,
    RUN_FORMAT_OPTION,
    SEED_OPTION,
    TASK_OPTION,
    ZERO_METHOD_OPTION,
    pick_run,
    print_notes,
)


@click.command()
@click.argument("gold", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--baseline", "-b", default=None, help="The run the others are compared with (file, name or position; default: the first).")
@click.option("--metric", "-m", default=None, help="Per-query metric to compare (default: the task's official metric).")
@click.option("--binary", default="success@1", show_default=True, help="Binary per-query outcome for McNemar (success@k: a relevant document in the top k).")
@TASK_OPTION
@MISSING_OPTION
@ZERO_METHOD_OPTION
@click.option("--permutations", type=int, default=10_000, show_default=True, help="Random sign flips of the randomization test.")
@click.option("--bootstrap", "bootstrap_resamples", type=int, default=10_000, show_default=True, help="Bootstrap resamples for the CI.")
@click.option("--ci-method", type=click.Choice(["percentile", "basic", "bca"]), default="percentile", show_default=True, help="Bootstrap CI method.")
@click.option("--confidence", type=FINITE, default=0.95, show_default=True, help="Confidence level of the bootstrap CI.")
@SEED_OPTION
@CORRECTION_OPTION
@ALPHA_OPTION
@click.option("--output", "-o", type=click.Choice(["table", "json", "markdown"]), default="table", show_default=True)
@click.option("--out", "out_path", type=click.Path(dir_okay=False), default=None, help="Write the result here instead of stdout.")
@click.option("--per-query", "per_query", type=click.Path(dir_okay=False), default=None, help="Write per-query values and differences (TSV) here.")
@RELEVANCE_LEVEL_OPTION
@DEPTH_OPTION
@RUN_FORMAT_OPTION
@GOLD_FORMAT_OPTION
@COLUMN_OPTION
@ALLOW_PARTIAL_OPTION
@FORCE_OPTION
def compare(gold, runs, baseline, metric, binary, task, missing, zero_method, permutations, bootstrap_resamples, ci_method,
            confidence, seed, correction, alpha, output, out_path, per_query, relevance_level, depth, run_format, gold_format,
            column, allow_partial, force):
    """Compare RUNs against a baseline, query by query, on GOLD.

    For each run: mean difference with a bootstrap CI, relative improvement,
    win/tie/loss, rank-biserial effect size, Wilcoxon signed-rank, paired
    t-test, Fisher randomization test and McNemar on a binary outcome
    (default Success@1: a relevant document at rank 1). With more than one
    comparison the p-values are corrected (Holm by default); raw and
    adjusted p-values are shown. All tests are two-sided and seeded.
    """
    from evalkit.comparison import CompareOptions
    from evalkit.comparison import compare as run_comparison
    from evalkit.errors import UsageError
    from evalkit.manifest import build_manifest, input_entry, write_sidecar
    from evalkit.metrics import parse_metric
    from evalkit.report import compare_output
    from evalkit.runset import comparison_metric, default_metric_labels, score_runs
    from evalkit.stats.paired import align
    from evalkit.textio import atomic_write, check_outputs, sidecar_of

    if len(runs) < 2:
        raise UsageError(f"compare needs at least two runs (got {len(runs)}): a baseline and a run to compare with it")
    options = CompareOptions(zero_method, permutations, bootstrap_resamples, ci_method, confidence, seed, correction, alpha)
    options.check()
    binary_metric = parse_metric(binary)
    if not binary_metric.binary:
        raise UsageError(f"--binary {binary}: {binary_metric.label} is not a 0/1 outcome per query (use success@k)")
    chosen = parse_metric(metric).label if metric else None
    sidecar = sidecar_of(out_path) if out_path and output == "table" else None
    check_outputs([out_path, sidecar, per_query, per_query and sidecar_of(per_query)], force, inputs=[gold, *runs])

    def metrics_for(the_task):
        return default_metric_labels(the_task) + ([chosen] if chosen else []) + [binary_metric.label]

    the_task, qrels, scored = score_runs(
        gold, list(runs), task_name=task, metrics=metrics_for, missing=missing, allow_partial=allow_partial,
        relevance_level=relevance_level, depth=depth, run_format=run_format, gold_format=gold_format, column=column,
    )
    names = [s.name for s in scored]
    base = pick_run(baseline, names, list(map(str, runs)))
    label = comparison_metric(the_task, scored[0].score, chosen)
    evaluations = [s.score.evaluation for s in scored]
    values = align(evaluations, label, names)
    binary_values = align(evaluations, binary_metric.label, names)
    for item in scored:
        print_notes(item.notes)
    result = run_comparison(values, base, options, binary_values, progress=True)
    if label != scored[0].score.official:
        result.notes.append(f"compared on {label}; the task's official score is {scored[0].score.official}")
    policy = scored[0].score.policy_lines()
    manifest = build_manifest(
        the_task.name,
        [input_entry("gold", qrels.source)] + [input_entry(f"run:{s.name}", s.run.source) for s in scored],
        {
            "metric": label, "binary": binary_metric.label, "baseline": base, "missing": scored[0].score.missing,
            "zero_method": zero_method, "permutations": permutations, "bootstrap": bootstrap_resamples,
            "ci_method": ci_method, "confidence": confidence, "correction": correction, "alpha": alpha,
            "relevance_level": relevance_level, "depth": depth, "allow_partial": allow_partial,
        },
        seed=seed,
        command="compare",
    )
    if output == "json":
        text = compare_output.as_json(result, the_task.name, policy, manifest)
    elif output == "markdown":
        text = compare_output.as_markdown(result, the_task.name, policy, manifest)
    else:
        text = compare_output.as_table(result, the_task.name, policy)
    if per_query:
        atomic_write(per_query, compare_output.per_query_tsv(values, binary_values, base), force=force)
        write_sidecar(per_query, manifest)
    if out_path:
        atomic_write(out_path, text + "\n", force=force)
        if output == "table":
            write_sidecar(out_path, manifest)
        click.echo(f"wrote {out_path}", err=True)
    else:
        click.echo(text)
