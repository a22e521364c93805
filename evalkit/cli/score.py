"""``evalkit score RUN GOLD``: the official score first, then the task's other metrics."""
from __future__ import annotations

import click

from evalkit.io.transactions import announce

from evalkit.cli.common import FORCE_OPTION, echo_result, scoring_options, warn
from evalkit.cli.convention import GOLD_OPTION, out_format, score_run_and_gold, swapped

OUTPUTS = ("table", "json", "markdown", "tsv", "trec_eval")
SHOW_MANIFEST = ("json", "markdown")  # the outputs that hold the manifest (the others write it beside a file: --out)


@click.command()
@click.argument("run", type=click.Path(dir_okay=False))
@click.argument("gold", type=click.Path(dir_okay=False), required=False)
@GOLD_OPTION
@scoring_options()
@click.option(
    "--output", "-o", "output", type=click.Choice(OUTPUTS), default=None,
    help="Default: table, or what --out's suffix names (.json, .md, .tsv). trec_eval: measure<TAB>query<TAB>value lines as "
         "trec_eval -q prints them (measure names read as trec_eval reads -m).",
)
@click.option("--out", "out_path", type=click.Path(dir_okay=False), default=None,
              help="Write the result to this file instead of stdout, in --output's format or its suffix's.")
@click.option("--per-query", "per_query", type=click.Path(dir_okay=False), default=None, help="Write per-query values (TSV) here.")
@FORCE_OPTION
def score(run, gold, gold_option, scoring, output, out_path, per_query, force):
    """Score RUN against GOLD (evalkit score RUN GOLD, or RUN --gold GOLD).

    RUN may be a TREC run, a list submission (TSV/CSV, zip or gzip) or a
    ClimateCheck CSV; GOLD a CheckThat!/ClimateCheck gold file, TREC or BEIR
    qrels. The ranking rule and the missing-query policy are printed with
    every result.
    """
    from evalkit.report import text as render
    from evalkit.api import score as score_run
    from evalkit.io.manifest import write_sidecar
    from evalkit.io.transactions import atomic_write, check_outputs, sidecar_of

    run, gold = score_run_and_gold(run, gold, gold_option)
    output = out_format(out_path, output, OUTPUTS)
    sidecar = sidecar_of(out_path) if out_path and output not in SHOW_MANIFEST else None
    check_outputs([out_path, sidecar, per_query, per_query and sidecar_of(per_query)], force, inputs=[run, gold])


    if output == "trec_eval":  # names as trec_eval reads -m: bare P, recall, success, relative_P are its families; no -m: official
        from dataclasses import replace

        from evalkit.metrics.trec_names import expand_trec_eval

        scoring = replace(scoring, metrics=tuple(expand_trec_eval(list(scoring.metrics or ("official",)), scoring.judgment_groups)))
    with swapped("score", gold, [run]):
        scored = score_run(run, gold, scoring=scoring)
    for message in scored.warnings:
        warn(message)
    result = scored.task_score  # its manifest (the inputs' sha256) is built only for an output that shows it
    if output in SHOW_MANIFEST:
        text = render.RENDERERS[output](result, scored.manifest)
    else:
        text = render.RENDERERS[output](result)
    if per_query:
        atomic_write(per_query, render.per_query_tsv(result), force=force)
        write_sidecar(per_query, scored.manifest)
    if out_path:
        atomic_write(out_path, text + "\n", force=force)
        if output not in SHOW_MANIFEST:
            write_sidecar(out_path, scored.manifest)
        announce(f"wrote {out_path}")
    else:
        echo_result(text)
