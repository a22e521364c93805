"""The column names of CheckThat! 2025 Task 4b's files, as its readers look them up (:func:`evalkit.core.columns.find`:
case-insensitive, first match wins). The general names of any table are :mod:`evalkit.core.columns`'."""
from __future__ import annotations

# the gold's optional tweet text column
TWEET_TEXT = ("tweet_text", "text", "query")
# the submission checker: another name for the tweet id column is reported, not taken silently
SUBMISSION_QUERY_ID = ("post_id", "query_id", "query-id", "qid", "id")
