"""``evalkit demo``: the whole loop on the example that ships with evalkit, in seconds.

On a small CheckThat! 2025 Task 4b-style example (``systems/examples``: 60
invented paper records and 20 tweets with their gold paper, written for this
demo), it runs BM25 with two analyzers, writes the stem run's official
submission, validates it, scores it and writes a Markdown report comparing the
two runs, printing where each file went.
"""
from __future__ import annotations

from pathlib import Path

import click

from evalkit.cli.common import FORCE_OPTION

TASK = "checkthat2025-4b"


def example_files() -> tuple[Path, Path]:
    """The shipped example collection (JSONL) and query/gold file (4b TSV)."""
    import evalkit.systems

    folder = Path(evalkit.systems.__file__).parent / "examples"
    return folder / "collection.jsonl", folder / "tweets.tsv"


@click.command()
@click.option("--out-dir", default="evalkit-demo", show_default=True, type=click.Path(file_okay=False), help="Folder for every output.")
@FORCE_OPTION
def demo(out_dir, force):
    """BM25 on the shipped 4b-style example: run -> submission -> validate -> score -> report."""
    from evalkit.cli.report import report
    from evalkit.cli.run import run_command
    from evalkit.cli.score import score
    from evalkit.cli.validate import validate
    from evalkit.errors import UsageError

    ctx = click.get_current_context()
    collection, tweets = example_files()
    if not collection.exists() or not tweets.exists():
        raise UsageError(f"{collection.parent}: the example files are missing from this installation")
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    stem_run, plain_run = folder / "bm25-stem.trec", folder / "bm25-whitespace.trec"
    submission, scores, report_md = folder / "submission.zip", folder / "scores.json", folder / "report.md"
    common = dict(corpus=str(collection), queries=str(tweets), gold=str(tweets), k=100, force=force)

    click.echo(f"1. BM25 (stem analyzer) on {collection.name} ({tweets.name} as queries) -> {stem_run}, {submission}", err=True)
    ctx.invoke(run_command, config="bm25", set_pairs=("analyzer=stem",), out_path=str(stem_run), submit_task=TASK,
               submission_path=str(submission), **common)
    click.echo(f"2. BM25 (whitespace analyzer), the baseline -> {plain_run}", err=True)
    ctx.invoke(run_command, config="bm25", set_pairs=("analyzer=whitespace",), out_path=str(plain_run), **common)
    click.echo(f"3. validate {submission}", err=True)
    code = ctx.invoke(validate, file=str(submission), task=TASK, gold=(str(tweets),), collection_ids=(str(collection),))
    if code:
        raise UsageError(f"{submission}: the demo submission did not validate")
    click.echo(f"4. score {submission} -> {scores}", err=True)
    ctx.invoke(score, run=str(submission), gold=str(tweets), output="json", out_path=str(scores), force=force)
    click.echo(f"5. report: whitespace vs stem -> {report_md}", err=True)
    ctx.invoke(report, gold=str(tweets), runs=(str(plain_run), str(stem_run)), out_path=str(report_md), force=force)
    click.echo(f"done: run {stem_run}, submission {submission}, scores {scores}, report {report_md} (figures beside it)", err=True)
