"""The one table of column names evalkit recognises for ids, scores, grades and labels.

Readers of headed files (4b lists, ClimateCheck CSVs, BEIR qrels, query and
collection tables) and :meth:`~evalkit.data.Run.from_pandas` /
:meth:`~evalkit.data.Qrels.from_pandas` look names up here, case-insensitively,
first match wins.
"""
from __future__ import annotations

from typing import Iterable, Sequence

QUERY_ID = ("query_id", "qid", "query-id", "query", "topic", "topic_id", "post_id", "claim_id", "_id", "id")
DOC_ID = ("doc_id", "docid", "docno", "doc", "document", "corpus-id", "corpus_id", "cord_uid", "abstract_id",
          "abstract_original_index", "pid", "passage_id")
SCORE = ("score", "sim", "similarity", "rsv")
RANK = ("rank", "position")
GRADE = ("relevance", "rel", "grade", "judgment", "judgement", "label", "score")
LABEL = ("label", "annotation", "prediction", "verdict")


def find(columns: Iterable[str], aliases: Sequence[str]) -> str | None:
    """The first of ``columns`` named like one of ``aliases`` (case-insensitive; alias order decides), else ``None``."""
    by_lower: dict[str, str] = {}
    for column in columns:
        by_lower.setdefault(str(column).strip().lower(), column)
    return next((by_lower[a] for a in aliases if a in by_lower), None)
