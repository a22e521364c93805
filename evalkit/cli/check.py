"""``evalkit check --baseline FILE``: fail CI when a recorded score drops.

Exit code 0: no score dropped by more than the tolerance; 1: some did;
2: the baseline or an entry's files cannot be read (the table is still printed).
"""
from __future__ import annotations

import contextlib

import click

from evalkit.cli.common import ALLOW_PARTIAL_OPTION, FINITE, MISSING_OPTION


@click.command()
@click.option("--baseline", "baseline_path", required=True, type=click.Path(dir_okay=False), help="Baseline JSON (paths inside are relative to its folder).")
@click.option("--tolerance", type=FINITE, default=None, help="Allowed drop before failing (default: the baseline's, else 0.001).")
@click.option("--update", is_flag=True, help="Rewrite the baseline's expected values with the current ones.")
@click.option("--add", "add", is_flag=True, help="Record a new entry (needs --task, --gold, --run); creates the baseline if needed.")
@click.option("--task", default=None, help="With --add: the task (see `evalkit tasks`).")
@click.option("--gold", default=None, type=click.Path(dir_okay=False), help="With --add: the gold file (path relative to the current folder).")
@click.option("--run", "run_path", default=None, type=click.Path(dir_okay=False), help="With --add: the run file.")
@click.option("--metric", "--metrics", "metric", default=None, help="With --add: the metric (default: the task's official score).")
@click.option("--name", default=None, help="With --add: the entry's name (default: folder/run name).")
@MISSING_OPTION
@ALLOW_PARTIAL_OPTION
def check(baseline_path, tolerance, update, add, task, gold, run_path, metric, name, missing, allow_partial):
    """Recompute every score of a baseline and compare: expected / now / delta.

    Exits 1 when any score dropped by more than the tolerance (improvements
    are reported). `--update` records the current values; `--add --task T
    --gold G --run R [--metric M]` records a new entry.
    """
    from evalkit.scoring import check as regression
    from evalkit.core.errors import UsageError
    from evalkit.core.safetext import visible

    if tolerance is not None and not (0 <= tolerance < float("inf")):
        raise UsageError(f"--tolerance must be a finite number >= 0 (got {tolerance})")
    add_options = {"--task": task, "--gold": gold, "--run": run_path, "--metric": metric, "--name": name, "--missing": missing}
    if add:
        lacking = [k for k in ("--task", "--gold", "--run") if not add_options[k]]
        if lacking:
            raise UsageError(f"--add needs {', '.join(lacking)}")
        with regression.locked(baseline_path):  # concurrent --add / --update never lose an entry
            base = regression.load(baseline_path, create=True)
            entry = regression.add_entry(base, task, gold, run_path, metric, name, {"missing": missing, "allow_partial": allow_partial})
            base.save()
        click.echo(visible(f"added {entry.name}: {entry.metric} = {entry.expected:.6f} ({entry.task}) to {baseline_path}"))
        return
    given = [k for k, v in add_options.items() if v] + (["--allow-partial"] if allow_partial else [])
    if given:
        raise UsageError(f"{', '.join(given)} only apply with --add")
    with regression.locked(baseline_path) if update else contextlib.nullcontext():
        return check_entries(regression.load(baseline_path), baseline_path, tolerance, update)


def check_entries(base, baseline_path: str, tolerance: float | None, update: bool) -> None:
    from evalkit.scoring import check as regression
    from evalkit.core.errors import UsageError
    from evalkit.core.safetext import visible

    if not base.entries:
        raise UsageError(f"{baseline_path}: the baseline has no entries; add some with --add")
    limit = base.tolerance if tolerance is None else tolerance
    scorer = regression.Scorer(base)
    results = [scorer.measure(entry) for entry in base.entries]
    click.echo(regression.render_table(results, limit))
    statuses = [r.status(limit) for r in results]
    for result in results:
        if result.error:
            click.echo(visible(f"error: {result.entry.name}: {result.error}"), err=True)
    counts = {s: statuses.count(s) for s in ("ok", "improved", "DROPPED", "error")}
    summary = ", ".join(f"{n} {s.lower()}" for s, n in counts.items() if n)
    click.echo(f"checked {len(results)} scores against {baseline_path} (tolerance {limit:g}): {summary}")
    if update:
        changed = 0
        for result in results:
            if result.now is not None and result.now != result.entry.expected:
                result.entry.expected = result.now
                changed += 1
        base.save()
        click.echo(f"updated {baseline_path}: {changed} expected values rewritten")
        if counts["error"]:
            raise click.exceptions.Exit(2)
        return
    if counts["error"]:
        raise click.exceptions.Exit(2)
    if counts["DROPPED"]:
        raise click.exceptions.Exit(1)
