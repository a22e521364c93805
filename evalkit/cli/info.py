"""``evalkit tasks``, ``evalkit metrics`` and ``evalkit formats``: what evalkit knows."""
from __future__ import annotations

import inspect

import click


def _task_head(task, measures: str) -> list[str]:
    """The lines ``evalkit tasks`` and ``evalkit profiles`` both open a task with: name, description, official, its measures."""
    return [task.name, f"  {task.description}", f"  official: {task.official_definition}",
            f"  {measures}: {', '.join(m.label for m in task.metrics())}"]


@click.command()
def tasks():
    """List tasks with their official score definitions."""
    from evalkit.tasks import tasks as all_tasks

    for task in all_tasks():
        lines = _task_head(task, "metrics")
        lines.append(f"  gold formats: {', '.join(task.gold_formats) or 'any'}; run formats: {', '.join(task.run_formats) or 'any'}")
        if task.dataset_ids:
            lines.append(f"  ir_datasets ids: {', '.join(task.dataset_ids)} (picked with --task auto on an irds: gold)")
        submission = task.submission_format
        if submission:
            labels = ", labels required" if task.labels_required else ""
            lines.append(f"  submission: {submission.description} ({task.submission_depth} per query{labels})")
        click.echo("\n".join(lines) + "\n")


@click.command()
def profiles():
    """List the evaluation profiles: how each benchmark is officially scored, the ir_datasets ids that pick it, the sources.

    A profile is a task: name it with --task NAME, or let an irds:<id> gold pick it (the most specific pattern wins).
    Your own: a Task plugin subclassing evalkit.tasks.profiles.ProfileTask, or a TOML file given as --task FILE.toml.
    """
    from evalkit.tasks import tasks as all_tasks

    for task in all_tasks():
        if not (task.dataset_ids or task.sources):
            continue
        lines = _task_head(task, "measures")
        if task.dataset_ids:
            lines.append(f"  ir_datasets ids: {', '.join(task.dataset_ids)}")
        lines += [f"  source: {source}" for source in task.sources]
        click.echo("\n".join(lines) + "\n")


@click.command()
def metrics():
    """List metrics, their aliases and definitions."""
    from evalkit.metrics import registered

    for cls in registered():
        doc = inspect.getdoc(cls) or ""
        first = doc.split("\n\n")[0].replace("\n", " ")
        cut = {"optional": "name or name@k", "required": "name@k", "none": "no cutoff"}[cls.cutoff]
        cut = cut.replace("@k", "@x, x a recall level in [0, 1]") if cls.cutoff_kind == "level" else cut
        names = ", ".join((*cls.aliases, *(f"{a}_k" for a in cls.cutoff_aliases), *cls.set_aliases))
        params = f"; name({', '.join(f'{p}=...' for p in cls.params)})" if cls.params else ""
        click.echo(f"{cls.name}  ({cut}{params}; aliases: {names})\n  {first}\n")


@click.command("formats")
def formats_command():
    """List the file formats evalkit reads (auto-detected; force with --format, --corpus-format)."""
    from evalkit.io.formats import formats

    for fmt in [f for f in formats() if f.kind != "collection"]:
        click.echo(f"{fmt.name:<20}{fmt.kind:<7}{fmt.description}")
    click.echo("\ncollections and queries (evalkit run, train: --corpus-format, --queries-format):")
    for fmt in formats("collection"):
        click.echo(f"{fmt.name:<20}{fmt.description}")
