"""What a task is: how its gold is read, which metrics it reports, what its official score is."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping, Sequence

import numpy as np

from evalkit.data import Qrels, Run
from evalkit.metrics.evaluation import MISSING_POLICIES, Evaluation, evaluate
from evalkit.metrics import Metric, parse_metrics
from evalkit.data.ranking import RANKING_RULE


def metric_names(extra: str | Sequence[str]) -> str | list[str] | tuple[str, ...]:
    """``extra`` as :func:`~evalkit.metrics.parse_metrics` reads it: a sequence of names that is not a list or tuple
    (a ``UserList``, say) as a list; anything else as given (``parse_metrics`` refuses what is not metric names)."""
    if isinstance(extra, (str, list, tuple)) or not isinstance(extra, Sequence):
        return extra
    return list(extra)


@dataclass(frozen=True, eq=False)
class TaskScore:
    """A task's verdict on one run: the official figure first, then the other metrics."""

    task: str
    official: str  # label of the official figure in ``values``
    values: dict[str, float]  # official first
    evaluation: Evaluation  # per-query values of the ranking metrics
    notes: list[str] = field(default_factory=list)  # policy notes printed with the result
    undefined: str | None = None  # why the official figure is undefined (then NaN), as an official scorer's 404

    @property
    def official_value(self) -> float:
        return self.values[self.official]

    @property
    def missing(self) -> str:
        return self.evaluation.missing

    def policy_lines(self) -> list[str]:
        ev = self.evaluation
        lines = [
            f"ranking rule: {RANKING_RULE}",
            f"missing queries: {ev.missing} ({MISSING_POLICIES[ev.missing]}); "
            f"{len(ev.gold_only)} of {ev.n_gold} gold queries missing from the run",
        ]
        if ev.run_only:
            lines.append(f"run-only queries: {len(ev.run_only)} (not in the gold; ignored)")
        if ev.excluded:
            lines.append(f"excluded gold queries: {len(ev.excluded)} (task rule)")
        if ev.depth is not None:
            lines.append(f"depth: only the top {ev.depth} documents of each ranking count (trec_eval -M {ev.depth})")
        if ev.judged_only:
            lines.append("judged only: unjudged documents removed from every ranking before scoring (condensed lists, trec_eval -J)")
        if ev.judgment_groups:
            lines.append(f"judgment groups: each query's value is the mean over the {ev.judgment_groups} groups' judgments of it "
                         "(trec_eval -R qrels_jg)")
        if ev.standardized:
            lines.append("standardised: per-query values are z-scores against the reference means and deviations (trec_eval -Z)")
        return lines + self.notes


@dataclass(frozen=True)
class CompetitionPreset:
    """A task's real competition settings, the defaults of ``evalkit competition bundle``."""

    title: str
    description: str
    phases: Mapping[str, str] = field(default_factory=dict)  # phase name -> its description


