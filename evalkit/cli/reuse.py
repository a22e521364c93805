"""``evalkit reuse RUNS... --gold GOLD --depth K --group-by REGEX``: the leave-one-group-out reusability test of the judgments."""
from __future__ import annotations

import click

from evalkit.io.transactions import announce

from evalkit.cli.common import FORCE_OPTION, print_notes, scoring_options
from evalkit.cli.convention import GOLD_OPTION, out_format, runs_and_gold, swapped
from evalkit.cli.pool import GROUP_BY_HELP, GROUP_ON_OPTION


@click.command()
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False), metavar="RUN...")
@GOLD_OPTION
@click.option("--depth", "-k", required=True, type=click.IntRange(min=1), help="Depth of the pool the groups are left out of.")
@click.option("--group-by", required=True, help=GROUP_BY_HELP)
@GROUP_ON_OPTION
@click.option("--metric", "-m", default=None, help="Compare this metric instead of the task's official score, e.g. map.")
@scoring_options(without=("metrics", "depth", "zscores", "judgment_groups"))
@click.option("--output", "-o", type=click.Choice(["table", "markdown", "json"]), default=None,
              help="Output format (default: table; markdown / json when --out ends in .md / .json).")
@click.option("--out", "out_path", type=click.Path(dir_okay=False), default=None,
              help="Write the report here (e.g. reports/reuse.md), its figure NAME.reuse.png beside it.")
@FORCE_OPTION
def reuse(runs, gold_option, depth, group_by, group_on, metric, scoring, output, out_path, force):
    """Would the judgments in GOLD score a new run fairly? Leave each group out of the depth-K pool of RUNS
    (RUN... --gold GOLD, or GOLD RUN...).

    For each group (--group-by on the run file names), the judgments of
    documents only its runs pooled are removed and its runs scored again.
    Reported per group and run: the score change, the rank change among all
    runs, and Kendall's tau and tau_AP between the full and the reduced
    leaderboard (Zobel 1998; Buckley et al. 2007); with --out, a figure of
    every run's score before and after.
    """
    from evalkit.api.judging import reuse as reuse_test
    from evalkit.report.reuse_output import as_json, as_markdown, as_table, figure_path, write_reuse
    from evalkit.io.transactions import check_outputs, sidecar_of

    runs, gold = runs_and_gold("reuse", runs, gold_option)
    kind = out_format(out_path, output, ("table", "markdown", "json"))
    if out_path:
        from evalkit.report.figures import require_plots

        require_plots("the figure of `evalkit reuse --out`")
        check_outputs([out_path, figure_path(out_path), sidecar_of(out_path) if kind == "table" else None], force, inputs=[gold, *runs])
    with swapped("reuse", gold, runs):
        result = reuse_test(gold, *runs, depth=depth, group_by=group_by, group_on=group_on, metric=metric, scoring=scoring,
                            progress=True)
    print_notes(result.notes)
    if out_path:
        written = write_reuse(result, out_path, output=kind, force=force)
        announce(f"wrote {', '.join(map(str, written))}")
    else:
        click.echo({"json": as_json, "markdown": as_markdown}.get(kind, as_table)(result).rstrip("\n"))
