"""``evalkit submit RUN --task NAME --out FILE``: the official submission of a run, validated first."""
from __future__ import annotations

import click

from evalkit.io.transactions import announce

from evalkit.cli.common import COLUMN_OPTION, DEPTH, FORCE_OPTION, RUN_FORMAT_OPTION, task_depths, warn


def _task_names() -> str:
    """The tasks that have an official submission file, from the task registry."""
    from evalkit.tasks import tasks

    return ", ".join(task.name for task in tasks() if task.submission is not None)


@click.command()
@click.argument("run", type=click.Path(dir_okay=False))
@click.option("--task", required=True,
              help=f"Task name (see `evalkit tasks`): {_task_names()}.")
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False),
              help="Output: NAME.zip (the upload; official file inside, no folder) or a plain .tsv/.csv.")
@click.option("--queries", default=None, type=click.Path(dir_okay=False),
              help="Query or gold file of the split: exactly these queries are written, in its order.")
@click.option("--depth", type=DEPTH, default=None, help=f"Ids per query (default: the task's: {task_depths()}).")
@click.option("--dedupe", is_flag=True, help="Drop repeated ids of a query (first position kept) before cutting to the depth.")
@RUN_FORMAT_OPTION
@COLUMN_OPTION
@FORCE_OPTION
def submit(run, task, out_path, queries, depth, dedupe, run_format, column, force):
    """Convert RUN (TREC run, list TSV/CSV, a task's own run format; zip or gzip) into the official submission.

    The result is checked like `evalkit validate` before anything is written;
    an invalid result is refused (exit 2). Written atomically, never over an
    existing file without --force, with OUT.manifest.json beside it.
    """
    from evalkit.io.reading import read_run
    from evalkit.tasks import get_task
    from evalkit.tasks.submissions import format_for_task, write_submission
    from evalkit.io.transactions import check_outputs, sidecar_of

    the_task = get_task(task)
    format_for_task(the_task)
    check_outputs([out_path, sidecar_of(out_path)], force, inputs=[run, queries])
    the_run = read_run(run, run_format, column=column)
    for message in the_run.warnings:
        warn(message)
    written = write_submission(the_run, the_task, out_path, queries, force, depth=depth, dedupe=dedupe)
    announce(f"wrote {written} ({the_task.name} submission, validated) and {written}.manifest.json")
