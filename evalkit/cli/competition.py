"""``evalkit competition bundle|check|run``: a Codabench v2 competition whose scoring program is evalkit."""
from __future__ import annotations

import click

from evalkit.io.transactions import announce

from evalkit.cli.common import FORCE_OPTION, scoring_options


def _pairs(values, option: str, separator: str = "=") -> dict[str, str]:
    """``NAME=VALUE`` options as a mapping (one line for a malformed one)."""
    from evalkit.core.errors import UsageError

    out = {}
    for value in values:
        name, found, rest = value.partition(separator)
        if not found or not name or not rest:
            raise UsageError(f"{option} {value!r}: write NAME{separator}VALUE")
        out[name] = rest
    return out


@click.group()
def competition():
    """Organise a shared task on Codabench: build a bundle, check it, run a submission through it."""


@competition.command()
@click.argument("task")
@click.option("--phase", "phases", multiple=True, required=True, metavar="NAME:GOLD",
              help="A phase and its gold file, in order (e.g. --phase dev:dev_gold.tsv --phase test:test_gold.tsv).")
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False), help="The bundle to write (NAME.zip).")
@click.option("--title", default=None, help="Competition title (default: the task's real title, for the built-in tasks).")
@click.option("--description", default=None, help="One-paragraph description (default: the task's).")
@click.option("--start", "starts", multiple=True, metavar="NAME=DATE", help="A phase's start (YYYY-MM-DD[ HH:MM:SS], UTC).")
@click.option("--end", "ends", multiple=True, metavar="NAME=DATE", help="A phase's end (default: four weeks; the last phase open-ended).")
@click.option("--detailed", multiple=True, metavar="NAME=full|summary",
              help="Detailed results of a phase: full (evalkit's per-query page: shows the gold) or summary. "
                   "Default: full for phases named dev/train/practice/valid, else summary.")
@click.option("--terms", type=click.Path(dir_okay=False), default=None, help="Terms of participation (Markdown; default: evalkit's).")
@click.option("--max-submissions-per-day", type=click.IntRange(min=0), default=None, help="Per participant and day (default 5).")
@click.option("--max-submissions", type=click.IntRange(min=0), default=None, help="Per participant and phase (default 100).")
@click.option("--time-limit", "execution_time_limit", type=click.IntRange(1, 600), default=None,
              help="Seconds a scoring run may take (default 300; Codabench's default queue caps at 600).")
@click.option("--submission-rule", default="Force_Last", show_default=True,
              help="Codabench's leaderboard rule: Add, Add_And_Delete, Add_And_Delete_Multiple, Force_Last, "
                   "Force_Latest_Multiple or Force_Best.")
@click.option("--precision", type=int, default=4, show_default=True, help="Decimals shown on the leaderboard.")
@click.option("--docker-image", default=None, help="Image the worker runs (default codalab/codalab-legacy:py312).")
@click.option("--max-submission-size", default="256M", show_default=True, help="Largest submission file, read or decompressed.")
@click.option("--contact-email", default=None, help="The organisers' address, shown on the competition page.")
@click.option("--submission-rules", type=click.Choice(["enforce", "warn"]), default="enforce", show_default=True,
              help="enforce: a submission that `evalkit validate` calls INVALID fails (one line naming the rule and its "
                   "first line); warn: it is scored anyway, the rule's line printed as a note.")
@click.option("--no-self-test", is_flag=True, help="Skip scoring a submission rebuilt from each phase's gold through the bundle.")
@scoring_options(without=("task",))
@FORCE_OPTION
def bundle(task, phases, out_path, title, description, starts, ends, detailed, terms, max_submissions_per_day, max_submissions,
           execution_time_limit, submission_rule, precision, docker_image, max_submission_size, contact_email, submission_rules,
           no_self_test, force, scoring):
    """Write a Codabench v2 bundle for TASK (any task `evalkit tasks` lists).

    One phase (and one Codabench task) per --phase, each scored against its
    gold by evalkit vendored into the scoring program; one leaderboard column
    per figure the task reports, the official one first; overview, evaluation
    and submission-format pages written from the task's declaration.
    """
    from evalkit.competition import make_bundle
    from evalkit.io.textio import parse_size

    pairs = [_pairs([p], "--phase", ":").popitem() for p in phases]
    options = {"submission_rule": submission_rule, "precision": precision, "max_submission_size": parse_size(max_submission_size),
               "contact_email": contact_email, "scoring": scoring, "submission_rules": submission_rules}
    if docker_image:
        options["docker_image"] = docker_image
    result = make_bundle(task, pairs, out_path, title=title, description=description, starts=_pairs(starts, "--start"),
                         ends=_pairs(ends, "--end"), detailed=_pairs(detailed, "--detailed"), terms=terms, force=force,
                         test=not no_self_test, max_submissions_per_day=max_submissions_per_day, max_submissions=max_submissions,
                         execution_time_limit=execution_time_limit, **options)
    click.echo(f"columns: {', '.join(c.key for c in result.columns)} (primary: {result.columns[0].key})")
    for phase, scores in result.self_test.items():
        click.echo(f"self-test {phase}: a submission rebuilt from its gold scored {scores[result.columns[0].key]:.4f} "
                   f"({result.columns[0].key}), as evalkit scores it")
    announce(f"wrote {result.path} and {result.path}.manifest.json")


