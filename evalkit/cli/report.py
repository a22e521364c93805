"""``evalkit report RUN... --gold GOLD --out reports/NAME.md`` (or ``GOLD RUN...``): a Markdown report with figures; ``--html``: the HTML page."""
from __future__ import annotations

import click

from evalkit.io.transactions import announce

from evalkit.cli.html_output import page_options
from evalkit.cli.common import (
    ALPHA_OPTION,
    CORRECTION_OPTION,
    FORCE_OPTION,
    SEED_OPTION,
    ZERO_METHOD_OPTION,
    print_notes,
    scoring_options,
)
from evalkit.cli.convention import GOLD_OPTION, runs_and_gold, swapped


@click.command()
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False), metavar="RUN...")
@GOLD_OPTION
@click.option("--out", "out_path", default=None, type=click.Path(dir_okay=False), help="The Markdown report to write (figures go next to it).")
@click.option("--baseline", "-b", default=None, help="Run the others are tested against (file, name or position; default: the first).")
@click.option("--metric", default=None, help="Per-query metric for query length and wins/losses (default: the official metric).")
@click.option("--pair", nargs=2, default=None, metavar="A B",
              help="Runs whose largest per-query wins/losses are listed (default: baseline and the best other run).")
@click.option("--top", type=int, default=10, show_default=True, help="Wins and losses listed each way.")
@click.option("--length-buckets", type=int, default=4, show_default=True, help="Query-length buckets (quantiles of tokens).")
@click.option("--test", "test_name", type=click.Choice(["wilcoxon", "ttest", "randomization"]), default="wilcoxon", show_default=True,
              help="Test behind the significance markers.")
@ZERO_METHOD_OPTION
@click.option("--permutations", type=int, default=10_000, show_default=True, help="Sign flips when --test randomization.")
@CORRECTION_OPTION
@ALPHA_OPTION
@SEED_OPTION
@click.option("--title", default=None, help="Report title.")
@scoring_options(own_metric=True)
@FORCE_OPTION
@page_options
def report(runs, gold_option, out_path, baseline, metric, pair, top, length_buckets, test_name, zero_method, permutations,
           correction, alpha, seed, title, scoring, force, html_path, json_path, queries_path, corpus_path, trust_pickle, top_docs):
    """Write a Markdown report on RUNs scored against GOLD (RUN... --gold GOLD, or GOLD RUN...).

    Leaderboard (official score first, best per column in bold, significance
    markers against the baseline with their legend), the distribution of the
    rank of the first relevant document (table + PNG), the metric by query
    length (table + PNG), the queries with the largest wins and losses between
    two runs, and a manifest. Figures are written next to the report.

    --html writes the same as one self-contained HTML page (sortable
    leaderboard, per-query explorer with each run's top documents, bounds
    with unjudged documents as relevant, figures); --json its data.
    """
    from pathlib import Path

    from evalkit.cli.html_output import official_components, page_payloads, page_targets, read_texts
    from evalkit.stats.comparison import CompareOptions
    from evalkit.core.errors import UsageError
    from evalkit.io.manifest import input_entry
    from evalkit.api.report import prepare_report, report_figures, save_markdown
    from evalkit.io.transactions import atomic_write, check_outputs

    runs, gold = runs_and_gold("report", runs, gold_option)
    if out_path and out_path.lower().endswith(".json"):
        raise UsageError(f"--out {out_path}: the report is Markdown (NAME.md); its data as JSON goes to --json NAME.json")
    pages = page_targets(html_path, json_path)
    if not out_path and not pages:
        raise UsageError("nothing to write: give --out NAME.md, --html NAME.html and/or --json NAME.json")
    target = Path(out_path) if out_path else None
    if target is not None:
        from evalkit.report.figures import require_plots

        require_plots("the figures of `evalkit report` (--out)")
    check_outputs([target, *(report_figures(target) if target else []), *pages], force, inputs=[gold, *runs, queries_path, corpus_path])
    texts, corpus = read_texts(queries_path, corpus_path, trust_pickle)
    compare_options = CompareOptions(zero_method=zero_method, permutations=permutations, seed=seed, correction=correction, alpha=alpha)
    with swapped("report", gold, runs):
        prepared = prepare_report(
            gold, list(runs), baseline=baseline, metric=metric, pair=tuple(pair) if pair else None, top=top,
            length_buckets=length_buckets, test=test_name, compare=compare_options, title=title, scoring=scoring,
            extra_inputs=[input_entry(role, path) for role, path in (("queries", queries_path), ("corpus", corpus_path)) if path],
            extra_options={"top_docs": top_docs} if pages else None, progress=True,
        )
    payloads = []
    if pages:
        from evalkit.report.page_data import PageInputs, board_of_runs

        the_task, scored = prepared.task, prepared.scored
        board = board_of_runs(the_task.name, str(gold), scored, prepared.options.metric, test_name, compare_options)
        inputs = PageInputs(
            kind="report", title=title or f"evalkit report: {the_task.name}", board=board, qrels=prepared.qrels,
            baseline=prepared.options.baseline, k=top_docs, texts=texts, corpus=corpus, manifest=prepared.manifest,
            policy=prepared.policy, pair=prepared.options.pair, official_components=official_components(the_task, scored[0].score),
            length_buckets=length_buckets,
        )
        payloads = page_payloads(inputs, html_path, json_path)
    for item in prepared.scored:
        print_notes(item.notes)
    if target is not None:
        written = save_markdown(prepared, target, force=force)
        announce(f"wrote {out_path} ({', '.join(p.name for p in written.figures)})")
    for path, text in payloads:
        atomic_write(path, text, force=force)
        announce(f"wrote {path}")
