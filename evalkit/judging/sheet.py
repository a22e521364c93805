"""The judging sheet: a pool written for assessors, whose filled-in form reads back as qrels.

One row per pooled (query, document), queries in byte order, each query's
documents in the pool's seeded random order (:meth:`Pool.assessment_order`),
so assessors meet no run's ranking. Columns::

    query_id  doc_id  relevance  pool_position  [query_text  doc_text]  [n_runs  n_groups  runs  groups]

``relevance`` is left empty for the assessor: a grade, as in TREC qrels
(0 not relevant, 1 relevant, 2 highly relevant...; ``-1`` leaves a document
unjudged, trec_eval's convention). ``pool_position`` is the document's place
in its query's order (1, 2, ...). Given the queries and the collection, the
sheet carries the texts assessors read (``query_text``, ``doc_text``: title
and text). The organiser's copy also says how many
runs and groups retrieved each document, and which; ``blind=True`` leaves
those out for the copy assessors see (who retrieved a document should not
sway its grade). Tab-separated (``.tsv``) or comma-separated (``.csv``),
quoted as :mod:`csv` quotes, so any id survives a round trip; a run or group
name that a spreadsheet would run as a formula (``=...``) is written with a
leading ``'`` (ids are written as they are: :func:`formula_like_ids` lists
those to warn about).

Once graded, the sheet is a gold file like any other: ``evalkit score RUN
SHEET`` reads it (format ``judging-sheet``, :mod:`evalkit.io.formats.judging_sheet`),
and refuses a sheet with rows left empty, naming the first and counting them.
"""
from __future__ import annotations

import csv
import io
from typing import Mapping

from evalkit.judging.pool import Pool

COLUMNS = ("query_id", "doc_id", "relevance", "pool_position")
PROVENANCE = ("n_runs", "n_groups", "runs", "groups")
LIST_SEPARATOR = "; "  # between run (group) names in the runs (groups) column: for reading, never parsed back
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # a cell starting so is a formula to a spreadsheet program (CSV injection)


def inert(text: str) -> str:
    """A name or text as a spreadsheet shows it without running it: a leading ``'`` before a formula start."""
    return "'" + text if text.startswith(FORMULA_START) else text


def formula_like_ids(pool: Pool) -> list[str]:
    """Query and document ids that a spreadsheet program would read as a formula (written as they are: they are data)."""
    def formula(text: str) -> bool:
        if not text.startswith(FORMULA_START):
            return False
        try:
            float(text)
            return False  # -3, +1.5: numbers, not formulas
        except ValueError:
            return True

    return [x for x in (*pool.query_ids.tolist(), *pool.doc_ids.tolist()) if formula(x)]


def delimiter_for(path: str) -> str:
    """Comma for a ``.csv`` file name, else tab."""
    return "," if str(path).lower().endswith(".csv") else "\t"


def sheet_text(pool: Pool, seed: int, *, delimiter: str = "\t", blind: bool = False, query_texts: Mapping[str, str] | None = None,
               doc_texts: Mapping[str, str] | None = None) -> str:
    """The judging sheet of ``pool`` (see the module docstring); ``query_texts`` / ``doc_texts`` add the texts assessors read."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=delimiter, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    texts = [(name, values) for name, values in (("query_text", query_texts), ("doc_text", doc_texts)) if values is not None]
    writer.writerow([*COLUMNS, *(name for name, _ in texts), *(() if blind else PROVENANCE)])
    order = pool.assessment_order(seed)
    queries, docs = pool.query_ids.tolist(), pool.doc_ids.tolist()
    pair_query, pair_doc = pool.pair_query.tolist(), pool.pair_doc.tolist()
    if not blind:
        holders = pool.retrieved_by()
        n_groups = pool.groups_per_pair().tolist()
        by_name = sorted(range(len(pool.runs)), key=lambda r: pool.runs[r])  # names in byte order: the sheet ignores the runs' order
        place = {r: i for i, r in enumerate(by_name)}
        cells: dict[tuple[int, ...], tuple[str, str]] = {}  # the runs and groups columns of each distinct set of runs
    position, previous = 0, -1
    for pair in order.tolist():
        query = pair_query[pair]
        position = position + 1 if query == previous else 1
        previous = query
        row = [queries[query], docs[pair_doc[pair]], "", position]
        for name, values in texts:
            row.append(inert(values.get(row[0 if name == "query_text" else 1], "")))
        if not blind:
            runs = tuple(holders[pair])
            if runs not in cells:
                names = [pool.runs[r] for r in sorted(runs, key=place.__getitem__)]
                groups = sorted({pool.groups[r] for r in runs})
                cells[runs] = (LIST_SEPARATOR.join(map(inert, names)), LIST_SEPARATOR.join(map(inert, groups)))
            row += [len(runs), n_groups[pair], *cells[runs]]
        writer.writerow(row)
    return buffer.getvalue()
