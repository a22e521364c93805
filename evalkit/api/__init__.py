"""evalkit's Python API: everything a notebook needs; the command line is a thin layer over it.

>>> import evalkit
>>> result = evalkit.score("run.trec", "qrels.txt", metrics="ndcg@10 mrr@10")   # doctest: +SKIP
>>> result.official, result.means["MRR@10"]                                     # doctest: +SKIP
>>> result.per_query                                    # a DataFrame: one row per query  # doctest: +SKIP

Runs and gold files may be given as a path (any format ``evalkit formats``
lists), a :class:`~evalkit.data.Run` / :class:`~evalkit.data.Qrels`, a pandas
DataFrame (``query_id, doc_id, score`` / ``query_id, doc_id, relevance``, or
the alias names of :mod:`evalkit.core.columns`) or a nested dict
``{query_id: {doc_id: score}}`` (a ``{query_id: [doc_id, ...]}`` dict is a
list run in list order). Every result carries the warnings and the manifest
the command line prints or writes. Heavy libraries (pandas, scipy) are
imported only when a result needs them.

The rest of the API lives beside what it drives and is re-exported by
``import evalkit`` as well: :func:`evalkit.run_pipeline` (:mod:`evalkit.pipelines.run`),
:func:`evalkit.write_report` (:mod:`evalkit.api.report`),
:func:`evalkit.write_submission` and :func:`evalkit.validate` (:mod:`evalkit.tasks.submissions`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence


from evalkit.data import Qrels, Run, Source
from evalkit.core.errors import UsageError
from evalkit.core.options import ScoringOptions
from evalkit.io.reading import (
    QrelsLike,
    RunLike,
    as_qrels,
    as_run,
    input_entry,
    read_qrels,
    read_run,
)
from evalkit.scoring.runset import check_task_name, resolve_task
from evalkit.scoring.runset import paths_of as _paths_of, run_names as _run_names

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from evalkit.stats.allpairs import AllPairs
    from evalkit.stats.comparison import Comparison
    from evalkit.scoring.runset import ScoredRun
    from evalkit.stats.paired import PairedValues
    from evalkit.tasks.base import Task, TaskScore


class _ManifestOnFirstUse:
    """A result's ``manifest`` (version, inputs with their sha256, task, options, ranking rule), built by its
    ``manifest_of`` when first asked for: the sha256 of a large input is waited for only by what shows or writes it."""

    manifest_of: Callable[[], dict[str, Any]]

    @property
    def manifest(self) -> dict[str, Any]:
        built = self.__dict__.get("_manifest")
        if built is None:
            built = self.manifest_of()
            object.__setattr__(self, "_manifest", built)
        return built


def _manifest_inputs(items: Sequence[tuple[str, Run | Qrels]]) -> Callable[[], list[dict[str, Any]]]:
    """The manifest entries of ``(role, input)`` pairs, made when called: a file's from its Source (its sha256 waited
    for then), an in-memory input's now (so a pending manifest keeps no run or gold alive)."""
    from evalkit.io.manifest import input_entry as file_entry

    named = [(role, item.source if item.source is not None else input_entry(role, item)) for role, item in items]
    return lambda: [file_entry(role, what) if isinstance(what, Source) else what for role, what in named]


# ----------------------------------------------------------------- score
@dataclass(frozen=True, eq=False)
class ScoreResult(_ManifestOnFirstUse):
    """One run scored against one gold: the official figure first, then the other metrics."""

    task: str
    official_name: str
    official: float
    means: dict[str, float]  # metric label -> value, official first
    warnings: list[str]
    manifest_of: Callable[[], dict[str, Any]] = field(repr=False)  # builds :attr:`manifest` when first asked for
    task_score: "TaskScore" = field(repr=False)
    task_reason: str = ""  # which task scored the run and why (also the first policy line)

    @property
    def policy(self) -> list[str]:
        """The ranking rule, the missing-query policy and the task's notes, as printed with every result."""
        return self.task_score.policy_lines()

    @property
    def per_query(self) -> "pd.DataFrame":
        """Per-query values: a DataFrame indexed by query id, one column per metric (NaN: undefined)."""
        from evalkit.core.errors import require

        pd = require("pandas", "ScoreResult.per_query (a DataFrame)")

        evaluation = self.task_score.evaluation
        frame = pd.DataFrame({label: values for label, values in evaluation.per_query.items()},
                             index=pd.Index(evaluation.query_ids.astype(str), name="query_id"))
        return frame

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v:.4f}" for k, v in list(self.means.items())[:6])
        return f"ScoreResult(task={self.task!r}, official={self.official_name}={self.official:.4f}, {shown})"


