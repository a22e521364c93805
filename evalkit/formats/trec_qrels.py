"""TREC qrels: ``qid iteration docid grade``, whitespace-separated, no header.

Grades are numbers; a negative grade means "unjudged" (trec_eval). The same
(query, doc) judged twice is an error.
"""
from __future__ import annotations

import numpy as np

from evalkit.data import Qrels
from evalkit.errors import InputError
from evalkit.formats import Format, Sample, register
from evalkit.formats.tables import read_whitespace
from evalkit.textio import LoadedFile


def sniff(sample: Sample) -> bool:
    parts = sample.first.split()
    if len(parts) != 4:
        return False
    try:
        float(parts[3])
    except ValueError:
        return False
    return True


def check_unique_pairs(qidx: np.ndarray, didx: np.ndarray, n_docs: int, label: str, line_of=None) -> None:
    """Raise on a (query, doc) pair judged twice, naming the line of the repeat."""
    key = qidx * max(n_docs, 1) + didx
    _, first, counts = np.unique(key, return_index=True, return_counts=True)
    if np.any(counts > 1):
        seen = np.zeros(len(key), dtype=bool)
        seen[first] = True
        repeat = int(np.flatnonzero(~seen)[0])
        line = line_of(repeat) if line_of else None
        raise InputError(label, "the same (query, document) pair is judged twice", line)


def _line_of_row(loaded: LoadedFile):
    def line_of(row: int) -> int:
        count = -1
        for number, line in enumerate(loaded.text().split("\n"), start=1):
            if line.strip():
                count += 1
                if count == row:
                    return number
        return 0

    return line_of


def read(loaded: LoadedFile, **_) -> Qrels:
    [(qidx, query_ids), (didx, doc_ids)], grades = read_whitespace(loaded, 4, keep=(0, 2), numeric=3, what="grade")
    check_unique_pairs(qidx, didx, len(doc_ids), loaded.label, _line_of_row(loaded))
    return Qrels(query_ids=query_ids, doc_ids=doc_ids, qidx=qidx, didx=didx, grades=grades)


FORMAT = register(Format("trec-qrels", "qrels", "TREC qrels: qid 0 docid grade", sniff, read, (".qrels", ".qrel", ".txt")))
