"""ClimateCheck 2025 Subtask I: claim -> abstracts retrieval."""
from __future__ import annotations

import numpy as np

from evalkit.metrics import Metric, parse_metrics
from evalkit.tasks import register
from evalkit.tasks.base import Task

OFFICIAL = "Official (mean of Recall@2, Recall@5, Recall@10, CC-Bpref)"


@register
class ClimateCheck2025Retrieval(Task):
    """Official score = mean of Recall@2, Recall@5, Recall@10 and ClimateCheck Bpref.

    Relevant = gold Supports or Refutes. Recall@k divides by the claim's
    relevant abstracts; claims without relevant abstracts are excluded; claims
    without predictions score 0 in recall. CC-Bpref (see
    :class:`evalkit.metrics.climatecheck_bpref.ClimateCheckBpref`) averages only
    claims present in the predictions. Ranking = row order within a claim.
    """

    name = "climatecheck2025-retrieval"
    description = "ClimateCheck 2025 Subtask I: claim -> scientific abstracts"
    official_definition = "mean of Recall@2, Recall@5, Recall@10 and ClimateCheck Bpref"
    default_metrics = "recall@2 recall@5 recall@10 cc-bpref"
    gold_formats = ("climatecheck-gold",)
    submission_depth = 10

    def official_metrics(self) -> list[Metric]:
        return parse_metrics("recall@2 recall@5 recall@10 cc-bpref")

    def metrics(self, extra=None) -> list[Metric]:
        chosen = parse_metrics(extra) if extra else []
        return list(dict.fromkeys(self.official_metrics() + chosen))

    def official_value(self, evaluation) -> tuple[str, float]:
        parts = [evaluation.mean(m) for m in self.official_metrics()]
        return OFFICIAL, float(np.mean(parts))

    def keep_gold(self, qrels) -> np.ndarray:
        relevant = np.bincount(qrels.qidx[qrels.grades >= 1], minlength=len(qrels.query_ids))
        return relevant > 0
