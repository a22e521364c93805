"""``evalkit agreement GOLD_A GOLD_B [RUNS...]``: how far two sets of judgments agree, and what the difference does to a leaderboard."""
from __future__ import annotations

import click

from evalkit.io.transactions import announce

from evalkit.cli.common import (
    ALPHA_OPTION,
    BOOTSTRAP_OPTION,
    CORRECTION_OPTION,
    FORCE_OPTION,
    PERMUTATIONS_OPTION,
    SEED_OPTION,
    ZERO_METHOD_OPTION,
    all_pairs_option,
    print_notes,
    scoring_options,
)


@click.command()
@click.argument("gold_a", type=click.Path(dir_okay=False))
@click.argument("gold_b", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, type=click.Path(dir_okay=False))
@click.option("--metric", "-m", default=None, help="Rank the runs on this metric instead of the task's official score (TREC: nDCG@10).")
@click.option("--weights", type=click.Choice(["linear", "quadratic"]), default="linear", show_default=True,
              help="Disagreement weights of the weighted kappa on the grades.")
@click.option("--complete", type=click.Choice(["a", "b"]), default=None,
              help="Take GOLD_A (a) or GOLD_B (b) as complete: a pair the other judges and it does not is grade 0 "
                   "(qrels listing only relevant documents, as BEIR's).")
@click.option("--rbo-p", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.9, show_default=True,
              help="Persistence of the rank-biased overlap of the two system rankings.")
@click.option("--judged-k", type=click.IntRange(min=1), default=10, show_default=True,
              help="k of each run's LLM@k (share of its top k an LLM judged) under a gold that says who judged each pair.")
@scoring_options(without=("metrics", "zscores", "judgment_groups"))
@all_pairs_option("randomised-tukey")
@CORRECTION_OPTION
@ALPHA_OPTION
@PERMUTATIONS_OPTION
@BOOTSTRAP_OPTION
@SEED_OPTION
@ZERO_METHOD_OPTION
@click.option("--output", "-o", type=click.Choice(["table", "markdown", "json"]), default=None,
              help="Output format (default: table; markdown / json when --out ends in .md / .json).")
@click.option("--out", "out_path", type=click.Path(dir_okay=False), default=None,
              help="Write the report here (e.g. reports/agreement.md); with runs, its figure NAME.agreement.png beside it.")
@FORCE_OPTION
def agreement(gold_a, gold_b, runs, metric, weights, complete, rbo_p, judged_k, scoring, all_pairs, correction, alpha, permutations,
              bootstrap_resamples, seed, zero_method, output, out_path, force):
    """Agreement of GOLD_A and GOLD_B on the pairs both judge; with RUNS, the two leaderboards side by side.

    Cohen's kappa on relevance (grade >= --relevance-level) and weighted on the
    grades, Krippendorff's alpha (ordinal), the confusion matrix and per-query
    agreement. With runs: each run's score and rank under both golds, Kendall's
    tau, tau_AP (B against A), rank-biased overlap, and every pair of runs whose
    order flips, with whether the all-pairs procedure finds it significant
    under each gold; with --out, a figure of the ranks under A vs under B. A
    gold from evalkit judge (a judge column, or QRELS.judges.tsv) adds each
    run's LLM@k: the share of its top k an LLM judged (mixed gold).
    """
    from evalkit.stats.allpairs import AllPairsOptions
    from evalkit.api.agreement import agreement as find_agreement
    from evalkit.report.agreement_output import as_json, as_markdown, as_table, figure_path
    from evalkit.report.agreement_output import write_agreement
    from evalkit.report.reuse_output import output_of
    from evalkit.io.transactions import check_outputs, sidecar_of

    kind = output_of(out_path, output)
    if out_path:
        check_outputs([out_path, figure_path(out_path) if runs else None, sidecar_of(out_path) if kind == "table" else None], force,
                      inputs=[gold_a, gold_b, *runs])
    pairs = None if all_pairs == "none" else AllPairsOptions(all_pairs, correction, alpha, permutations, bootstrap_resamples, seed,
                                                              zero_method)
    result = find_agreement(gold_a, gold_b, *runs, metric=metric, weights=weights, complete=complete, rbo_p=rbo_p, judged_k=judged_k,
                            relevance_level=scoring.relevance_level, pairs=pairs, scoring=scoring, progress=True)
    print_notes(result.notes)
    if out_path:
        written = write_agreement(result, out_path, output=kind, force=force)
        announce(f"wrote {', '.join(map(str, written))}")
    else:
        click.echo({"json": as_json, "markdown": as_markdown}.get(kind, as_table)(result).rstrip("\n"))