@competition.command()
@click.argument("bundle_path", metavar="BUNDLE.zip", type=click.Path(dir_okay=False))
@click.option("--rules", "show_rules", is_flag=True, help="List the rules checked, then check.")
def check(bundle_path, show_rules):
    """Check BUNDLE.zip against Codabench's v2 rules and evalkit's; one line per problem; exit 2 if any."""
    from evalkit.competition.lint import all_rules, lint_bundle

    if show_rules:
        for rule_id, description in all_rules().items():
            click.echo(f"{rule_id:<22}{description}")
    notes: list[str] = []
    problems = lint_bundle(bundle_path, notes)
    for note in notes:
        click.echo(f"{bundle_path}: {note}")
    for problem in problems:
        click.echo(problem.line(), err=problem.severity == "error")
    errors = sum(p.severity == "error" for p in problems)
    if errors:
        click.echo(f"{bundle_path}: {errors} problem(s)", err=True)
        return 2
    warnings = len(problems) - errors
    click.echo(f"{bundle_path}: ok" + (f" ({warnings} warning(s))" if warnings else ""))
    return 0


@competition.command("run")
@click.argument("bundle_path", metavar="BUNDLE.zip", type=click.Path(dir_okay=False))
@click.argument("submission", type=click.Path(dir_okay=False))
@click.option("--phase", default=None, help="Phase to submit to (default: the phase open now, else the first).")
@click.option("--out", "out_path", default=None, type=click.Path(file_okay=False),
              help="Folder to keep the scoring output in: scores.json, detailed_results.html, worker.json "
                   "(default: SUBMISSION's name + .scoring, here).")
@click.option("--python", default=None, help="Interpreter that stands for the image's python3 (default: this one).")
@FORCE_OPTION
def run(bundle_path, submission, phase, out_path, python, force):
    """Score SUBMISSION (the zip a participant uploads) with BUNDLE.zip as Codabench's compute worker would.

    Prints the leaderboard row (exit 0), or the failure the participant would
    see (exit 1), and keeps the scoring output (detailed_results.html
    included) and worker.json (what ran, its logs, the row, a manifest).
    """
    from pathlib import Path

    from evalkit.core.jsonout import strict

    from evalkit.competition.worker import run_submission

    out_path = out_path or f"{Path(submission).stem}.scoring"
    _check_folder(out_path, force, [bundle_path, submission])
    done = run_submission(bundle_path, submission, phase, python)
    for line in done.stdout.splitlines():
        click.echo(f"  | {line}", err=True)
    for line in done.stderr.splitlines():
        click.echo(f"  ! {line}", err=True)
    for key in done.unmatched:
        click.echo(f"warning: scores key {key!r} matches no leaderboard column; Codabench drops it silently", err=True)
    files = dict(done.output, **{"worker.json": (strict(done.as_json(), "worker.json", indent=2) + "\n").encode()})
    _write_folder(out_path, files, force)
    announce(f"wrote {out_path}/ ({', '.join(sorted(files))})")
    if done.failure:
        click.echo(f"phase {done.phase}: submission failed: {done.failure}", err=True)
        return 1
    width = max(len(c.title) for c in done.row)
    click.echo(f"phase {done.phase}: leaderboard row ({done.scores_file}, {done.elapsed:.1f} s)")
    for cell in done.row:
        click.echo(f"  {cell.title:<{width}}  {cell.shown():>12}   ({cell.key})")
    return 0


def _check_folder(path: str, force: bool, inputs: list[str]) -> None:
    """Refuse (before any work) an output folder that exists without --force, or that is an input."""
    import os

    from evalkit.core.errors import UsageError

    if any(os.path.realpath(path) == os.path.realpath(i) for i in inputs):
        raise UsageError(f"{path}: is also an input; write the output elsewhere")
    if os.path.lexists(path) and not force:
        raise UsageError(f"{path}: exists; pass --force to replace it")
    parent = os.path.dirname(os.path.normpath(path)) or "."
    if not os.path.isdir(parent):
        from evalkit.io.transactions import output_label

        raise UsageError(f"{output_label(path)}: output folder {parent} does not exist")


def _write_folder(path: str, files: dict[str, bytes], force: bool) -> None:
    """The folder written whole: a sibling built first, then renamed into place (an old one replaced only with --force)."""
    import os
    import shutil
    import tempfile
    from pathlib import Path

    target = Path(path)
    parent = target.parent if str(target.parent) else Path(".")
    staged = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=parent))
    try:
        for name, data in files.items():
            (staged / name).write_bytes(data)
        staged.chmod(0o755)
        if target.exists() and force:
            shutil.rmtree(target) if target.is_dir() and not target.is_symlink() else target.unlink()
        os.replace(staged, target)
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        raise
