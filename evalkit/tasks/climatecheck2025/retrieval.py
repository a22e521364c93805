"""ClimateCheck 2025 Subtask I: claim -> abstracts retrieval."""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from evalkit.data import Qrels, Run
from evalkit.metrics.evaluation import PARTIAL_THRESHOLD
from evalkit.metrics import Metric, parse_metrics
from evalkit.tasks.climatecheck2025 import official
from evalkit.tasks import register
from evalkit.tasks.base import CompetitionPreset, Task, TaskScore

OFFICIAL = "Subtask I score (mean of Recall@2, Recall@5, Recall@10, Bpref)"
OFFICIAL_METRICS = ("Recall@2", "Recall@5", "Recall@10", "CC-Bpref")
LABELS_NOT_SCORED = ("the run has a label column, which Subtask I does not score; Subtask II is scored only when named "
                     "(--task climatecheck2025-verification): a run never chooses its task")


def predictions_of(run: Run) -> official.Predictions:
    """The prediction columns as the official scorer reads them: the file as written, or (a run built in
    memory or read from another format) its rows in rank order as a submission would list them."""
    if run.as_written is not None:
        w = run.as_written
        return official.Predictions.from_texts(w["claim_id"], w["abstract_id"], w["rank"], w.get("label"))
    ranked = run.ranked()
    labels = None if ranked.labels is None else [str(x) for x in ranked.labels.tolist()]
    return official.Predictions.from_texts(
        [str(q) for q in run.query_ids[ranked.qidx].tolist()], [str(d) for d in run.doc_ids[ranked.didx].tolist()],
        [str(r) for r in ranked.rank.tolist()], labels,
    )


def gold_of(qrels: Qrels) -> official.Gold:
    """The gold columns as the official scorer reads them (as written, or from the judgments' labels)."""
    if qrels.as_written is not None:
        w = qrels.as_written
        return official.Gold.from_texts(w["claim_id"], w["abstract_id"], w["annotation"])
    labels = qrels.labels.tolist() if qrels.labels is not None else [
        "Supports" if g >= 1 else "Not Enough Information" for g in qrels.grades.tolist()]
    return official.Gold.from_texts(
        [str(q) for q in qrels.query_ids[qrels.qidx].tolist()], [str(d) for d in qrels.doc_ids[qrels.didx].tolist()], labels
    )


def claim_keys(qrels: Qrels, gold: official.Gold) -> dict[str, object]:
    """evalkit's claim id (stripped text) -> the claim as the scorer holds it (e.g. the number 7 for ``007``)."""
    texts = qrels.as_written["claim_id"] if qrels.as_written is not None else [str(q) for q in qrels.query_ids[qrels.qidx].tolist()]
    return {text.strip(): key for text, key in zip(texts, gold.claims)}


def with_official_per_query(score: TaskScore, per_claim: dict[str, dict[object, float]], keys: dict[str, object]) -> TaskScore:
    """``score`` whose per-query values of the official metrics are the official per-claim values (NaN: not scored)."""
    evaluation = score.evaluation
    per_query = dict(evaluation.per_query)
    for label, values in per_claim.items():
        if label in per_query:
            per_query[label] = np.array([values.get(keys.get(q), math.nan) for q in evaluation.query_ids.tolist()], dtype=np.float64)
    return dataclasses.replace(score, evaluation=dataclasses.replace(evaluation, per_query=per_query))


def official_notes(missing: str, depth: int | None) -> list[str]:
    notes = ["official figures as the organisers' scorer computes them: Recall@k over each claim's rows as written, "
             "Bpref over its rows sorted by the rank column (see README, ClimateCheck)"]
    if missing != "zero" or depth is not None:
        notes.append("the official figures ignore --missing and --depth (the scorer counts unanswered claims as 0 in Recall@k, "
                     "leaves them out of Bpref and reads every row)")
    return notes


