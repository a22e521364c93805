"""BEIR qrels: a headed TSV ``query-id<TAB>corpus-id<TAB>score``."""
from __future__ import annotations

from evalkit.data import Qrels
from evalkit.formats import Format, Sample, register
from evalkit.formats.tables import header_delimiter, find_column, parse_score, read_delimited
from evalkit.formats.trec_qrels import check_unique_pairs
from evalkit.textio import LoadedFile

QUERY_COLUMNS = ("query-id", "query_id", "qid")
DOC_COLUMNS = ("corpus-id", "corpus_id", "doc-id", "doc_id", "docid")
GRADE_COLUMNS = ("score", "relevance", "grade", "label")


def sniff(sample: Sample) -> bool:
    columns = sample.columns()
    return bool(columns & set(QUERY_COLUMNS)) and bool(columns & set(DOC_COLUMNS))


def read(loaded: LoadedFile, **_) -> Qrels:
    header, records = read_delimited(loaded, header_delimiter(loaded))
    label = loaded.label
    qcol = find_column(header, QUERY_COLUMNS, label, "query id")
    dcol = find_column(header, DOC_COLUMNS, label, "document id")
    gcol = find_column(header, GRADE_COLUMNS, label, "grade")
    qids, docs, grades, lines = [], [], [], []
    for line, fields in records:
        qids.append(fields[qcol].strip())
        docs.append(fields[dcol].strip())
        grades.append(parse_score(fields[gcol], label, line, "grade"))
        lines.append(line)
    qrels = Qrels.from_rows(qids, docs, grades)
    check_unique_pairs(qrels.qidx, qrels.didx, len(qrels.doc_ids), label, lambda row: lines[row])
    return qrels


FORMAT = register(Format("beir-qrels", "qrels", "BEIR qrels TSV with header query-id, corpus-id, score", sniff, read, (".tsv",)))
