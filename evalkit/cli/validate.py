"""``evalkit validate FILE --task NAME``: every problem of a submission, then a verdict.

Exit code 0: valid (warnings allowed); 1: invalid; 2: the file (or a
reference file) cannot be read at all, or an option is wrong.
"""
from __future__ import annotations

import click

from evalkit.cli.common import TASK_OPTION

REFERENCE_HELP = "repeat it to give several splits (the split is then guessed from the query ids)"


def verdict(path: str, task: str, problems, expectations) -> str:
    """The one-line verdict: valid or not, for which task and split, what was checked."""
    facts = problems.facts
    parts = []
    if "split" in facts:
        parts.append(f"split {facts['split']}" + (f" ({facts['overlap']})" if "overlap" in facts else ""))
    elif expectations.splits:
        parts.append("split unknown")
    else:
        parts.append("query set not checked (give --gold or --queries)")
    if "queries" in facts:
        parts.append(f"{facts['queries']} queries read, {facts['depth']} ids per query required")
    checked = expectations.collection is not None
    parts.append(f"ids checked against {expectations.collection_note}" if checked else "ids not checked against a collection (give --collection-ids)")
    details = "; ".join(parts)
    warnings = f" with {problems.summary('warning')}" if problems.warnings else ""
    if problems.valid:
        return f"VALID{warnings}: {path} is a valid {task} submission; {details}"
    return f"INVALID: {path} is not a valid {task} submission: {problems.summary()}{warnings}; {details}"


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
    help="Known document ids: gold files (4b: train + dev give the 7,718 collection ids), a corpus JSONL, a table or one id per line; repeatable.",
)
@click.option("--depth", type=int, default=None, help="Ids per query the submission must have (default: the task's, 4b 5, ClimateCheck 10).")
@click.option("--limit", type=int, default=20, show_default=True, help="Show at most this many problems of each kind (0: all); counts stay exact.")
def validate(file, task, gold, queries, split, collection_ids, depth, limit):
    """Check FILE as an official submission for --task and report ALL problems.

    Each problem is printed as FILE:LINE: problem, then a one-line verdict.
    Exit code 0 when valid, 1 when not, 2 when FILE cannot be read.
    """
    from evalkit.tasks.submissions import (
        detect_submission_task,
        expectations_for,
        validate_file,
    )

    task_name = detect_submission_task(file) if task == "auto" else task
    expectations = expectations_for(
        task_name, query_files=list(gold) + list(queries), split=split, collection_files=list(collection_ids), depth=depth
    )
    problems = validate_file(file, expectations)
    for line in problems.lines(limit if limit > 0 else None):
        click.echo(line)
    click.echo(verdict(file, expectations.task, problems, expectations))
    if not problems.valid:
        raise click.exceptions.Exit(1)
