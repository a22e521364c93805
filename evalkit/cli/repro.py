"""``evalkit repro GOLD --baseline B --advanced A --repro-baseline B2 --repro-advanced A2``: how well a reproduction reproduced."""
from __future__ import annotations

import click

from evalkit.cli.common import FORCE_OPTION, print_notes, scoring_options, write_or_echo
from evalkit.cli.convention import out_format

RUN = click.Path(dir_okay=False)


@click.command()
@click.argument("gold", type=RUN)
@click.option("--baseline", "-b", required=True, type=RUN, help="The original baseline run.")
@click.option("--advanced", "-a", required=True, type=RUN, help="The original advanced run (the improvement).")
@click.option("--repro-baseline", required=True, type=RUN, help="The reproduced (or replicated) baseline run.")
@click.option("--repro-advanced", required=True, type=RUN, help="The reproduced (or replicated) advanced run.")
@click.option("--repro-gold", type=RUN, default=None,
              help="Gold of another collection the reproduced runs ran on: a replicability study (ER, DRI, unpaired t-test).")
@scoring_options(without=("run_format",))
@click.option("--ktu-depth", type=click.IntRange(1, 10**6), default=1000, show_default=True, help="Documents of each ranking KTU compares.")
@click.option("--rbo-p", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.95, show_default=True,
              help="RBO's persistence p.")
@click.option("--rbo-depth", type=click.IntRange(1, 10**6), default=1000, show_default=True, help="RBO's depth.")
@click.option("--output", "-o", type=click.Choice(["markdown", "json"]), default=None,
              help="Output format (default: markdown; json when --out ends in .json).")
@click.option("--out", "out_path", type=click.Path(dir_okay=False), default=None, help="Write the result here (.md or .json).")
@FORCE_OPTION
def repro(gold, baseline, advanced, repro_baseline, repro_advanced, repro_gold, scoring, ktu_depth, rbo_p, rbo_depth, output, out_path,
          force):
    """Reproducibility measures of a baseline/advanced pair (Breuer et al., SIGIR 2020), as repro_eval defines them.

    Same collection (no --repro-gold): Kendall's tau Union and RBO between
    the original and reproduced ranking of each topic, RMSE of the per-topic
    scores, Effect Ratio, Delta Relative Improvement and paired t-test
    p-values. With --repro-gold (another collection): ER, DRI and unpaired
    t-test p-values. Every run is scored as `evalkit score` scores it; -m adds
    measures to the task's official one.
    """
    from evalkit.io.transactions import check_outputs
    from evalkit.report.reproduction import repro as measure

    output = out_format(out_path, output, ("markdown", "json"), default="markdown")
    inputs = [gold, baseline, advanced, repro_baseline, repro_advanced, repro_gold]
    if out_path:
        check_outputs([out_path], force, inputs=inputs)
    result = measure(gold, baseline, advanced, repro_baseline, repro_advanced, repro_gold, scoring=scoring, depth=ktu_depth,
                     rbo_p=rbo_p, rbo_depth=rbo_depth)
    print_notes(result.notes)
    text = result.as_json() if output == "json" else result.as_markdown()
    write_or_echo(text, out_path, force)
