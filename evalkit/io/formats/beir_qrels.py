"""BEIR qrels: a headed TSV ``query-id<TAB>corpus-id<TAB>score``."""
from __future__ import annotations

from typing import Iterable

from evalkit.core.columns import BEIR_DOC_ID, BEIR_GRADE, BEIR_QUERY_ID
from evalkit.data import Qrels
from evalkit.io.formats import Format, Sample, register
from evalkit.io.formats.tables import header_delimiter, find_column, parse_score, read_delimited
from evalkit.io.formats.trec_qrels import check_unique_pairs
from evalkit.io.textio import LoadedFile



def sniff(sample: Sample) -> bool:
    columns = sample.columns()
    return bool(columns & set(BEIR_QUERY_ID)) and bool(columns & set(BEIR_DOC_ID))


def read(loaded: LoadedFile, **_) -> Qrels:
    return read_rows(*read_delimited(loaded, header_delimiter(loaded)), loaded.label)


def read_rows(header: list[str], records: Iterable[tuple[int, list[str]]], label: str, **_) -> Qrels:
    qcol = find_column(header, BEIR_QUERY_ID, label, "query id")
    dcol = find_column(header, BEIR_DOC_ID, label, "document id")
    gcol = find_column(header, BEIR_GRADE, label, "grade")
    qids, docs, grades, lines = [], [], [], []
    for line, fields in records:
        qids.append(fields[qcol].strip())
        docs.append(fields[dcol].strip())
        grades.append(parse_score(fields[gcol], label, line, "grade"))
        lines.append(line)
    qrels = Qrels.from_rows(qids, docs, grades)
    check_unique_pairs(qrels.qidx, qrels.didx, len(qrels.doc_ids), label, lambda row: lines[row])
    return qrels


FORMAT = register(Format("beir-qrels", "qrels", "BEIR qrels TSV with header query-id, corpus-id, score", sniff, read, read_rows,
                         header_names=("query-id", "corpus-id")))
