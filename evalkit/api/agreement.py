"""The organiser's API for comparing two golds: :func:`agreement` (and :func:`judge_shares_of`, the LLM share of mixed gold).

>>> import evalkit.api.agreement as ag
>>> found = ag.agreement("human.qrels", "llm.tsv", "runs/a.trec", "runs/b.trec")       # doctest: +SKIP
>>> found.gold.cohen_kappa, found.ranking.kendall_tau, found.ranking.flipped_pairs      # doctest: +SKIP
>>> found.save("reports/agreement.md")     # Markdown (or .json) and NAME.agreement.png  # doctest: +SKIP
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from evalkit.stats.allpairs import AllPairsOptions
from evalkit.core.errors import UsageError
from evalkit.judging.agreement import GoldAgreement, RankingAgreement, gold_agreement, ranking_agreement

if TYPE_CHECKING:  # pragma: no cover
    from evalkit.io.reading import QrelsLike, RunLike
    from evalkit.core.options import ScoringOptions


@dataclass(frozen=True, eq=False)
class AgreementResult:
    """The agreement of two golds, the two leaderboards of the runs (``ranking``: None without runs), notes, manifest."""

    gold: GoldAgreement
    ranking: RankingAgreement | None
    labels: tuple[str, str]
    notes: list[str]
    manifest: dict[str, Any] = field(repr=False)
    files: list[str | None] = field(default_factory=list, repr=False)  # the inputs' files (never overwritten)

    def as_dict(self) -> dict[str, Any]:
        from evalkit.report.agreement_output import as_dict

        return as_dict(self)

    def save(self, out: str | os.PathLike, *, output: str | None = None, force: bool = False) -> list[Path]:
        """Write the report (``.md`` or ``.json``) and, with runs, its figure ``STEM.agreement.png`` beside it."""
        from evalkit.report.agreement_output import write_agreement

        return write_agreement(self, out, output=output, force=force)


def _label(gold: Any, fallback: str) -> str:
    return Path(os.fspath(gold)).name if isinstance(gold, (str, os.PathLike)) else fallback


def agreement(
    gold_a: "QrelsLike",
    gold_b: "QrelsLike",
    *runs: "RunLike",
    metric: str | None = None,
    relevance_level: float = 1.0,
    weights: str = "linear",
    complete: str | None = None,
    pairs: AllPairsOptions | None = AllPairsOptions(),
    rbo_p: float = 0.9,
    judged_k: int = 10,
    names: Sequence[str] | None = None,
    scoring: "ScoringOptions | None" = None,
    progress: bool = False,
    **options: Any,
) -> AgreementResult:
    """Agreement of ``gold_a`` and ``gold_b`` (:mod:`evalkit.judging.agreement`); with ``runs``, their two leaderboards.

    The runs are ranked on the task's official score (nDCG@10 for TREC
    qrels), or on ``metric``; ``pairs`` is the all-pairs procedure that says
    whether a flipped pair's difference is significant under each gold
    (default: randomised Tukey HSD, seeded; ``None``: no significance).
    A gold that says who judged each pair (:mod:`evalkit.judging.provenance`)
    adds each run's LLM@k and Human@k (``judged_k``) under it.
    """
    from evalkit.stats.allpairs import all_pairs
    from evalkit.api import score_many
    from evalkit.io.reading import as_qrels, input_entry
    from evalkit.scoring.runset import check_task_name, paths_of as _paths_of
    from evalkit.judging.provenance import judge_shares, judges_of
    from evalkit.io.manifest import build_manifest
    from evalkit.metrics import parse_metric
    from evalkit.core.options import ScoringOptions
    from evalkit.scoring.runset import comparison_metric
    from evalkit.stats.paired import align

    chosen = ScoringOptions.of(scoring, **options)
    if chosen.metrics:
        raise UsageError("agreement ranks the runs on one value: give metric=, not metrics=")
    check_task_name(chosen.task)
    if pairs is not None:
        pairs.check()
    label = parse_metric(metric).label if metric else None
    qrels_a, qrels_b = as_qrels(gold_a, format=chosen.gold_format), as_qrels(gold_b, format=chosen.gold_format)
    found = gold_agreement(qrels_a, qrels_b, relevance_level, weights, complete)
    labels = (_label(gold_a, "A"), _label(gold_b, "B"))
    if labels[0] == labels[1]:
        labels = (f"A: {labels[0]}", f"B: {labels[1]}")
    notes: list[str] = []
    ranking = None
    inputs = [input_entry("gold_a", qrels_a), input_entry("gold_b", qrels_b)]
    task_name = None
    if runs:
        if len(runs) < 2:
            raise UsageError("comparing two leaderboards needs at least two runs")
        boards = []
        judges = [judges_of(g)[0] for g in (gold_a, gold_b)]
        for gold in (qrels_a, qrels_b):
            task, _, scored = score_many(gold, runs, [label] if label else None, names=names, scoring=chosen, progress=progress)
            per_query = comparison_metric(task, scored[0].score, label)
            values = [s.score.values[label] if label else s.score.official_value for s in scored]
            compared = None
            try:
                evaluations = [s.score.evaluation for s in scored]
                if pairs is not None:
                    compared = all_pairs(align(evaluations, per_query, [s.name for s in scored],
                                               common=evaluations[0].missing == "skip"), pairs)
            except UsageError as exc:
                notes.append(f"all pairs not compared: {exc.one_line()}")
            notes += [note for s in scored for note in s.notes]
            boards.append((task, scored, values, compared))
        (task, scored, values_a, pairs_a), (_, _, values_b, pairs_b) = boards
        task_name = task.name
        shown = label or scored[0].score.official
        ranking = ranking_agreement([s.name for s in scored], values_a, values_b, shown, pairs_a=pairs_a, pairs_b=pairs_b, p=rbo_p)
        by_name = {s.name: s.run for s in scored}
        for side, gold, judged_by in (("a", qrels_a, judges[0]), ("b", qrels_b, judges[1])):
            if judged_by is not None:
                ranking.judged_k = judged_k
                for entry in ranking.runs:
                    shares = judge_shares(by_name[entry["run"]], gold, judged_by, judged_k)
                    entry[f"llm_share_{side}"], entry[f"human_share_{side}"] = shares["llm"], shares["human"]
        inputs += [input_entry(f"run:{s.name}", s.run) for s in scored]
    manifest = build_manifest(
        task_name, inputs,
        {"relevance_level": relevance_level, "weights": weights, "complete": complete, "metric": ranking.metric if ranking else None,
         "all_pairs": pairs.procedure if runs and pairs else None, "alpha": pairs.alpha if runs and pairs else None, "rbo_p": rbo_p,
         "scoring": chosen.manifest(None)},
        seed=pairs.seed if runs and pairs else None, command="agreement",
    )
    files = [os.fspath(g) if isinstance(g, (str, os.PathLike)) else None for g in (gold_a, gold_b)] + _paths_of(runs)
    return AgreementResult(gold=found, ranking=ranking, labels=labels, notes=list(dict.fromkeys(notes)), manifest=manifest, files=files)
