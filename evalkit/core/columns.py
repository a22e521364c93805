"""The column names evalkit recognises for ids, scores, grades, labels and texts in any table.

Every generic reader looks its column names up here (case-insensitively,
first match wins); a task's own files' names live in its package
(``evalkit/tasks/<task>/columns.py``); no other module spells an alias set.

The general tables (:data:`QUERY_ID`, :data:`DOC_ID`, ...) serve inputs
without a format of their own: :func:`~evalkit.io.in_memory.run_from_table` /
:func:`~evalkit.io.in_memory.qrels_from_table` (DataFrames and dicts given to the
Python API). The reader tables below them are the same names as one reader
uses them. A reader keeps its own subset and order on purpose: the subset
decides which files its sniff claims (a wider set would take other formats'
files), and the order decides which of two id columns wins, so neither can
change without changing what a file means.
"""
from __future__ import annotations

from typing import Iterable, Sequence

# --------------------------------------------------------------- general (Python API inputs)
QUERY_ID = ("query_id", "qid", "query-id", "query", "topic", "topic_id", "post_id", "claim_id", "_id", "id")
DOC_ID = ("doc_id", "docid", "docno", "doc", "document", "corpus-id", "corpus_id", "cord_uid", "abstract_id",
          "abstract_original_index", "pid", "passage_id")
SCORE = ("score", "sim", "similarity", "rsv")
RANK = ("rank", "position")
GRADE = ("relevance", "rel", "grade", "judgment", "judgement", "label", "score")
LABEL = ("label", "annotation", "prediction", "verdict")

# --------------------------------------------------------------- run and gold readers (evalkit.io.formats)
# BEIR qrels (headed query-id, corpus-id, score): narrow, so its sniff claims no other gold format's file.
BEIR_QUERY_ID = ("query-id", "query_id", "qid")
BEIR_DOC_ID = ("corpus-id", "corpus_id", "doc-id", "doc_id", "docid")
BEIR_GRADE = ("score", "relevance", "grade", "label")
# list runs (query id + a list of doc ids, the layout CheckThat! 4b chose): its post_id first.
LIST_RUN_QUERY_ID = ("post_id", "query_id", "query-id", "qid", "claim_id", "topic_id", "topic", "id")

# --------------------------------------------------------------- submission checks (evalkit.submission)
# query and collection id files a submission is checked against (the task's own names first).
REFERENCE_QUERY_ID = ("post_id", "claim_id", "query_id", "query-id", "qid", "_id", "topic_id", "id")
REFERENCE_DOC_ID = ("cord_uid", "abstract_id", "doc_id", "docid", "corpus-id", "docno", "_id", "id")

# --------------------------------------------------------------- collections and query files (evalkit.io.formats)
# BEIR's _id first; "query" is no query id here: in a query file it is the text column.
COLLECTION_DOC_ID = ("_id", "id", "doc_id", "docid", "doc-id", "corpus-id", "cord_uid", "abstract_id", "pmid")
COLLECTION_QUERY_ID = ("_id", "id", "post_id", "claim_id", "query_id", "query-id", "qid", "topic_id")
COLLECTION_ID = COLLECTION_DOC_ID + COLLECTION_QUERY_ID
# a document's or query's fields: evalkit's field name -> the column names read as it
COLLECTION_FIELDS: dict[str, tuple[str, ...]] = {
    "title": ("title", "doc_title"),
    "text": ("text", "abstract", "body", "contents", "content", "tweet_text", "tweet", "claim", "query", "question"),
    "authors": ("authors", "author"),
    "journal": ("journal", "venue"),
    "source": ("source", "source_x"),
}


def find(columns: Iterable[str], aliases: Sequence[str]) -> str | None:
    """The first of ``columns`` named like one of ``aliases`` (case-insensitive; alias order decides), else ``None``."""
    by_lower: dict[str, str] = {}
    for column in columns:
        by_lower.setdefault(str(column).strip().lower(), column)
    return next((by_lower[a] for a in aliases if a in by_lower), None)
