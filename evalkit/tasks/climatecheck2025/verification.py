"""ClimateCheck 2025 Subtask II: label retrieved claim-abstract pairs Supports / Refutes / NEI."""
from __future__ import annotations

import math

from evalkit.data import Qrels, Run
from evalkit.core.errors import InputError, UsageError
from evalkit.tasks.climatecheck2025 import official
from evalkit.tasks import register
from evalkit.tasks.base import CompetitionPreset, TaskScore
from evalkit.tasks.climatecheck2025.retrieval import OFFICIAL as SUBTASK1, ClimateCheck2025Retrieval, gold_of, predictions_of

OFFICIAL = "Subtask II score (F1 + Recall@10)"
F1, PRECISION, RECALL, ACCURACY = "F1 (weighted)", "Precision (weighted)", "Recall (weighted)", "Accuracy"


def prediction_line(run: Run, row: int) -> int | None:
    """The file line of prediction row ``row`` (0-based), as the CSV reader recorded it (``None`` for runs not read so)."""
    lines = (run.as_written or {}).get("_line")
    return int(lines[row]) if lines is not None and 0 <= row < len(lines) else None


@register
class ClimateCheck2025Verification(ClimateCheck2025Retrieval):
    """Official score: weighted F1 of the labels of predicted pairs found in the gold, plus Recall@10.

    As the official scorer: every prediction row whose (claim, abstract) pair
    the gold judges is one item (a repeated row counts again), labels are
    compared lower-cased (``NEI`` or ``Supports `` with a space are wrong
    labels), precision / recall / F1 are scikit-learn's weighted averages, and
    the Subtask II score is F1 + Recall@10. Without a label column (or with no
    judged pair) the score is undefined, as the scorer's 404.
    """

    name = "climatecheck2025-verification"
    sources = ("ClimateCheck 2025 shared task (SDP 2025 workshop), Subtask II: the task's page and the organisers' evaluate.py",)
    description = "ClimateCheck 2025 Subtask II: Supports / Refutes / Not Enough Information per retrieved pair"
    official_definition = "F1 + Recall@10: weighted F1 over predicted rows whose pair the gold judges (labels lower-cased), plus Recall@10"
    default_metrics = "recall@10"
    labels_required = True
    competition = CompetitionPreset(
        "ClimateCheck 2025 Subtask II: Claim Verification",
        "Given a claim and its retrieved abstracts, label each pair Supports, Refutes or Not Enough Information; "
        "scored as the organisers' scorer does, by weighted F1 plus Recall@10 (the Subtask I figures are shown too).",
        {"dev": "Development: claims whose gold is public.", "test": "Test: hidden gold; the last submission counts."},
    )
    leaderboard_keys = {**ClimateCheck2025Retrieval.leaderboard_keys, OFFICIAL: "SubtaskII-Score", F1: "F1", PRECISION: "Precision",
                        RECALL: "Recall"}
    # the Subtask II figures as its scorer computes them, and the Subtask I score shown beside them
    figure_definitions = {
        F1: "F1 of the predicted labels, scikit-learn's weighted average over the gold labels, over every predicted row whose "
            "(claim, abstract) pair the gold judges (a repeated row counts again); labels compared lower-cased",
        PRECISION: "precision of the predicted labels, weighted average over the gold labels (the same rows as F1)",
        RECALL: "recall of the predicted labels, weighted average over the gold labels (the same rows as F1)",
        ACCURACY: "share of those rows whose label equals the gold label (lower-cased)",
        SUBTASK1: ClimateCheck2025Retrieval.official_definition,
    }

    def detects(self, gold_format: str, run: Run | None = None) -> int:
        """Never detected: one ClimateCheck gold serves both subtasks, and a run (its label column) must not
        choose the task it is scored by; ``--task climatecheck2025-verification`` names Subtask II."""
        return 0

    def metrics(self, extra=None):
        return super().metrics(extra or self.default_metrics)

    def score(self, run: Run, qrels: Qrels, metrics=None, **options) -> TaskScore:
        if qrels.labels is None:
            raise UsageError("the gold has no annotation labels; the verification task needs a ClimateCheck gold file")
        retrieval = super().score(run, qrels, metrics, **options)
        try:
            result = official.verification(gold_of(qrels), predictions_of(run))
        except official.LabelError as exc:
            where = run.source.path if run.source else run.name
            raise InputError(where, str(exc), prediction_line(run, exc.row)) from None
        recall10 = retrieval.values["Recall@10"]
        total = math.nan if result.undefined else result.f1 + recall10
        values = {OFFICIAL: total, F1: result.f1, PRECISION: result.precision, RECALL: result.recall, "Recall@10": recall10,
                  ACCURACY: result.accuracy}
        values.update({k: v for k, v in retrieval.values.items() if k not in values})
        notes = list(retrieval.notes)
        if result.undefined:
            notes.insert(0, f"the official Subtask II score is undefined: {result.undefined}")
        else:
            notes.insert(0, f"verification: {result.items} predicted rows whose pair the gold judges were classified "
                            "(labels compared lower-cased, repeats counted, as the official scorer)")
        return TaskScore(task=self.name, official=OFFICIAL, values=values, evaluation=retrieval.evaluation, notes=notes,
                         undefined=result.undefined)


__all__ = ["ClimateCheck2025Verification", "OFFICIAL", "SUBTASK1"]
