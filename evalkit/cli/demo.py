"""``evalkit demo``: the whole loop on the example that ships with evalkit, in seconds.

On a small CheckThat! 2025 Task 4b-style example (``systems/examples``: 60
invented paper records and 20 tweets with their gold paper, written for this
demo), it runs BM25 with two analyzers, writes the stem run's official
submission, validates it, scores it and writes a Markdown report comparing the
two runs, printing where each file went.

The demo is re-runnable: ``OUT-DIR/demo.manifest.json`` records the sha256 of
every file it wrote, and a later demo replaces those files when they are
unchanged. Any other existing file (one the demo did not write, or one edited
since) is refused without ``--force``. Its outputs are committed in two
steps: the runs and the submission (which the demo then validates and scores
as files), then the scores and the report; the record follows each step.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import click

from evalkit.cli.common import FORCE_OPTION

RECORD = "demo.manifest.json"


def example_files() -> tuple[Path, Path]:
    """The shipped example collection (JSONL) and query/gold file (4b TSV)."""
    from evalkit.pipelines.config import systems_folder

    folder = systems_folder("examples")
    return folder / "collection.jsonl", folder / "tweets.tsv"


def own_outputs(folder: Path, outputs: list[Path]) -> dict[str, str] | None:
    """The previous demo's record (file name -> sha256) when every existing output is a file it wrote, unchanged since; else None."""
    from evalkit.core.errors import EvalkitError, UsageError
    from evalkit.io.textio import parse_json, read_input_bytes

    existing = [Path(p) for p in outputs if os.path.lexists(p)]
    record_path = folder / RECORD
    if not existing or not record_path.is_file() or record_path.is_symlink():
        return None
    try:
        record = parse_json(read_input_bytes(record_path, 1 << 20), str(record_path))
    except EvalkitError:  # an unreadable record: nothing is recognised
        return None
    recorded = record.get("outputs") if isinstance(record, dict) and record.get("evalkit_demo") == 1 else None
    if not isinstance(recorded, dict):
        return None
    for path in existing:
        if path == record_path:
            continue
        if path.is_symlink() or not path.is_file() or recorded.get(path.name) != hashlib.sha256(path.read_bytes()).hexdigest():
            raise UsageError(f"{path}: exists and is not the previous demo's output (changed since, or not written by it); "
                             "pass --force to overwrite")
    return {str(k): str(v) for k, v in recorded.items()}


def _record(folder: Path, written, recorded: dict[str, str], force: bool) -> dict[str, str]:
    """Stage RECORD: the earlier entries updated with the sha256 of every file staged so far."""
    from evalkit.core.jsonout import strict
    from evalkit.io.transactions import atomic_write

    outputs = {**recorded, **{Path(path).name: digest for path, digest in written.digests().items() if Path(path).name != RECORD}}
    atomic_write(folder / RECORD, strict({"evalkit_demo": 1, "outputs": outputs}, str(folder / RECORD), indent=1) + "\n", force=force)
    return outputs


@click.command()
@click.option("--out-dir", default="evalkit-demo", show_default=True, type=click.Path(file_okay=False), help="Folder for every output.")
@FORCE_OPTION
def demo(out_dir, force):
    """BM25 on the shipped 4b-style example: run -> submission -> validate -> score -> report."""
    from evalkit.report import text as render
    from evalkit.api import score
    from evalkit.core.errors import UsageError
    from evalkit.io.reading import read_qrels
    from evalkit.pipelines.run import run_pipeline
    from evalkit.api.report import report_figures, write_report
    from evalkit.scoring.runset import resolve_task
    from evalkit.tasks.submissions import validate, write_submission
    from evalkit.io.transactions import atomic_write, check_outputs, sidecar_of, transaction

    from evalkit.core.errors import require

    require("Stemmer", "`evalkit demo` (BM25 with a stemming analyzer)")  # a light install: one line before any folder is made
    collection, tweets = example_files()
    if not collection.exists() or not tweets.exists():
        raise UsageError(f"{collection.parent}: the example files are missing from this installation")
    folder = Path(out_dir)
    stem_path, plain_path = folder / "bm25-stem.trec", folder / "bm25-whitespace.trec"
    submission, scores, report_md = folder / "submission.zip", folder / "scores.json", folder / "report.md"
    outputs = [stem_path, sidecar_of(stem_path), plain_path, sidecar_of(plain_path), submission, sidecar_of(submission), scores,
               report_md, *report_figures(report_md), folder / RECORD]
    folder.mkdir(parents=True, exist_ok=True)
    recorded = None if force else own_outputs(folder, outputs)
    force = force or recorded is not None  # a previous demo's files, unchanged, are replaced
    check_outputs(outputs, force)
    gold = read_qrels(tweets)
    task = resolve_task("auto", gold)[0].name  # the task comes from the gold, as for any command

    def progress(message: str) -> None:
        click.echo(f"   {message}", err=True)

    click.echo(f"1. BM25 (stem analyzer) on {collection.name} ({tweets.name} as queries) -> {stem_path}, {submission}", err=True)
    stem = run_pipeline("bm25", collection, tweets, set_options=["analyzer=stem"], k=100, gold=gold, progress=progress)
    write_submission(stem.run, task, submission, str(tweets), force, command="demo")
    stem.save(stem_path, force=force, task=task, command="demo")
    click.echo(f"2. BM25 (whitespace analyzer), the baseline -> {plain_path}", err=True)
    plain = run_pipeline("bm25", collection, tweets, set_options=["analyzer=whitespace"], k=100, gold=gold, progress=progress)
    plain.save(plain_path, force=force, command="demo")
    with transaction() as written:
        recorded = _record(folder, written, recorded or {}, force)
        written.commit()  # the runs and the submission: validated and scored below as files
    click.echo(f"3. validate {submission}", err=True)
    checked = validate(submission, task, gold=[tweets], collection_ids=[collection])
    for line in checked.lines():
        click.echo(line)
    click.echo(checked.verdict())
    if not checked.valid:
        raise UsageError(f"{submission}: the demo submission did not validate")
    click.echo(f"4. score {submission} -> {scores}", err=True)
    scored = score(submission, gold)
    atomic_write(scores, render.RENDERERS["json"](scored.task_score, scored.manifest) + "\n", force=force)
    click.echo(render.RENDERERS["table"](scored.task_score))
    click.echo(f"5. report: whitespace vs stem -> {report_md}", err=True)
    write_report(gold, plain.run.with_name(plain_path.stem), stem.run.with_name(stem_path.stem), out=report_md, force=force)
    with transaction() as written:
        _record(folder, written, recorded, force)
    click.echo(f"done: run {stem_path}, submission {submission}, scores {scores}, report {report_md} (figures beside it)", err=True)
