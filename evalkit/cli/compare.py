"""``evalkit compare RUN1 RUN2 [RUN...] --gold GOLD`` (or ``GOLD RUN1 RUN2...``): paired significance tests against a baseline."""
from __future__ import annotations

import click

from evalkit.io.transactions import announce

from evalkit.cli.common import (
    ALPHA_OPTION,
    BINARY_OPTION,
    BOOTSTRAP_OPTION,
    CORRECTION_OPTION,
    FINITE,
    FORCE_OPTION,
    PERMUTATIONS_OPTION,
    SEED_OPTION,
    ZERO_METHOD_OPTION,
    all_pairs_option,
    echo_result,
    print_notes,
    scoring_options,
)
from evalkit.cli.convention import GOLD_OPTION, out_format, runs_and_gold, swapped

OUTPUTS = ("table", "json", "markdown")


@click.command()
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False), metavar="RUN...")
@GOLD_OPTION
@click.option("--baseline", "-b", default=None, help="The run the others are compared with (file, name or position; default: the first).")
@click.option("--metric", "--metrics", "-m", "metric", default=None,
              help="Per-query metric to compare (default: the task's official metric; --metrics works too).")
@BINARY_OPTION
@scoring_options(without=("metrics",))
@all_pairs_option("auto")
@ZERO_METHOD_OPTION
@PERMUTATIONS_OPTION
@BOOTSTRAP_OPTION
@click.option("--ci-method", type=click.Choice(["percentile", "basic", "bca"]), default="percentile", show_default=True, help="Bootstrap CI method.")
@click.option("--confidence", type=FINITE, default=0.95, show_default=True, help="Confidence level of the bootstrap CI.")
@SEED_OPTION
@CORRECTION_OPTION
@ALPHA_OPTION
@click.option("--output", "-o", type=click.Choice(OUTPUTS), default=None, help="Default: table, or what --out's suffix names (.json, .md).")
@click.option("--out", "out_path", type=click.Path(dir_okay=False), default=None,
              help="Write the result here instead of stdout, in --output's format or its suffix's.")
@click.option("--per-query", "per_query", type=click.Path(dir_okay=False), default=None, help="Write per-query values and differences (TSV) here.")
@FORCE_OPTION
def compare(runs, gold_option, baseline, metric, binary, scoring, all_pairs, zero_method, permutations, bootstrap_resamples, ci_method,
            confidence, seed, correction, alpha, output, out_path, per_query, force):
    """Compare RUNs against a baseline, query by query, on GOLD (RUN... --gold GOLD, or GOLD RUN...).

    For each run: mean difference with a bootstrap CI, relative improvement,
    win/tie/loss, rank-biserial effect size, Wilcoxon signed-rank, paired
    t-test, Fisher randomization test and McNemar on a binary outcome
    (default Success@1: a relevant document at rank 1). With more than one
    comparison the p-values are corrected (Holm by default); raw and
    adjusted p-values are shown. All tests are two-sided and seeded.

    With three or more runs every pair is also compared (--all-pairs;
    randomised Tukey HSD by default): each pair's difference, interval, raw
    and adjusted p-value and ES_E, each run's rank interval, bootstrap rank
    interval and letters, the runs tied with #1, and the two-way ANOVA.
    """
    from evalkit.api import compare as compare_runs
    from evalkit.io.manifest import write_sidecar
    from evalkit.report import compare_output
    from evalkit.io.transactions import atomic_write, check_outputs, sidecar_of

    runs, gold = runs_and_gold("compare", runs, gold_option)
    output = out_format(out_path, output, OUTPUTS)
    sidecar = sidecar_of(out_path) if out_path and output == "table" else None
    check_outputs([out_path, sidecar, per_query, per_query and sidecar_of(per_query)], force, inputs=[gold, *runs])
    with swapped("compare", gold, runs):
        compared = compare_runs(
            gold, *runs, metric=metric, baseline=baseline, binary=binary, zero_method=zero_method, permutations=permutations,
            bootstrap=bootstrap_resamples, ci_method=ci_method, confidence=confidence, seed=seed, correction=correction, alpha=alpha,
            all_pairs=all_pairs, scoring=scoring, progress=True,
        )
    print_notes(compared.notes)
    result, values, binary_values, base = compared.comparison, compared.values, compared.binary_values, compared.baseline
    policy, task_name = compared.policy, compared.task  # the manifest (the inputs' sha256): only where it is shown
    every_pair = compared.all_pairs
    if output == "json":
        text = compare_output.as_json(result, task_name, policy, compared.manifest, every_pair)
    elif output == "markdown":
        text = compare_output.as_markdown(result, task_name, policy, compared.manifest, every_pair)
    else:
        text = compare_output.as_table(result, task_name, policy, every_pair)
    if per_query:
        atomic_write(per_query, compare_output.per_query_tsv(values, binary_values, base), force=force)
        write_sidecar(per_query, compared.manifest)
    if out_path:
        atomic_write(out_path, text + "\n", force=force)
        if output == "table":
            write_sidecar(out_path, compared.manifest)
        announce(f"wrote {out_path}")
    else:
        echo_result(text)
