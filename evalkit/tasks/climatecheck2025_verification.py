"""ClimateCheck 2025 Subtask II: label retrieved claim-abstract pairs Supports / Refutes / NEI."""
from __future__ import annotations

import numpy as np

from evalkit.classification import weighted_prf
from evalkit.errors import UsageError
from evalkit.tasks import register
from evalkit.tasks.base import TaskScore
from evalkit.tasks.climatecheck2025_retrieval import ClimateCheck2025Retrieval

F1, PRECISION, RECALL, ACCURACY = "F1 (weighted)", "Precision (weighted)", "Recall (weighted)", "Accuracy"


def labelled_pairs(run, qrels) -> tuple[list[str], list[str]]:
    """(gold label, predicted label) for each predicted pair that the gold judges.

    A pair predicted twice counts once, with its first (best-ranked) label.
    Labels are compared case-insensitively (both sides are canonicalised on reading).
    """
    gold = {
        (qrels.query_ids[q], qrels.doc_ids[d]): label
        for q, d, label in zip(qrels.qidx.tolist(), qrels.didx.tolist(), qrels.labels.tolist())
    }
    ranked = run.ranked()
    y_true, y_pred = [], []
    for q, d, label, first in zip(ranked.qidx.tolist(), ranked.didx.tolist(), ranked.labels.tolist(), ranked.first.tolist()):
        key = (run.query_ids[q], run.doc_ids[d])
        if first and key in gold:
            y_true.append(gold[key])
            y_pred.append(label)
    return y_true, y_pred


@register
class ClimateCheck2025Verification(ClimateCheck2025Retrieval):
    """Official score: weighted F1 of the predicted labels, reported with Recall@10.

    Only predicted pairs that appear in the gold are classified (the gold does
    not judge the rest). Because labels sit on retrieved pairs, the
    organisers read F1 together with Recall@10 of the same submission, so both
    are reported first.
    """

    name = "climatecheck2025-verification"
    description = "ClimateCheck 2025 Subtask II: Supports / Refutes / Not Enough Information per retrieved pair"
    official_definition = "weighted F1 over predicted pairs found in the gold (sklearn 'weighted'), read together with Recall@10"
    default_metrics = "recall@10"

    def metrics(self, extra=None):
        return super().metrics(extra or self.default_metrics)

    def score(self, run, qrels, metrics=None, **options) -> TaskScore:
        if run.labels is None:
            raise UsageError(f"{run.source.path if run.source else run.name}: the run has no label column; the verification task needs one")
        if qrels.labels is None:
            raise UsageError("the gold has no annotation labels; the verification task needs a ClimateCheck gold file")
        retrieval = super().score(run, qrels, metrics, **options)
        y_true, y_pred = labelled_pairs(run, qrels)
        prf = weighted_prf(y_true, y_pred)
        values = {F1: prf["f1"], "Recall@10": retrieval.evaluation.mean("Recall@10")}
        values.update({PRECISION: prf["precision"], RECALL: prf["recall"], ACCURACY: prf["accuracy"]})
        values.update({k: v for k, v in retrieval.values.items() if k not in values})
        note = f"verification: {prf['pairs']} predicted pairs found in the gold were classified"
        return TaskScore(task=self.name, official=F1, values=values, evaluation=retrieval.evaluation, notes=[note])
