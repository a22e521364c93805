"""``evalkit topics-needed DIR --gold GOLD --difference 0.05``: topic set size design for the next edition (Sakai 2016)."""
from __future__ import annotations

import click

from evalkit.cli.common import FORCE_OPTION, print_notes, scoring_options, write_or_echo
from evalkit.cli.convention import out_format

UNIT = click.FloatRange(0, 1, min_open=True, max_open=True)


@click.command()
@click.argument("folder", type=click.Path(file_okay=False))
@click.option("--gold", "-g", required=True, type=click.Path(dir_okay=False), help="The gold file every run is scored against.")
@scoring_options(without=("run_format",))
@click.option("--glob", "patterns", multiple=True, default=("*",), show_default=True, help="File-name pattern(s) of the runs.")
@click.option("--difference", "-d", "differences", multiple=True, type=click.FloatRange(0, min_open=True),
              default=(0.02, 0.05, 0.1), show_default=True, help="Minimum difference to detect (repeat for several).")
@click.option("--power", type=UNIT, default=0.8, show_default=True, help="Power wanted (1 - beta).")
@click.option("--alpha", type=UNIT, default=0.05, show_default=True, help="Significance level.")
@click.option("--systems", type=click.IntRange(2), default=None, help="Systems of the next edition's ANOVA (default: the runs given).")
@click.option("--pair", nargs=2, default=None, help="Two runs (name, file or rank) whose paired variance the t-test and CI use "
              "(default: 2 V_E).")
@click.option("--output", "-o", type=click.Choice(["markdown", "json"]), default=None,
              help="Output format (default: markdown; json when --out ends in .json).")
@click.option("--out", "out_path", type=click.Path(dir_okay=False), default=None, help="Write the design here (.md or .json).")
@FORCE_OPTION
def topics_needed(folder, gold, scoring, patterns, differences, power, alpha, systems, pair, output, out_path, force):
    """How many topics the next edition needs, from the per-topic scores of the runs in FOLDER (Sakai 2016).

    The residual variance V_E of the two-way ANOVA without replication over
    the runs (on the leaderboard's tested metric) gives the topics a
    one-way ANOVA over --systems needs to detect a range of --difference;
    the paired variance (2 V_E, or that of --pair) the topics a paired
    t-test needs, and those for an expected CI no wider than --difference.
    Also printed: the power this edition had for each adjacent pair.
    """
    from evalkit.scoring.leaderboard import collect_files
    from evalkit.io.transactions import check_outputs
    from evalkit.report.topic_design import topics_needed as design_topics

    output = out_format(out_path, output, ("markdown", "json"), default="markdown")
    if out_path:
        ranked, _ = collect_files(folder, patterns, True, gold)
        check_outputs([out_path], force, inputs=[gold, *ranked])
    design, notes = design_topics(folder, gold, differences, power=power, alpha=alpha, systems=systems, pair=tuple(pair) if pair else None,
                                  patterns=patterns, scoring=scoring, progress=True)
    print_notes(notes)
    text = design.as_json() if output == "json" else design.as_markdown()
    write_or_echo(text, out_path, force)
