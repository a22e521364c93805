"""TREC qrels: ``qid iteration docid grade``, whitespace-separated, no header.

Grades are numbers; a negative grade means "unjudged" (trec_eval). The same
(query, doc) judged twice is an error. Blank lines and comment lines (first
non-blank character ``#``, as trec_eval 10) are skipped.
"""
from __future__ import annotations

import numpy as np

from evalkit.data import Qrels
from evalkit.core.errors import InputError
from evalkit.io.formats import Format, Sample, register
from evalkit.io.formats.tables import data_line_number, read_whitespace
from evalkit.native.kernels import TREC_QRELS
from evalkit.io.textio import LoadedFile
from evalkit.core.input_rules import JUDGED_TWICE, first_repeated_pair


def sniff(sample: Sample) -> bool:
    parts = sample.fields
    if len(parts) != 4:
        return False
    if parts[1] == "0":  # the usual iteration field: TREC-shaped; the reader names a bad grade
        return True
    try:
        float(parts[3])
    except ValueError:
        return False
    return True


def check_unique_pairs(qidx: np.ndarray, didx: np.ndarray, n_docs: int, label: str, line_of=None) -> None:
    """Raise on a (query, doc) pair judged twice, naming the line of the repeat."""
    repeat = first_repeated_pair(qidx, didx, n_docs)
    if repeat is not None:
        raise InputError(label, JUDGED_TWICE, line_of(repeat) if line_of else None)


def read(loaded: LoadedFile, **_) -> Qrels:
    table = read_whitespace(loaded, TREC_QRELS, what="grade")
    [(qidx, query_ids), (didx, doc_ids)] = table.columns
    check_unique_pairs(qidx, didx, len(doc_ids), loaded.label, lambda row: data_line_number(loaded, row))
    return Qrels(query_ids=query_ids, doc_ids=doc_ids, qidx=qidx, didx=didx, grades=table.values)


FORMAT = register(Format("trec-qrels", "qrels", "TREC qrels: qid 0 docid grade", sniff, read))