def score(
    run: RunLike,
    gold: QrelsLike,
    task: str | None = None,
    metrics: str | Sequence[str] | None = None,
    missing: str | None = None,
    *,
    scoring: ScoringOptions | None = None,
    **options: Any,
) -> ScoreResult:
    """Score ``run`` against ``gold``: the task's official score first, then ``metrics`` (or the task's defaults).

    ``task="auto"`` (the default) detects the task from the gold (CheckThat!
    4b, ClimateCheck, else ``trec``); ``missing`` is what gold queries absent
    from the run count as (``zero``, ``skip`` or ``error``; default: the
    task's). The other choices (``relevance_level``, ``depth``,
    ``allow_partial``, ``run_format``, ``gold_format``, ``column``, and
    trec_eval's ``judged_only`` (``-J``), ``num_docs`` (``-N``), ``zscores``
    (``-Z``) and ``judgment_groups`` (``-R qrels_jg``)) are the fields of
    :class:`~evalkit.core.options.ScoringOptions`, given as keywords or as
    ``scoring=``.
    """
    from evalkit.metrics.evaluation import sort_gold
    from evalkit.io.manifest import build_manifest, now_utc

    chosen = _scoring(scoring, options, task=task, metrics=metrics, missing=missing)
    check_task_name(chosen.task)
    groups = zscores = None
    if chosen.judgment_groups:
        from evalkit.metrics.judgment_groups import read_judgment_groups, union_qrels

        if not isinstance(gold, (str, os.PathLike)):
            raise UsageError("judgment groups need the gold as a file (qid group docid grade)")
        groups = read_judgment_groups(gold)
        qrels = union_qrels(groups)
    else:
        qrels = as_qrels(gold, format=chosen.gold_format)
    if chosen.zscores is not None:
        from evalkit.metrics.zscores import read_zscores

        zscores = read_zscores(chosen.zscores)
    the_task, reason = resolve_task(chosen.task, qrels)  # the gold's alone: decided while a run read ahead comes in
    sort_gold(qrels)
    the_run = as_run(run, format=chosen.run_format, column=chosen.column, against=None if groups else qrels)
    extra: dict[str, Any] = {key: value for key, value in (("zscores", zscores), ("groups", groups)) if value is not None}
    result = the_task.score(the_run, qrels, list(chosen.metrics) if chosen.metrics else None, **chosen.task_kwargs(), **extra)
    result = replace(result, notes=[reason, *result.notes])
    manifest_options = {"metrics": list(result.values), "missing": result.missing, "relevance_level": chosen.relevance_level,
                        "allow_partial": chosen.allow_partial}
    if chosen.depth is not None:
        manifest_options["depth"] = chosen.depth
    for key in ("judged_only", "num_docs", "zscores", "judgment_groups"):
        if getattr(chosen, key):
            manifest_options[key] = getattr(chosen, key)
    created, inputs = now_utc(), _manifest_inputs([("run", the_run), ("gold", qrels)])

    def manifest_of() -> dict[str, Any]:
        return build_manifest(the_task.name, inputs(), manifest_options, command="score", created=created)

    return ScoreResult(
        task=the_task.name, official_name=result.official, official=result.official_value, means=dict(result.values),
        warnings=list(result.evaluation.warnings), manifest_of=manifest_of, task_score=result, task_reason=reason,
    )


def _score_only(chosen: ScoringOptions) -> None:
    """Standardised scores and judgment groups are read by :func:`score` only (one run against one gold)."""
    for flag, what in (("zscores", "standardised scores (-Z)"), ("judgment_groups", "judgment groups (-R qrels_jg)")):
        if getattr(chosen, flag):
            raise UsageError(f"{what}: only `evalkit score` (evalkit.score) applies them, one run at a time")


def _scoring(scoring: ScoringOptions | None, options: Mapping[str, Any], **given: Any) -> ScoringOptions:
    """``scoring`` with the keywords given (``None``: not given) applied: the one way the API reads its scoring choices."""
    return ScoringOptions.of(scoring, **{k: v for k, v in given.items() if v is not None}, **options)


