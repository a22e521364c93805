"""``evalkit pool RUNS... --depth K --out SHEET``: the depth-k pool of runs as a judging sheet, and who contributed what."""
from __future__ import annotations

import click

from evalkit.io.transactions import announce

from evalkit.cli.common import COLUMN_OPTION, FORCE_OPTION, RUN_FORMAT_OPTION, print_notes

GROUP_BY_HELP = ("Regular expression whose first match on a run's file name is its group (its first capturing group, if it has "
                 "one), e.g. '^[^_]+' for a team prefix.")
GROUP_ON_OPTION = click.option("--group-on", type=click.Choice(["name", "path"]), default="name", show_default=True,
                               help="Match --group-by on the file name, or on the path as given (teams in folders).")


@click.command()
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--depth", "-k", required=True, type=click.IntRange(min=1), help="Pool the top K documents of each run per query.")
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False),
              help="The judging sheet: .csv comma-separated, anything else tab-separated (a .manifest.json beside it).")
@click.option("--group-by", default=None, help=GROUP_BY_HELP + " Default: each run is its own group.")
@GROUP_ON_OPTION
@click.option("--seed", type=click.IntRange(0, 2**32 - 1), default=42, show_default=True,
              help="Seed of each query's random document order on the sheet.")
@click.option("--blind", is_flag=True, help="Leave out of the sheet which runs and groups retrieved each document (the assessors' copy).")
@click.option("--summary", "summary_path", type=click.Path(dir_okay=False), default=None,
              help="Also write the pool's figures here: .md (Markdown) or .json.")
@click.option("--queries", "queries_path", type=click.Path(dir_okay=False), default=None,
              help="Query texts for the assessors (a query_text column): BEIR JSONL, a table such as the 4b gold, id<TAB>text, SMART.")
@click.option("--corpus", "corpus_path", type=click.Path(dir_okay=False), default=None,
              help="Document texts for the assessors (a doc_text column: title and text): BEIR JSONL, CSV/TSV/Parquet, TREC SGML...")
@click.option("--trust-pickle", is_flag=True, help="Allow reading a pickled --corpus (unpickling runs code: trusted files only).")
@RUN_FORMAT_OPTION
@COLUMN_OPTION
@FORCE_OPTION
def pool(runs, depth, out_path, group_by, group_on, seed, blind, summary_path, queries_path, corpus_path, trust_pickle, run_format, column,
         force):
    """Pool the top K documents of RUNS (any run formats) for assessors, written as a judging sheet.

    The sheet has one row per pooled (query, document), each query's documents
    in a seeded random order, and an empty relevance column to grade (0, 1,
    2...; -1 leaves a document unjudged); the organiser's copy also says which
    runs and groups retrieved each document (--blind leaves that out). Graded,
    it is a gold file: evalkit score RUN SHEET. Printed: the pool's size and
    each run's and group's unique contribution (documents no other run, or
    group, pooled). --queries and --corpus put the texts assessors read on
    the sheet.
    """
    from evalkit.core.errors import UsageError
    from evalkit.report import pool_summary
    from evalkit.api.judging import pool as make_pool
    from evalkit.judging.sheet import formula_like_ids
    from evalkit.io.transactions import atomic_write, check_outputs, sidecar_of

    if summary_path and not summary_path.lower().endswith((".md", ".json")):
        raise UsageError(f"--summary {summary_path}: name it NAME.md (Markdown) or NAME.json")
    check_outputs([out_path, sidecar_of(out_path), summary_path], force, inputs=[*runs, queries_path, corpus_path])
    made = make_pool(*runs, depth=depth, group_by=group_by, group_on=group_on, seed=seed, blind=blind, run_format=run_format,
                     column=column, queries=queries_path, corpus=corpus_path, trust_pickle=trust_pickle, progress=True)
    print_notes(made.notes)
    risky = formula_like_ids(made.pool)
    if risky:
        click.echo(f"warning: {len(risky)} ids start like a spreadsheet formula (e.g. {risky[0]!r}); open the sheet as text, "
                   "not as a spreadsheet formula", err=True)
    made.save(out_path, force=force)
    summary = made.summary()
    if summary_path:
        text = pool_summary.as_json(summary) if summary_path.lower().endswith(".json") else pool_summary.as_markdown(summary)
        atomic_write(summary_path, text, force=force)
    click.echo(pool_summary.as_table(summary))
    announce(f"wrote {out_path} ({made.pool.size:,} rows to grade){f' and {summary_path}' if summary_path else ''}")
