"""TREC run: ``qid Q0 docid rank score tag``, whitespace-separated, no header.

As in trec_eval, the rank column is ignored: documents are ordered by score
(descending), ties by doc id (descending).
"""
from __future__ import annotations

from evalkit.data import Run
from evalkit.formats import Format, Sample, register
from evalkit.formats.tables import read_whitespace
from evalkit.textio import LoadedFile


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def sniff(sample: Sample) -> bool:
    parts = sample.first.split()
    return len(parts) == 6 and _is_number(parts[4]) and parts[3].lstrip("-").isdigit()


def read(loaded: LoadedFile, **_) -> Run:
    [(qidx, query_ids), (didx, doc_ids)], scores = read_whitespace(loaded, 6, keep=(0, 2), numeric=4)
    return Run(query_ids=query_ids, doc_ids=doc_ids, qidx=qidx, didx=didx, scores=scores)


FORMAT = register(Format("trec-run", "run", "TREC run: qid Q0 docid rank score tag", sniff, read, (".trec", ".run", ".txt")))