def score_many(
    gold: QrelsLike,
    runs: Sequence[RunLike],
    metrics: "Callable[[Task], Sequence[str] | None] | Sequence[str] | None" = None,
    *,
    names: Sequence[str] | None = None,
    scoring: ScoringOptions | None = None,
    progress: bool = False,
    **options: Any,
) -> "tuple[Task, Qrels, list[ScoredRun]]":
    """Score several runs on one gold under one task and one missing-query policy, so their per-query values pair up.

    ``metrics`` may be a function of the resolved task (to add to its defaults);
    names default to the file names (made unique) or the runs' own names; the
    scoring choices are ``scoring`` and/or its fields as keywords.
    """
    from evalkit.metrics.evaluation import sort_gold
    from evalkit.scoring.runset import score_one, with_progress

    chosen = _scoring(scoring, options)
    check_task_name(chosen.task)
    _score_only(chosen)
    qrels = as_qrels(gold, format=chosen.gold_format)
    labels = _run_names(runs, names)
    the_task, reason = resolve_task(chosen.task, qrels)  # the gold's alone: decided while runs read ahead come in
    sort_gold(qrels)
    loaded = [as_run(r, name=n, format=chosen.run_format, column=chosen.column, against=qrels) for r, n in zip(runs, labels)]
    wanted = metrics(the_task) if callable(metrics) else (metrics if metrics is not None else chosen.metrics)
    scored = [score_one(the_task, qrels, run, run.name, wanted, chosen, task_note=reason)
              for run in with_progress(loaded, progress, "scoring")]
    return the_task, qrels, scored


# ----------------------------------------------------------------- compare
@dataclass(frozen=True, eq=False)
class CompareResult(_ManifestOnFirstUse):
    """Runs compared with a baseline, query by query; :meth:`to_pandas` gives one row per run."""

    task: str
    comparison: "Comparison"
    values: "PairedValues"
    binary_values: "PairedValues | None"
    policy: list[str]
    notes: list[str]
    manifest_of: Callable[[], dict[str, Any]] = field(repr=False)  # builds :attr:`manifest` when first asked for
    all_pairs: "AllPairs | None" = None  # every pair compared (three or more runs by default): rank intervals, letters

    @property
    def metric(self) -> str:
        return self.comparison.metric

    @property
    def baseline(self) -> str:
        return self.comparison.baseline

    def to_pandas(self) -> "pd.DataFrame":
        """One row per compared run: means, difference with its CI, W/T/L, effect size, raw and adjusted p-values."""
        from evalkit.core.errors import require

        pd = require("pandas", "CompareResult.to_pandas() (a DataFrame)")

        rows = []
        for pair in self.comparison.pairs:
            row = {
                "run": pair.run, "baseline": pair.baseline, "n": pair.n, "mean": pair.mean_run, "baseline_mean": pair.mean_baseline,
                "difference": pair.difference, "ci_low": pair.ci[0], "ci_high": pair.ci[1], "relative": pair.relative,
                "wins": pair.wins, "ties": pair.ties, "losses": pair.losses, "rank_biserial": pair.rank_biserial, "es_e": pair.es_e,
            }
            for test, result in pair.tests.items():
                row[f"p_{test}"] = result.p_value
                row[f"p_{test}_adjusted"] = pair.adjusted.get(test)
            rows.append(row)
        return pd.DataFrame(rows).set_index("run")

    @property
    def per_query(self) -> "pd.DataFrame":
        """The compared metric per query (rows) and run (columns)."""
        from evalkit.core.errors import require

        pd = require("pandas", "CompareResult.per_query (a DataFrame)")

        return pd.DataFrame(self.values.matrix.T, index=pd.Index(self.values.query_ids, name="query_id"), columns=self.values.names)