class Task:
    """A shared task, declared in one class: how its files look, what it reports, what is official.

    A task declares its gold and run formats (names of :mod:`evalkit.io.formats`
    readers), its submission format (a registered
    :class:`~evalkit.submission.SubmissionFormat` name, or the format object
    itself for a third-party task), the ids per query of a submission, whether
    submissions must carry labels, and how it is detected (:meth:`detects`).
    Tasks register through the ``evalkit.tasks`` entry-point group, the
    built-ins exactly as third-party tasks (see :mod:`evalkit.tasks`).
    """

    name: ClassVar[str]
    description: ClassVar[str]
    official_definition: ClassVar[str]
    default_metrics: ClassVar[str]
    gold_formats: ClassVar[tuple[str, ...]] = ()  # gold formats this task reads (detection: the gold's format)
    run_formats: ClassVar[tuple[str, ...]] = ()  # run formats it expects (empty: any run format)
    default_missing: ClassVar[str] = "zero"
    submission: ClassVar[Any] = None  # a SubmissionFormat name or object, or None (no official file)
    submission_depth: ClassVar[int | None] = None  # ids per query in an official submission
    labels_required: ClassVar[bool] = False  # submissions must carry a label per row
    dataset_ids: ClassVar[tuple[str, ...]] = ()  # ir_datasets ids (shell patterns) whose gold picks this task with auto
    sources: ClassVar[tuple[str, ...]] = ()  # where the official definition comes from (overview paper, documentation)
    competition: ClassVar[CompetitionPreset | None] = None  # the title, description and phases of its competition
    leaderboard_keys: ClassVar[Mapping[str, str]] = {}  # figure label -> its scores.json key (the organisers' names)
    figure_definitions: ClassVar[Mapping[str, str]] = {}  # figure label -> what it means, for figures no metric defines

    @property
    def submission_format(self):
        """The task's official submission format (:mod:`evalkit.submission`: check + write), or ``None``."""
        if self.submission is None or not isinstance(self.submission, str):
            return self.submission
        from evalkit.submission import get_format

        return get_format(self.submission)

    def detects(self, gold_format: str, run: Run | None = None) -> int:
        """How strongly a gold file of ``gold_format`` points to this task: 0 not at all; the strongest claim wins.

        ``run`` is always ``None`` (kept for plugins written against it): the task comes from the gold or the
        user, never from a participant's file."""
        return 1 if gold_format in self.gold_formats else 0

    def metrics(self, extra: str | Sequence[str] | None = None) -> list[Metric]:
        """The official metrics, then the task's defaults or the user's choice."""
        chosen = parse_metrics(metric_names(extra)) if extra else parse_metrics(self.default_metrics)
        return list(dict.fromkeys(self.official_metrics() + chosen))

    def official_metrics(self) -> list[Metric]:  # pragma: no cover - abstract
        raise NotImplementedError

    def official_value(self, evaluation: Evaluation) -> tuple[str, float]:
        metric = self.official_metrics()[0]
        return metric.label, evaluation.mean(metric)

    def keep_gold(self, qrels: Qrels) -> np.ndarray | None:
        """Mask over gold queries that this task evaluates (``None``: all)."""
        return None

    def score(
        self,
        run: Run,
        qrels: Qrels,
        metrics: str | Sequence[str] | None = None,
        *,
        missing: str | None = None,
        allow_partial: bool = False,
        relevance_level: float = 1,
        depth: int | None = None,
        judged_only: bool = False,
        num_docs: int = 0,
        zscores: Any = None,
        groups: Any = None,
    ) -> TaskScore:
        """Score ``run``: the official figure, then the metrics.

        ``judged_only`` (trec_eval ``-J``), ``num_docs`` (``-N``), ``zscores``
        (``-Z``: a :class:`~evalkit.metrics.zscores.ZScores`) and ``groups``
        (``-R qrels_jg``: ``{group: Qrels}``, see :mod:`evalkit.metrics.judgment_groups`)
        are trec_eval's evaluation options.
        """
        chosen = self.metrics(metrics)
        options: dict[str, Any] = dict(missing=missing or self.default_missing, allow_partial=allow_partial,
                                       relevance_level=relevance_level, keep_gold=self.keep_gold(qrels), depth=depth,
                                       judged_only=judged_only, num_docs=num_docs)
        if groups:
            from evalkit.metrics.judgment_groups import evaluate_groups

            evaluation = evaluate_groups(run, groups, chosen, **options)
        else:
            evaluation = evaluate(run, qrels, chosen, **options)
        if zscores is not None:
            from evalkit.metrics.zscores import standardized

            evaluation = standardized(evaluation, zscores)
        official, value = self.official_value(evaluation)
        values = {official: value}
        values.update({m.label: evaluation.mean(m) for m in chosen if m.label not in values and not m.text})
        return TaskScore(task=self.name, official=official, values=values, evaluation=evaluation)
