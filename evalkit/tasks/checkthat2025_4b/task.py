"""CLEF CheckThat! 2025 Task 4b: scientific claim source retrieval (tweet -> CORD-19 paper)."""
from __future__ import annotations

from evalkit.metrics import Metric, parse_metrics
from evalkit.tasks import register
from evalkit.tasks.base import CompetitionPreset, Task


@register
class CheckThat2025Task4b(Task):
    """Official score: MRR@5 over gold tweets, 1/rank of the single gold cord_uid in the first 5 preds.

    Submissions list 5 cord_uids per tweet (``post_id<TAB>preds``); the
    official scorer takes the first occurrence of the gold id, as evalkit does.
    """

    name = "checkthat2025-4b"
    description = "CheckThat! 2025 Task 4b: tweet -> CORD-19 paper (one gold paper per tweet)"
    official_definition = "MRR@5: mean over gold tweets of 1/rank of the gold cord_uid within the first 5 predictions (0 if absent)"
    default_metrics = "mrr@1 mrr@10 recall@1 recall@5 recall@10"
    gold_formats = ("checkthat-gold",)
    run_formats = ("checkthat-list", "trec-run")
    submission = "checkthat2025-4b"
    submission_depth = 5
    sources = ("CLEF 2025 CheckThat! Lab, Task 4b (scientific claim source retrieval): the task's page and the organisers' "
               "scorer (MRR@5 over the gold tweets)",)
    competition = CompetitionPreset(
        "CheckThat! 2025 Task 4b: Scientific Claim Source Retrieval",
        "Given a tweet that implicitly refers to a scientific paper, retrieve the paper from a collection of 7,718 "
        "CORD-19 papers: five ranked cord_uids per tweet, scored by MRR@5.",
        {"dev": "Development: the dev tweets, whose gold is public; tune your system and check your file.",
         "test": "Test: the test tweets; the gold stays hidden until the end, the last submission counts."},
    )

    def official_metrics(self) -> list[Metric]:
        return parse_metrics("mrr@5")
