"""The per-query part of the HTML page: queries, gold documents, each run's top k, values, bounds and RBO.

Everything is columnar and vectorised (50,000 queries x 100 documents x a few
runs in seconds): documents are interned once (one code space for every run
and the gold), each run's ranking is cut to its top ``k`` rows per query
(offsets into flat arrays), and only the documents that appear there or in
the gold travel with the page. A run's rows carry no scores (the rank is
what the page shows; 4 bytes a row saved), and their grades are sparse:
the positions of the judged rows and their grades, as most rows of a pooled
task are unjudged.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from evalkit.data import Qrels, Run
from evalkit.data.ids import positions_in
from evalkit.metrics.evaluation import Evaluation
from evalkit.metrics.judgments import Bounds
from evalkit.report.page_encode import Column, index_column
from evalkit.stats.rank_correlation import rbo_many

TEXT_LIMIT = 1200  # characters of a document's text kept in the page
MAX_RBO_VALUES = 4_000_000  # per-query RBO values embedded; beyond, only pairs with the baseline


class DocCodes:
    """One integer code per document id, shared by every run and the gold."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}

    def codes(self, ids: np.ndarray) -> np.ndarray:
        """Codes of the unique ids of one run or qrels (its ``doc_ids``)."""
        setdefault, index = self.index.setdefault, self.index
        return np.fromiter((setdefault(d, len(index)) for d in ids.tolist()), dtype=np.int64, count=len(ids))

    def ids(self) -> np.ndarray:
        out = np.empty(len(self.index), dtype=object)
        out[:] = list(self.index)
        return out


@dataclass(frozen=True, eq=False)
class Rows:
    """A run's ranked rows on the page's queries, sorted by (page query, rank); within ``--depth``."""

    qpos: np.ndarray
    rank: np.ndarray
    doc: np.ndarray  # DocCodes code
    first: np.ndarray
    label: np.ndarray | None


def run_rows(run: Run, page_ids: np.ndarray, codes: DocCodes, depth: int | None) -> Rows:
    ranked = run.ranked()
    qpos = positions_in(run.query_ids, page_ids)[ranked.qidx]
    keep = qpos >= 0
    if depth is not None:
        keep &= ranked.rank <= depth
    order = np.flatnonzero(keep)[np.argsort(qpos[keep], kind="stable")]  # ranks stay in order within a query
    doc_codes = codes.codes(run.doc_ids)
    return Rows(
        qpos=qpos[order], rank=ranked.rank[order], doc=doc_codes[ranked.didx[order]], first=ranked.first[order],
        label=None if ranked.labels is None else ranked.labels[order],
    )


def offsets(qpos: np.ndarray, n_queries: int) -> Column:
    return Column(np.r_[0, np.cumsum(np.bincount(qpos, minlength=n_queries))], "i4")


def intern_labels(labels: np.ndarray) -> tuple[Column, list[str]]:
    names = sorted({str(x) for x in labels.tolist()})
    position = {name: i for i, name in enumerate(names)}
    return Column(np.array([position[str(x)] for x in labels.tolist()], dtype=np.int64), "u1" if len(names) < 256 else "i4"), names


class GradeLookup:
    """Grade of (page query, document code) in the qrels; NaN when unjudged (absent or negative)."""

    def __init__(self, qrels: Qrels, page_ids: np.ndarray, codes: DocCodes):
        qpos = positions_in(qrels.query_ids, page_ids)[qrels.qidx]
        doc = codes.codes(qrels.doc_ids)[qrels.didx]
        keep = (qpos >= 0) & (qrels.grades >= 0)
        self.width = np.int64(1) << 32
        keys = qpos[keep] * self.width + doc[keep]
        order = np.argsort(keys, kind="stable")
        self.keys, self.grades = keys[order], qrels.grades[keep][order]

    def __call__(self, qpos: np.ndarray, doc: np.ndarray) -> np.ndarray:
        keys = qpos.astype(np.int64) * self.width + doc
        out = np.full(len(keys), np.nan)
        if len(self.keys):
            at = np.minimum(np.searchsorted(self.keys, keys), len(self.keys) - 1)
            found = self.keys[at] == keys
            out[found] = self.grades[at[found]]
        return out


def gold_section(qrels: Qrels, page_ids: np.ndarray, codes: DocCodes) -> tuple[dict[str, Any], np.ndarray]:
    """Judged documents per query (grade >= 0), best grade first, then file order; and their doc codes."""
    qpos = positions_in(qrels.query_ids, page_ids)[qrels.qidx]
    doc = codes.codes(qrels.doc_ids)[qrels.didx]
    keep = np.flatnonzero((qpos >= 0) & (qrels.grades >= 0))
    order = keep[np.lexsort((keep, -qrels.grades[keep], qpos[keep]))]
    section: dict[str, Any] = {"offsets": offsets(qpos[order], len(page_ids)), "doc": doc[order],
                               "grade": Column(qrels.grades[order]), "label": None, "labels": []}
    if qrels.labels is not None:
        section["label"], section["labels"] = intern_labels(qrels.labels[order])
    return section, doc[order]


