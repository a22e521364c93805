"""A graded judging sheet (written by ``evalkit pool``) read as qrels.

Header ``query_id, doc_id, relevance, pool_position`` (and the organiser's
columns ``n_runs, n_groups, runs, groups``, ignored here), tab- or
comma-separated. Every row needs a grade in ``relevance``: a finite number
(``-1``: judged as unjudged, trec_eval's convention). A sheet with rows left
empty is refused at its first empty row, with how many rows are still empty,
so a half-graded sheet is never scored as if complete; the same (query,
document) twice is refused too. Rows an assessor added (documents outside
the pool) are judgments like any other.
"""
from __future__ import annotations

from evalkit.data import Qrels
from evalkit.core.errors import InputError
from evalkit.io.formats import Format, Sample, register
from evalkit.io.formats.tables import find_column, header_delimiter, parse_score, read_delimited
from evalkit.io.formats.trec_qrels import check_unique_pairs
from evalkit.io.textio import LoadedFile

REQUIRED = ("query_id", "doc_id", "relevance", "pool_position")


def sniff(sample: Sample) -> bool:
    return set(REQUIRED) <= sample.columns()


def read(loaded: LoadedFile, **_) -> Qrels:
    header, records = read_delimited(loaded, header_delimiter(loaded))
    label = loaded.label
    qcol, dcol, gcol = (find_column(header, (name,), label, name) for name in REQUIRED[:3])
    qids, docs, grades, lines = [], [], [], []
    empty, first_empty = 0, None
    for line, fields in records:
        query, doc, grade = fields[qcol].strip(), fields[dcol].strip(), fields[gcol].strip()
        if not query or not doc:
            raise InputError(label, "empty query_id or doc_id", line)
        if not grade:
            empty += 1
            first_empty = first_empty or (line, query, doc)
            continue
        qids.append(query)
        docs.append(doc)
        grades.append(parse_score(grade, label, line, "relevance"))
        lines.append(line)
    if first_empty is not None:
        line, query, doc = first_empty
        raise InputError(
            label,
            f"no relevance grade for document {doc!r} of query {query!r}: {empty:,} of {empty + len(qids):,} rows of this "
            "judging sheet are not graded yet; grade every row (-1 leaves a document unjudged)",
            line,
        )
    qrels = Qrels.from_rows(qids, docs, grades)
    check_unique_pairs(qrels.qidx, qrels.didx, len(qrels.doc_ids), label, lambda row: lines[row])
    return qrels


FORMAT = register(Format("judging-sheet", "qrels", "judging sheet of evalkit pool, graded: query_id, doc_id, relevance, pool_position",
                         sniff, read))
