"""The one table of column names evalkit recognises for ids, scores, grades, labels and texts.

Every reader looks its column names up here (case-insensitively, first match
wins); no other module spells an alias set.

The general tables (:data:`QUERY_ID`, :data:`DOC_ID`, ...) serve inputs
without a format of their own: :meth:`~evalkit.data.Run.from_pandas` /
:meth:`~evalkit.data.Qrels.from_pandas` (DataFrames and dicts given to the
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
# CheckThat! 4b gold: the optional tweet text column.
CHECKTHAT_TWEET_TEXT = ("tweet_text", "text", "query")
# list runs (CheckThat! 4b layout and its variants): the official post_id first.
LIST_RUN_QUERY_ID = ("post_id", "query_id", "query-id", "qid", "claim_id", "topic_id", "topic", "id")
# ClimateCheck gold and submissions: the abstract id column, the optional label and claim text columns.
CLIMATECHECK_ABSTRACT_ID = ("abstract_id", "abstract_original_index")
CLIMATECHECK_LABEL = ("label", "prediction", "annotation")
CLIMATECHECK_CLAIM_TEXT = ("claim", "claim_text", "text")
# header names that identify a known table, for the "not tab- or comma-separated" message.
KNOWN_HEADER = ("post_id", "preds", "cord_uid", "claim_id", "abstract_id", "query-id", "corpus-id", "annotation")

# --------------------------------------------------------------- submission checks (evalkit.submission)
# the 4b checker: another name for the tweet id column is reported, not taken silently.
SUBMISSION_4B_QUERY_ID = ("post_id", "query_id", "query-id", "qid", "id")
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
