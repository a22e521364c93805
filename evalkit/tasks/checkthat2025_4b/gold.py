"""CheckThat! 2025 Task 4b gold: ``post_id<TAB>tweet_text<TAB>cord_uid``.

One gold paper per tweet (grade 1); the tweet text is kept for reports.
Tweets may hold quoted newlines. A post_id listed twice is an error.
"""
from __future__ import annotations

from typing import Iterable

from evalkit.tasks.checkthat2025_4b.columns import TWEET_TEXT
from evalkit.data import Qrels
from evalkit.core.errors import InputError, shown
from evalkit.io.formats import Format, Sample, register
from evalkit.io.formats.tables import header_delimiter, find_column, read_delimited
from evalkit.io.textio import LoadedFile


def sniff(sample: Sample) -> bool:
    columns = sample.columns()
    return "post_id" in columns and "cord_uid" in columns


def read(loaded: LoadedFile, **_) -> Qrels:
    return read_rows(*read_delimited(loaded, header_delimiter(loaded)), loaded.label)


def read_rows(header: list[str], records: Iterable[tuple[int, list[str]]], label: str, **_) -> Qrels:
    id_col = find_column(header, ("post_id",), label, "query id")
    doc_col = find_column(header, ("cord_uid",), label, "gold document")
    text_col = next((i for i, h in enumerate(header) if h.lower() in TWEET_TEXT), None)
    qids: list[str] = []
    docs: list[str] = []
    texts: dict[str, str] = {}
    first_line: dict[str, int] = {}  # post id -> the line it is first on
    for line, fields in records:
        query, doc = fields[id_col].strip(), fields[doc_col].strip()
        if not query or not doc:
            raise InputError(label, "empty post_id or cord_uid", line)
        if query in first_line:
            raise InputError(label, f"post_id {shown(query)} appears twice (first on line {first_line[query]})", line)
        first_line[query] = line
        qids.append(query)
        docs.append(doc)
        if text_col is not None:
            texts[query] = fields[text_col]
    return Qrels.from_rows(qids, docs, [1.0] * len(qids), texts=texts or None)


FORMAT = register(Format("checkthat-gold", "qrels", "CheckThat! 4b gold: post_id, tweet_text, cord_uid", sniff, read, read_rows,
                         header_names=("post_id", "cord_uid")), before="checkthat-list")