def compare(
    gold: QrelsLike,
    *runs: RunLike,
    metric: str | None = None,
    baseline: str | int | None = None,
    binary: str = "success@1",
    names: Sequence[str] | None = None,
    zero_method: str = "wilcox",
    permutations: int = 10_000,
    bootstrap: int = 10_000,
    ci_method: str = "percentile",
    confidence: float = 0.95,
    seed: int = 42,
    correction: str = "holm",
    alpha: float = 0.05,
    all_pairs: str | None = "auto",
    scoring: ScoringOptions | None = None,
    progress: bool = False,
    **options: Any,
) -> CompareResult:
    """Compare ``runs`` with a baseline (default: the first) on ``gold``, query by query, with paired tests.

    Per run: mean difference with a bootstrap CI, relative improvement, W/T/L,
    rank-biserial effect size and ES_E, Wilcoxon signed-rank, paired t-test, Fisher
    randomization and McNemar on ``binary``; p-values corrected over the
    comparisons (``correction``). Seeded, so the same inputs give the same p-values.
    ``all_pairs`` also compares every pair (``result.all_pairs``: rank intervals,
    tied with #1, letters): a procedure of :data:`evalkit.stats.allpairs.PROCEDURES`,
    ``"auto"`` (randomised Tukey HSD with three or more runs) or ``None``.
    The scoring choices (task, missing, depth, ...) are ``scoring`` and/or its
    fields as keywords (:class:`~evalkit.core.options.ScoringOptions`).
    """
    from evalkit.stats.allpairs import AllPairsOptions, by_mean, resolve_procedure
    from evalkit.stats.allpairs import all_pairs as compare_all_pairs
    from evalkit.stats.comparison import CompareOptions
    from evalkit.stats.comparison import compare as run_comparison
    from evalkit.io.manifest import build_manifest, now_utc
    from evalkit.metrics import parse_metric
    from evalkit.scoring.runset import comparison_metric, default_metric_labels, pick_run
    from evalkit.stats.paired import align

    if len(runs) < 2:
        raise UsageError(f"compare needs at least two runs (got {len(runs)}): a baseline and a run to compare with it")
    chosen_scoring = _scoring(scoring, options)
    tests = CompareOptions(zero_method, permutations, bootstrap, ci_method, confidence, seed, correction, alpha)
    tests.check()
    procedure = resolve_procedure(all_pairs, len(runs))
    pairs_options = AllPairsOptions(procedure, correction, alpha, permutations, bootstrap, seed, zero_method) if procedure else None
    if pairs_options is not None:
        pairs_options.check()
    binary_metric = parse_metric(binary)
    if not binary_metric.binary:
        raise UsageError(f"binary {binary}: {binary_metric.label} is not a 0/1 outcome per query (use success@k)")
    chosen = parse_metric(metric).label if metric else None
    the_task, qrels, scored = score_many(
        gold, runs, lambda t: default_metric_labels(t) + ([chosen] if chosen else []) + [binary_metric.label], names=names,
        scoring=chosen_scoring, progress=progress,
    )
    run_names = [s.name for s in scored]
    base = pick_run(baseline, run_names, _paths_of(runs))
    label = comparison_metric(the_task, scored[0].score, chosen)
    evaluations = [s.score.evaluation for s in scored]
    values = align(evaluations, label, run_names)
    binary_values = align(evaluations, binary_metric.label, run_names)
    result = run_comparison(values, base, tests, binary_values, progress=progress)
    if label != scored[0].score.official:
        result.notes.append(f"compared on {label}; the task's official score is {scored[0].score.official}")
    every_pair = None
    if pairs_options is not None:  # best run first, so that each pair reads "better - worse"
        ordered, ordered_binary = by_mean(values, binary_values)
        try:
            every_pair = compare_all_pairs(ordered, pairs_options, ordered_binary)
        except UsageError as exc:  # too few queries for the procedure: the comparison with the baseline stands
            result.notes.append(f"all pairs not compared: {exc.one_line()}")
    created, inputs = now_utc(), _manifest_inputs([("gold", qrels)] + [(f"run:{s.name}", s.run) for s in scored])
    manifest_options = {
        "metric": label, "binary": binary_metric.label, "baseline": base, "missing": scored[0].score.missing,
        "zero_method": zero_method, "permutations": permutations, "bootstrap": bootstrap, "ci_method": ci_method,
        "confidence": confidence, "correction": correction, "alpha": alpha, "all_pairs": procedure,
        "relevance_level": chosen_scoring.relevance_level, "depth": chosen_scoring.depth, "allow_partial": chosen_scoring.allow_partial,
    }

    def manifest_of() -> dict[str, Any]:
        return build_manifest(the_task.name, inputs(), manifest_options, seed=seed, command="compare", created=created)

    notes = [note for s in scored for note in s.notes]
    return CompareResult(task=the_task.name, comparison=result, values=values, binary_values=binary_values,
                         policy=scored[0].score.policy_lines(), notes=notes, manifest_of=manifest_of, all_pairs=every_pair)


# ----------------------------------------------------------------- fuse
def fuse(
    *runs: RunLike,
    method: str = "rrf",
    norm: str | None = "min-max",
    weights: Sequence[float] | None = None,
    params: Mapping[str, Any] | None = None,
    depth: int | None = None,
    allow_partial: bool = False,
    name: str = "fused",
) -> Run:
    """Fuse ``runs`` into one scored :class:`Run` (``evalkit fusion`` lists the methods; RRF by default).

    Ties in the fused scores follow the ranking rule, whatever the order of the runs.
    """
    from evalkit.api.fusion import fuse_runs

    return fuse_runs(*runs, method=method, norm=norm, weights=weights, params=params, depth=depth, allow_partial=allow_partial, name=name).run


__all__ = ["CompareResult", "QrelsLike", "RunLike", "ScoreResult", "as_qrels", "as_run", "compare", "fuse", "read_qrels", "read_run",
           "score"]
