"""A reproducible SciFact subsample for the speed benches (rerank_speed.py, dense_speed.py).

The first ``queries`` test claims (file order) with their test judgments, and
a corpus of every document judged for them plus the first documents of
``corpus.jsonl`` up to ``docs`` (0: the whole corpus). nDCG@10 on a reduced
corpus is higher than on the full one; the benches compare backends on the
same sample, not with published figures.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

SCIFACT = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "scifact"
# where the SciFact experiment scripts (scifact_*.py) write and read their runs and models (relative by default)
ARTIFACTS = Path(os.environ.get("EVALKIT_ARTIFACTS", "artifacts")) / "scifact"


def available() -> bool:
    return (SCIFACT / "corpus.jsonl").exists()


def sample(queries: int, docs: int = 0, split: str = "test") -> tuple[Any, Any, Any]:
    """``(corpus, queries, qrels)`` of the subsample (evalkit objects)."""
    from evalkit.data.corpus import Corpus
    from evalkit.io.formats.collections import read_queries
    from evalkit.data import Qrels
    from evalkit.io.reading import read_qrels

    judged = read_qrels(str(SCIFACT / "qrels" / f"{split}.tsv")).to_dict()
    chosen = list(judged)[:queries] if queries else list(judged)
    gold = Qrels.from_dict({q: judged[q] for q in chosen})
    needed = {d for q in chosen for d in judged[q]}
    records = []
    with open(SCIFACT / "corpus.jsonl", encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            if not docs or record["_id"] in needed or len(records) < docs:
                records.append({"_id": record["_id"], "title": record.get("title", ""), "text": record.get("text", "")})
    if docs:  # the judged documents found after the first DOCS replace unjudged ones, so the corpus has DOCS
        extra = len(records) - docs
        if extra > 0:
            unjudged = [i for i, r in enumerate(records) if r["_id"] not in needed][::-1][:extra]
            records = [r for i, r in enumerate(records) if i not in set(unjudged)]
    corpus = Corpus.from_records(records, id_field="_id")
    return corpus, read_queries(SCIFACT / "queries.jsonl").subset(chosen), gold


def ndcg10(run: Any, qrels: Any) -> float:
    """Mean nDCG@10 of ``run`` over the queries of ``qrels`` (a missing query counts 0)."""
    from evalkit.metrics.evaluation import evaluate
    from evalkit.metrics import parse_metrics

    evaluation = evaluate(run, qrels, parse_metrics("ndcg@10"))
    return float(next(iter(evaluation.per_query.values())).mean())
