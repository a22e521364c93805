"""The report as a Python API: ``evalkit.write_report(gold, *runs, out="reports/NAME.md")``.

Runs and gold may be paths, :class:`~evalkit.data.Run` / :class:`~evalkit.data.Qrels`
objects, DataFrames or dicts (as :func:`evalkit.score` takes them), so a
pipeline can report on the runs it holds in memory. :func:`prepare_report`
scores every run once; the Markdown report (:func:`save_markdown`) and the
HTML page of ``evalkit report --html`` are both built from what it returns.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from evalkit.stats.comparison import SIGNIFICANCE_TESTS, CompareOptions
from evalkit.core.errors import UsageError
from evalkit.core.options import ScoringOptions

if TYPE_CHECKING:  # pragma: no cover
    from evalkit.io.reading import QrelsLike, RunLike
    from evalkit.data import Qrels
    from evalkit.report.document import ReportOptions
    from evalkit.scoring.runset import ScoredRun
    from evalkit.tasks.base import Task

@dataclass(frozen=True, eq=False)
class PreparedReport:
    """Every run scored against the gold, the report's choices and its manifest."""

    task: "Task"
    qrels: "Qrels"
    scored: "list[ScoredRun]"
    options: "ReportOptions"
    manifest: dict[str, Any]

    @property
    def policy(self) -> list[str]:
        return self.scored[0].score.policy_lines()


@dataclass(frozen=True)
class ReportResult:
    """What :func:`write_report` wrote: the Markdown file, its figures, the text and the manifest."""

    path: Path
    figures: list[Path]
    markdown: str = field(repr=False)
    manifest: dict[str, Any] = field(repr=False)


def report_figures(target: str | Path) -> list[Path]:
    """The figures written next to a Markdown report ``NAME.md`` (refused unless it ends in .md)."""
    target = Path(target)
    if target.suffix.lower() != ".md":
        raise UsageError(f"{target}: the report is Markdown; name it NAME.md")
    return [target.with_name(f"{target.stem}.first-relevant-rank.png"), target.with_name(f"{target.stem}.query-length.png")]


def prepare_report(
    gold: "QrelsLike",
    runs: "Sequence[RunLike]",
    *,
    names: Sequence[str] | None = None,
    baseline: str | int | None = None,
    metric: str | None = None,
    pair: tuple[str, str] | None = None,
    top: int = 10,
    length_buckets: int = 4,
    test: str = "wilcoxon",
    compare: CompareOptions | None = None,
    title: str | None = None,
    scoring: ScoringOptions | None = None,
    extra_inputs: Sequence[dict[str, Any]] = (),
    extra_options: Mapping[str, Any] | None = None,
    progress: bool = False,
) -> PreparedReport:
    """Score ``runs`` on ``gold`` under ``scoring`` (one task, one missing-query policy) and fix the report's baseline, metric and pair."""
    from evalkit.api import score_many
    from evalkit.io.reading import input_entry
    from evalkit.scoring.runset import paths_of as _paths_of
    from evalkit.io.manifest import build_manifest
    from evalkit.metrics import parse_metric
    from evalkit.report.document import ReportOptions
    from evalkit.scoring.runset import comparison_metric, default_metric_labels, pick_run

    if not runs:
        raise UsageError("a report needs at least one run")
    if top < 1 or length_buckets < 1:
        raise UsageError("--top and --length-buckets must be positive")
    if test not in SIGNIFICANCE_TESTS:
        raise UsageError(f"unknown test {test!r} (choose {', '.join(SIGNIFICANCE_TESTS)})")
    compare = compare or CompareOptions()
    compare.check()
    scoring = scoring or ScoringOptions()
    chosen = parse_metric(metric).label if metric else None

    def wanted(the_task: "Task") -> list[str] | None:
        metrics = list(scoring.metrics or ())
        if not chosen:
            return metrics or None
        return (metrics or default_metric_labels(the_task)) + [chosen]

    the_task, qrels, scored = score_many(
        gold, runs, wanted, names=names, scoring=scoring, progress=progress,
    )
    run_names, paths = [s.name for s in scored], _paths_of(runs)
    base = pick_run(baseline, run_names, paths, "--baseline")
    chosen_pair = (pick_run(pair[0], run_names, paths, "--pair"), pick_run(pair[1], run_names, paths, "--pair")) if pair else None
    if chosen_pair and chosen_pair[0] == chosen_pair[1]:
        raise UsageError("--pair needs two different runs")
    label = comparison_metric(the_task, scored[0].score, chosen)
    options = ReportOptions(baseline=base, metric=label, test=test, compare=compare, pair=chosen_pair, top=top,
                            length_buckets=length_buckets, title=title)
    manifest = build_manifest(
        the_task.name,
        [input_entry("gold", qrels)] + [input_entry(f"run:{s.name}", s.run) for s in scored] + list(extra_inputs),
        {
            "metrics": list(scored[0].score.values), "metric": label, "baseline": base, "test": test,
            "zero_method": compare.zero_method, "permutations": compare.permutations, "correction": compare.correction,
            "alpha": compare.alpha, "pair": list(chosen_pair) if chosen_pair else None, "top": top, "length_buckets": length_buckets,
            "missing": scored[0].score.missing, "relevance_level": scoring.relevance_level, "depth": scoring.depth,
            "allow_partial": scoring.allow_partial,
            **(extra_options or {}),
        },
        seed=compare.seed,
        command="report",
    )
    return PreparedReport(task=the_task, qrels=qrels, scored=scored, options=options, manifest=manifest)