@register
class ClimateCheck2025Retrieval(Task):
    """Official score = mean of Recall@2, Recall@5, Recall@10 and Bpref, as the official scorer computes them.

    Relevant = gold Supports or Refutes; Recall@k reads each claim's rows in
    the order written; Bpref (:mod:`evalkit.tasks.climatecheck2025.official`)
    sorts them by the rank column and averages only claims present in the
    predictions with both relevant and NEI judgments. evalkit's own metrics
    (beyond the official ones) read row order and count a repeat once.
    """

    name = "climatecheck2025-retrieval"
    sources = ("ClimateCheck 2025 shared task (SDP 2025 workshop), Subtask I: the task's page and the organisers' evaluate.py",)
    description = "ClimateCheck 2025 Subtask I: claim -> scientific abstracts"
    official_definition = "mean of Recall@2, Recall@5, Recall@10 and Bpref, as the official scorer (evaluate.py) computes them"
    default_metrics = "recall@2 recall@5 recall@10 cc-bpref"
    gold_formats = ("climatecheck-gold",)
    run_formats = ("climatecheck-run", "trec-run")
    submission = "climatecheck2025"
    submission_depth = 10
    competition = CompetitionPreset(
        "ClimateCheck 2025 Subtask I: Abstract Retrieval",
        "Given a climate-related claim from social media, retrieve the ten most relevant scientific abstracts; "
        "scored as the organisers' scorer does, by the mean of Recall@2, Recall@5, Recall@10 and Bpref.",
        {"dev": "Development: claims whose gold is public.", "test": "Test: hidden gold; the last submission counts."},
    )
    # the organisers' scorer (evaluation/evaluate.py) prints these names for evalkit's figures: the bundle's board reads as 2025's
    leaderboard_keys = {OFFICIAL: "SubtaskI-Score", "Recall@2": "Recall@2", "Recall@5": "Recall@5", "Recall@10": "Recall@10",
                        "CC-Bpref": "B-pref"}

    def official_metrics(self) -> list[Metric]:
        return parse_metrics("recall@2 recall@5 recall@10 cc-bpref")

    def metrics(self, extra=None) -> list[Metric]:
        chosen = parse_metrics(extra) if extra else []
        return list(dict.fromkeys(self.official_metrics() + chosen))

    def keep_gold(self, qrels) -> np.ndarray:
        relevant = np.bincount(qrels.qidx[qrels.grades >= 1], minlength=len(qrels.query_ids))
        return relevant > 0

    def official_figures(self, run: Run, qrels: Qrels) -> tuple[dict[str, float], dict[str, dict[object, float]], dict[str, object]]:
        """(official means, official per-claim values by metric label, claim keys) of Subtask I."""
        gold, predictions = gold_of(qrels), predictions_of(run)
        means: dict[str, float] = {}
        per_claim: dict[str, dict[object, float]] = {}
        for k in (2, 5, 10):
            means[f"Recall@{k}"], per_claim[f"Recall@{k}"] = official.recall_at_k(gold, predictions, k)
        means["CC-Bpref"], per_claim["CC-Bpref"] = official.bpref(gold, predictions)
        means[OFFICIAL] = official.subtask1_score([means["Recall@2"], means["Recall@5"], means["Recall@10"]], means["CC-Bpref"])
        return means, per_claim, claim_keys(qrels, gold)

    def score(self, run: Run, qrels: Qrels, metrics=None, *, missing=None, allow_partial=False, relevance_level=1, depth=None,
              **options) -> TaskScore:
        # the official scorer scores any subset of the claims: a partial run is warned about, not refused
        base = super().score(run, qrels, metrics, missing=missing, allow_partial=True, relevance_level=relevance_level, depth=depth,
                             **options)
        means, per_claim, keys = self.official_figures(run, qrels)
        notes = official_notes(base.missing, depth)
        ev = base.evaluation
        if not allow_partial and ev.n_gold and len(ev.gold_only) > PARTIAL_THRESHOLD * ev.n_gold:
            notes.append(f"the run answers only {ev.n_gold - len(ev.gold_only)} of {ev.n_gold} gold claims (wrong split?); "
                         "the official scorer counts the others as 0")
        values = {OFFICIAL: means[OFFICIAL], **{label: means[label] for label in OFFICIAL_METRICS}}
        values.update({k: v for k, v in base.values.items() if k not in values and k != base.official})
        evaluation = base.evaluation
        if run.labels is not None and not self.labels_required:
            evaluation = dataclasses.replace(evaluation, warnings=[*evaluation.warnings, LABELS_NOT_SCORED])
        scored = TaskScore(task=self.name, official=OFFICIAL, values=values, evaluation=evaluation, notes=notes)
        return with_official_per_query(scored, per_claim, keys)
