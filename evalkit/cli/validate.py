"""``evalkit validate FILE --task NAME``: every problem of a submission, then a verdict.

Exit code 0: valid (warnings allowed); 1: invalid; 2: the file (or a
reference file) cannot be read at all, or an option is wrong.
"""
from __future__ import annotations

import click

from evalkit.cli.common import DEPTH, TASK_OPTION, task_depths

REFERENCE_HELP = "repeat it to give several splits (the split is then guessed from the query ids)"


@click.command()
@click.argument("file", type=click.Path(dir_okay=False))
@TASK_OPTION
@click.option("--gold", "gold", multiple=True, type=click.Path(dir_okay=False), help=f"Gold file of the split the submission is for; {REFERENCE_HELP}.")
@click.option("--queries", "queries", multiple=True, type=click.Path(dir_okay=False), help=f"Query file (or one id per line) of the split; {REFERENCE_HELP}.")
@click.option("--split", default=None, help="Name of the split the submission is meant for (train/dev/test or a query file name), checked against its content.")
@click.option(
    "--collection-ids",
    "collection_ids",
    multiple=True,
    type=click.Path(dir_okay=False),
    help="Known document ids: gold files (those of every split give the ids a collection holds), a corpus JSONL, a table or one id per line; repeatable.",
)
@click.option("--depth", type=DEPTH, default=None, help=f"Ids per query the submission must have (default: the task's: {task_depths()}).")
@click.option("--limit", type=int, default=20, show_default=True, help="Show at most this many problems of each kind (0: all); counts stay exact.")
def validate(file, task, gold, queries, split, collection_ids, depth, limit):
    """Check FILE as an official submission for --task and report ALL problems.

    Each problem is printed as FILE:LINE: problem, then a one-line verdict.
    Exit code 0 when valid, 1 when not, 2 when FILE cannot be read.
    """
    from evalkit.core.safetext import visible
    from evalkit.tasks.submissions import validate as check_submission

    checked = check_submission(file, task, gold=gold, queries=queries, split=split, collection_ids=collection_ids, depth=depth)
    for line in checked.lines(limit if limit > 0 else None):
        click.echo(visible(line))  # a problem quotes ids: escapes and newlines in them are shown, never sent
    click.echo(visible(checked.verdict()))
    if not checked.valid:
        raise click.exceptions.Exit(1)