def top_section(rows: Rows, k: int, n_queries: int, grade_of: GradeLookup) -> tuple[dict[str, Any], np.ndarray]:
    """A run's top ``k`` per query: offsets and document codes; grades and repeats sparse (most rows are unjudged)."""
    top = rows.rank <= k
    qpos, doc = rows.qpos[top], rows.doc[top]
    grade = grade_of(qpos, doc)
    repeat = ~rows.first[top]
    grade[repeat] = np.nan  # a repeat counts as non-relevant
    judged = np.flatnonzero(~np.isnan(grade))
    section: dict[str, Any] = {"offsets": offsets(qpos, n_queries), "doc": doc,
                               "judged_at": Column(judged, "i4"), "judged_grade": Column(grade[judged]),
                               "repeat_at": Column(np.flatnonzero(repeat), "i4"), "label": None, "labels": []}
    if rows.label is not None:
        section["label"], section["labels"] = intern_labels(rows.label[top])
    return section, doc


def aligned(evaluation: Evaluation, page_ids: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per-query ``values`` of ``evaluation`` in page order (NaN for queries it did not evaluate)."""
    where = positions_in(page_ids, np.asarray(evaluation.query_ids, dtype=object))
    out = np.full(len(page_ids), np.nan)
    out[where >= 0] = np.asarray(values, dtype=np.float64)[where[where >= 0]]
    return out


def rbo_pairs(rows: Sequence[Rows], n_queries: int, baseline: int, p: float) -> list[list]:
    """Per-query RBO for every pair of runs, or only for pairs with the baseline when that would be too large."""
    n = len(rows)
    pairs = list(itertools.combinations(range(n), 2))
    if len(pairs) * n_queries > MAX_RBO_VALUES:
        pairs = [(min(i, baseline), max(i, baseline)) for i in range(n) if i != baseline]
    firsts = [(r.qpos[r.first], r.doc[r.first]) for r in rows]
    return [[i, j, Column(rbo_many(*firsts[i], *firsts[j], n_queries, p))] for i, j in pairs]


def text_of(text: str, limit: int = TEXT_LIMIT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def doc_texts(doc_ids: np.ndarray, corpus) -> dict[str, list[str] | None]:
    if corpus is None:
        return {"title": None, "text": None}
    where = corpus.position()
    out: dict[str, list[str] | None] = {}
    for field in ("title", "text"):
        values = corpus.fields.get(field)
        out[field] = None if values is None else [text_of(values[where[d]]) if d in where else "" for d in doc_ids.tolist()]
    return out


def queries_section(
    qrels: Qrels, runs: Sequence[tuple[Run, Evaluation, Bounds]], page_ids: np.ndarray, k: int, texts: Mapping[str, str] | None,
    corpus, baseline: int, rbo_p: float = 0.9,
) -> dict[str, Any]:
    """The explorer's data (see the module docstring); ``runs`` in page order with their bounds."""
    n = len(page_ids)
    codes = DocCodes()
    gold, used = gold_section(qrels, page_ids, codes)
    grade_of = GradeLookup(qrels, page_ids, codes)
    all_rows = [run_rows(run, page_ids, codes, evaluation.depth) for run, evaluation, _ in runs]
    sections: list[dict[str, Any]] = []
    for rows, (run, evaluation, found) in zip(all_rows, runs):
        top, docs = top_section(rows, k, n, grade_of)
        used = np.concatenate([used, docs])
        judged = evaluation.judged
        first = aligned(evaluation, page_ids, judged.first_relevant_rank()) if judged is not None else np.full(n, np.inf)
        sections.append({
            "name": run.name, "top": top, "first_rel": Column(first),
            "values": {m.label: Column(aligned(evaluation, page_ids, evaluation.per_query[m.label])) for m in found.lower.metrics},
            "upper": {m.label: Column(aligned(found.upper, page_ids, found.upper.per_query[m.label])) for m in found.upper.metrics},
        })
    embedded = np.unique(used)
    for section in [gold] + [s["top"] for s in sections]:
        section["doc"] = index_column(np.searchsorted(embedded, section["doc"]))
    doc_ids = codes.ids()[embedded]
    query_texts = [texts.get(q, "") for q in page_ids.tolist()] if texts else None
    return {
        "queries": {"ids": page_ids.tolist(), "text": query_texts,
                    "length": None if query_texts is None else index_column(np.array([len(t.split()) for t in query_texts]))},
        "docs": {"ids": doc_ids.tolist(), **doc_texts(doc_ids, corpus)},
        "gold": gold,
        "runs": sections,
        "rbo": {"p": rbo_p, "pairs": rbo_pairs(all_rows, n, baseline, rbo_p)},
    }
