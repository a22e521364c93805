"""Who judged each pair: ``human:<assessor>`` or ``llm:<model>@<prompt sha256>``, kept beside the judgments, read back.

Where it lives:

* evalkit's judging sheet: a ``judge`` column (and ``judge_error`` for an LLM
  answer that gave no grade); :mod:`evalkit.io.formats.judging_sheet` ignores
  both, so the sheet scores as before;
* a plain TREC qrels (``query 0 document grade``) stays plain, for trec_eval
  and every other reader: its provenance goes to the sidecar
  ``QRELS.judges.tsv`` (``query_id<TAB>doc_id<TAB>judge``, a header line).

:func:`read_judges` reads either. A judge is of kind ``llm`` or ``human`` by
its prefix (anything else: ``unknown``). Mixed gold, human where judged and
LLM elsewhere, is scored like any gold; :func:`judge_shares` says how much of
each run's top k an LLM judged::

    LLM@k(q) = |top k of the run for q judged by an llm: judge| / min(k, retrieved for q)

averaged over the gold's queries the run answers (the denominators of
Judged@k, :mod:`evalkit.metrics.judged_share`; a grade below 0 is unjudged
there and here), and likewise Human@k.
"""
from __future__ import annotations

import csv
import io
import os
from typing import TYPE_CHECKING, Iterator, Mapping

import numpy as np

from evalkit.core.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    from evalkit.data import Qrels, Run

SIDECAR_SUFFIX = ".judges.tsv"
KINDS = ("llm", "human")


def judges_sidecar(path: str | os.PathLike) -> str:
    """The provenance sidecar of a qrels file: ``QRELS.judges.tsv``."""
    return os.fspath(path) + SIDECAR_SUFFIX


def kind_of(judge: str) -> str:
    """``llm``, ``human`` or ``unknown``, by the judge's prefix."""
    prefix = judge.partition(":")[0].strip().lower()
    return prefix if prefix in KINDS else "unknown"


def qrels_texts(rows: list[tuple[str, str, str, str]]) -> tuple[str, str]:
    """(TREC qrels text, its sidecar's text) of ``(query, document, grade, judge)`` rows; unjudged (-1) rows left out."""
    qrels, sidecar = io.StringIO(), io.StringIO()
    writer = csv.writer(sidecar, delimiter="\t", lineterminator="\n")
    writer.writerow(["query_id", "doc_id", "judge"])
    for query, doc, grade, judge in rows:
        if float(grade) < 0:
            continue
        if any(c.isspace() for c in query + doc):
            raise InputError(query if any(c.isspace() for c in query) else doc,
                             "an id with white space cannot be written to TREC qrels (keep the judging sheet)")
        qrels.write(f"{query} 0 {doc} {grade}\n")
        writer.writerow([query, doc, judge])
    return qrels.getvalue(), sidecar.getvalue()


def _read_table(path: str) -> tuple[list[str], Iterator[tuple[int, list[str]]]]:
    """The table's header (lower-cased) and its records, read only as they are taken."""
    from evalkit.io.formats.tables import header_delimiter, read_delimited
    from evalkit.io.textio import load

    loaded = load(path)
    header, records = read_delimited(loaded, header_delimiter(loaded))
    return [h.lower() for h in header], records


def read_judges(gold: str | os.PathLike) -> dict[tuple[str, str], str] | None:
    """``{(query, document): judge}`` of a judging sheet's ``judge`` column or a qrels file's sidecar; ``None``: neither.
    A gold whose header names no judge is not read past its header."""
    path = os.fspath(gold)
    sidecar = judges_sidecar(path)
    source = sidecar if os.path.exists(sidecar) else path
    try:
        header, records = _read_table(source)
        if not {"query_id", "doc_id", "judge"} <= set(header):
            if source == sidecar:
                raise InputError(sidecar, "a judges sidecar needs the columns query_id, doc_id and judge", 1)
            return None
        q, d, j = (header.index(c) for c in ("query_id", "doc_id", "judge"))
        return {(fields[q].strip(), fields[d].strip()): fields[j].strip() for _, fields in records}
    except InputError:
        if source == sidecar:
            raise
        return None  # a gold that is no table (TREC qrels): no provenance


def judges_of(gold: object) -> tuple[dict[tuple[str, str], str] | None, str | None]:
    """Who judged each pair of a gold given as a path (:func:`read_judges`) and the sidecar that said so, if one did;
    ``(None, None)`` for a gold held in memory or an ``irds:`` dataset id."""
    from evalkit.io.datasets import is_dataset_id

    if not isinstance(gold, (str, os.PathLike)) or is_dataset_id(gold):
        return None, None
    judges = read_judges(gold)
    sidecar = judges_sidecar(gold)
    return judges, (sidecar if judges is not None and os.path.exists(sidecar) else None)


def judge_shares(run: "Run", qrels: "Qrels", judges: Mapping[tuple[str, str], str], k: int = 10) -> dict[str, float]:
    """``{"llm": LLM@k, "human": Human@k}`` of ``run`` on ``qrels`` whose pairs ``judges`` names (module docstring)."""
    ranked = run.ranked()
    keep = ranked.first & (ranked.rank <= k)
    queries = run.query_ids[ranked.qidx[keep]].tolist()
    docs = run.doc_ids[ranked.didx[keep]].tolist()
    grade = dict(zip(zip(qrels.query_ids[qrels.qidx].tolist(), qrels.doc_ids[qrels.didx].tolist()), qrels.grades.tolist()))
    gold_queries = set(qrels.query_ids.tolist())
    counts: dict[str, dict[str, int]] = {}
    retrieved: dict[str, int] = {}
    for query, doc in zip(queries, docs):
        if query not in gold_queries:
            continue
        retrieved[query] = retrieved.get(query, 0) + 1
        if grade.get((query, doc), -1.0) < 0:
            continue
        kind = kind_of(judges.get((query, doc), ""))
        per = counts.setdefault(query, {})
        per[kind] = per.get(kind, 0) + 1
    out = {}
    for kind in KINDS:
        shares = [counts.get(q, {}).get(kind, 0) / n for q, n in retrieved.items()]
        out[kind] = float(np.mean(shares)) if shares else float("nan")
    return out