def save_markdown(prepared: PreparedReport, out: str | Path, *, force: bool = False, appendix: str = "") -> ReportResult:
    """Build the Markdown report of ``prepared`` and write it, its figures beside it (atomically); ``appendix`` ends it."""
    from evalkit.report.document import build_report
    from evalkit.io.transactions import atomic_write, committed_together

    target = Path(out)
    built = build_report(prepared.task.name, prepared.qrels, prepared.scored, prepared.options, target.stem, prepared.manifest,
                         prepared.policy)
    figures = [target.with_name(name) for name in built.figures]
    markdown = built.markdown + appendix
    with committed_together([target, *figures], force):
        for path, png in zip(figures, built.figures.values()):
            atomic_write(path, png, force=force)
        atomic_write(target, markdown, force=force)
    return ReportResult(path=target, figures=figures, markdown=markdown, manifest=prepared.manifest)


def write_report(
    gold: "QrelsLike",
    *runs: "RunLike",
    out: str | Path,
    force: bool = False,
    names: Sequence[str] | None = None,
    baseline: str | int | None = None,
    metric: str | None = None,
    pair: tuple[str, str] | None = None,
    top: int = 10,
    length_buckets: int = 4,
    test: str = "wilcoxon",
    zero_method: str = "wilcox",
    permutations: int = 10_000,
    correction: str = "holm",
    alpha: float = 0.05,
    seed: int = 42,
    title: str | None = None,
    scoring: ScoringOptions | None = None,
    **options: Any,
) -> ReportResult:
    """Write the Markdown report on ``runs`` scored against ``gold`` to ``out`` (``NAME.md``), figures beside it.

    Leaderboard (official score first, significance markers against the
    baseline, default the first run, tested with ``test`` and corrected with
    ``correction``), the rank of the first relevant document, the metric by
    query length, the largest per-query wins and losses of ``pair`` and the
    manifest. Nothing is overwritten without ``force``; nothing is written
    when any input is refused. The scoring choices (task, missing, depth, ...)
    are ``scoring`` and/or its fields as keywords (:class:`~evalkit.core.options.ScoringOptions`).
    """
    from evalkit.io.transactions import check_outputs, transaction

    target = Path(out)
    with transaction():  # the report and its figures, or nothing
        check_outputs([target, *report_figures(target)], force,
                      inputs=[r for r in (gold, *runs) if isinstance(r, (str, os.PathLike))])
        compare = CompareOptions(zero_method=zero_method, permutations=permutations, seed=seed, correction=correction, alpha=alpha)
        prepared = prepare_report(
            gold, runs, names=names, baseline=baseline, metric=metric, pair=pair, top=top, length_buckets=length_buckets,
            test=test, compare=compare, title=title, scoring=ScoringOptions.of(scoring, **options),
        )
        return save_markdown(prepared, target, force=force)
