"""Generic TREC-style evaluation: any metrics over TREC/BEIR qrels and runs."""
from __future__ import annotations

from typing import Sequence

from evalkit.metrics import Metric, parse_metrics
from evalkit.tasks import register
from evalkit.tasks.base import Task, metric_names


@register
class TrecTask(Task):
    """Official score: the first number asked for (default nDCG@10), trec_eval semantics."""

    name = "trec"
    sources = ("trec_eval (github.com/usnistgov/trec_eval): its measures, as evalkit's trec_eval-compatible metrics compute them",)
    description = "any metrics over TREC or BEIR qrels and runs (trec_eval semantics)"
    official_definition = "the first metric given with --metrics (default nDCG@10)"
    default_metrics = "ndcg@10 map mrr recall@100 p@10 bpref"
    gold_formats = ("trec-qrels", "beir-qrels", "judging-sheet")

    def detects(self, gold_format: str, run=None) -> int:
        """TREC qrels, and the fallback for any gold no other task claims."""
        return 1 if gold_format in self.gold_formats else -1

    def metrics(self, extra: str | Sequence[str] | None = None) -> list[Metric]:
        return parse_metrics(metric_names(extra)) if extra else parse_metrics(self.default_metrics)

    def official_metrics(self) -> list[Metric]:
        return self.metrics()[:1]

    def official_value(self, evaluation):
        metric = next((m for m in evaluation.metrics if not m.text), evaluation.metrics[0])  # runid, relstring are text
        return metric.label, evaluation.mean(metric)
