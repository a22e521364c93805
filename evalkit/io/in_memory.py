"""The door for inputs held in memory (a Run or Qrels built in code, a DataFrame, a dict), read as files are.

:func:`run_from` and :func:`qrels_from` (which :func:`evalkit.io.reading.as_run` /
:func:`~evalkit.io.reading.as_qrels` call) take each form:

- a :class:`~evalkit.data.Run` / :class:`~evalkit.data.Qrels` built in code is
  checked as a file's rows are (:func:`check_built`);
- a DataFrame whose columns are a file format's own layout is read by that
  format's reader, row by row, as the file would be (a task's gold or
  submission, BEIR-style judgments); the gold's layout then detects the task
  as its file would (:attr:`Qrels.layout`), so a gold DataFrame with an extra
  ``relevance`` column keeps its task;
- any other table (query id, doc id, score, rank or grade under the names of
  :mod:`evalkit.core.columns`) is read by :func:`run_from_table` /
  :func:`qrels_from_table`; nested dicts by :func:`run_from_dict` /
  :func:`qrels_from_dict`.

Every value meets the rules of :mod:`evalkit.core.input_rules`; two keys that
are one id once written as text (``1`` and ``"1"``) are refused.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterator, Mapping

import numpy as np

from evalkit.core import columns as names
from evalkit.core.errors import InputError, UsageError, listed, shown
from evalkit.core.input_rules import (
    JUDGED_TWICE,
    ValueProblem,
    cell_text,
    check_table_columns,
    first_repeated_pair,
    identifier,
    identifiers,
    number,
    numbers_array,
    table_column,
    texts,
    utf8_text,
)
from evalkit.data import Qrels, Run
from evalkit.io.formats import Format, Sample, formats, list_run

SNIFF_ROWS = 5  # rows shown to a format's sniff, as a file's first lines are


def _is_frame(obj: Any) -> bool:
    return type(obj).__name__ == "DataFrame" and hasattr(obj, "columns")


def run_from(obj: Any, *, name: str | None = None, column: str | None = None) -> Run:
    """A :class:`Run` from a Run built in code, a DataFrame or a dict (the module docstring)."""
    if isinstance(obj, Run):
        if obj.source is None:  # built in code (Run.from_scores...): the same rules as a file's
            check_built(obj, f"run {obj.name!r}")
        return obj.with_name(name) if name else obj
    if _is_frame(obj):
        return run_from_frame(obj, name or "run", column)
    if isinstance(obj, Mapping):
        return run_from_dict(obj, name or "run")
    raise UsageError(f"cannot use a {type(obj).__name__} as a run (give a path, a Run, a DataFrame or a dict)")


def qrels_from(obj: Any) -> Qrels:
    """A :class:`Qrels` from a Qrels built in code, a DataFrame or a ``{query_id: {doc_id: grade}}`` dict."""
    if isinstance(obj, Qrels):
        if obj.source is None:
            check_built(obj, "gold Qrels")
        return obj
    if _is_frame(obj):
        return qrels_from_frame(obj)
    if isinstance(obj, Mapping):
        return qrels_from_dict(obj)
    raise UsageError(f"cannot use a {type(obj).__name__} as gold (give a path, a Qrels, a DataFrame or a dict)")


def _header(frame) -> list[str]:
    return [str(column).strip() for column in frame.columns]


def _rows(frame) -> Iterator[list[str]]:
    for row in frame.itertuples(index=False, name=None):
        yield [cell_text(value) for value in row]


def _records(frame, label: str) -> Iterator[tuple[int, list[str]]]:
    """``(row, fields)`` as :func:`~evalkit.io.formats.tables.read_delimited` yields them (blank rows skipped, rows 1-based),
    each field UTF-8 text as a file's must be (else one error naming the row and column)."""
    header = _header(frame)
    for number_, fields in enumerate(_rows(frame), start=1):
        for column, field in zip(header, fields):
            try:
                utf8_text(field)
            except ValueProblem as problem:
                raise UsageError(f"{label}, row {number_}, column {shown(column)}: {problem}") from None
        if any(field.strip() for field in fields):
            yield number_, fields


def layout_of(frame, kind: str, column: str | None = None) -> Format | None:
    """The file format whose sniff claims the DataFrame's columns (and first rows), if it reads headed rows."""
    rows = ["\t".join(fields) for _, fields in zip(range(SNIFF_ROWS), _rows(frame))]
    sample = Sample(["\t".join(_header(frame)), *rows])
    for fmt in formats(kind):
        if fmt.read_rows is None or not fmt.sniff(sample):
            continue
        if fmt is list_run.FORMAT and not _has_lists(sample, column):
            continue  # query id + doc id + score: a table of its own (TREC runs have no header)
        return fmt
    return None


def _has_lists(sample: Sample, column: str | None) -> bool:
    columns = sample.columns()
    return column is not None or "preds" in columns or any(field.lstrip().startswith("[") for line in sample.lines[1:2]
                                                             for field in line.split("\t"))


def _read_rows(fmt: Format, frame, label: str, **options):
    assert fmt.read_rows is not None  # a format of layout_of: one that reads headed rows
    try:
        return fmt.read_rows(_header(frame), _records(frame, label), label, **options)
    except InputError as exc:  # the reader counts rows as lines: say rows
        row = f", row {exc.line}" if exc.line is not None else ""
        raise UsageError(f"{label}{row}: {exc.message.replace('on line', 'in row')}") from None


def run_from_frame(frame, name: str = "run", column: str | None = None) -> Run:
    """A run from a DataFrame: a task's submission layout through its reader, else a table of ids and scores."""
    label = f"run DataFrame {shown(name)}" if name != "run" else "run DataFrame"
    check_table_columns(frame, label)
    fmt = layout_of(frame, "run", column)
    if fmt is None:
        return run_from_table(frame, name)
    return replace(_read_rows(fmt, frame, label, column=column), name=name)


def qrels_from_frame(frame) -> Qrels:
    """Judgments from a DataFrame: a task's gold layout through its reader (the layout detects the task), else a table."""
    label = "gold DataFrame"
    check_table_columns(frame, label)
    fmt = layout_of(frame, "qrels")
    if fmt is None:
        return qrels_from_table(frame)
    return replace(_read_rows(fmt, frame, label), layout=fmt.name)


def run_from_table(frame, name: str = "run") -> Run:
    """A run from a table with query and doc id columns and a score column (a scored run) or none (a list run: row
    order within a query, or a ``rank`` column, ties keeping row order); an optional label column. Names as in
    :mod:`evalkit.core.columns`; ids are text or integers, scores and ranks finite numbers."""
    label = "run DataFrame"
    check_table_columns(frame, label)
    qcol, dcol = names.find(frame.columns, names.QUERY_ID), names.find(frame.columns, names.DOC_ID)
    if qcol is None or dcol is None:
        raise UsageError(f"{label} needs a query id and a doc id column (found: {listed(map(str, frame.columns), 10)})")
    scol, rcol, lcol = (names.find(frame.columns, a) for a in (names.SCORE, names.RANK, names.LABEL))
    if scol is None and rcol is not None:
        ranks = table_column(frame, rcol, numbers_array, "rank", label)
        frame = frame.iloc[np.argsort(ranks, kind="stable")]
    scores = None if scol is None else table_column(frame, scol, numbers_array, "score", label)
    labels = None if lcol is None else table_column(frame, lcol, texts, "label", label)
    qids = table_column(frame, qcol, identifiers, "query id", label)
    docs = table_column(frame, dcol, identifiers, "doc id", label)
    return Run.from_rows(qids, docs, scores, labels, name=name)


def qrels_from_table(frame) -> Qrels:
    """Judgments from a table of query id, doc id and grade columns (names as in :mod:`evalkit.core.columns`): finite
    grades, each (query, doc) judged once."""
    label = "gold DataFrame"
    check_table_columns(frame, label)
    qcol, dcol = names.find(frame.columns, names.QUERY_ID), names.find(frame.columns, names.DOC_ID)
    gcol = names.find(frame.columns, names.GRADE)
    if qcol is None or dcol is None or gcol is None:
        raise UsageError(f"{label} needs query id, doc id and relevance columns (found: {listed(map(str, frame.columns), 10)})")
    grades = table_column(frame, gcol, numbers_array, "grade", label)
    qids = table_column(frame, qcol, identifiers, "query id", label)
    docs = table_column(frame, dcol, identifiers, "doc id", label)
    qrels = Qrels.from_rows(qids, docs, grades)
    repeat = first_repeated_pair(qrels.qidx, qrels.didx, len(qrels.doc_ids))
    if repeat is not None:
        raise UsageError(f"{label}, row {repeat + 1} (index {frame.index[repeat]!r}): {JUDGED_TWICE}")
    return qrels


def check_built(item: Run | Qrels, label: str) -> None:
    """A :class:`Run` or :class:`Qrels` built in code (not read from a file) meets the readers' rules: text ids,
    finite scores or grades, a pair judged once (vectorised: the values are already arrays)."""
    for what, ids in (("query id", item.query_ids), ("doc id", item.doc_ids)):
        for value in ids.tolist():
            if not isinstance(value, str) or not value.strip():
                raise UsageError(f"{label}: {what} {shown(value)} is not text (build runs and gold with text ids, or pass a dict)")
            try:
                utf8_text(value, what)
            except ValueProblem as problem:
                raise UsageError(f"{label}: {problem}") from None
    for value in (item.labels.tolist() if item.labels is not None else []):
        try:
            utf8_text(str(value), "label")
        except ValueProblem as problem:
            raise UsageError(f"{label}: {problem}") from None
    values, what = (item.grades, "grade") if isinstance(item, Qrels) else (item.scores, "score")
    if values is not None and len(values) and not np.all(np.isfinite(values)):
        row = int(np.flatnonzero(~np.isfinite(values))[0])
        raise UsageError(f"{label}: {what} {values[row]} of query {shown(item.query_ids[item.qidx[row]])} is not a finite number")
    if isinstance(item, Qrels) and first_repeated_pair(item.qidx, item.didx, len(item.doc_ids)) is not None:
        raise UsageError(f"{label}: {JUDGED_TWICE}")


def _ids(mapping: Mapping, what: str, label: str, clash: str = "") -> list[tuple[str, Any]]:
    """``(id as text, value)`` per key; two keys that are one id as text (``1`` and ``"1"``) are refused (``clash``: why)."""
    out: list[tuple[str, Any]] = []
    first: dict[str, Any] = {}  # id as text -> the key it was written as
    for key, value in mapping.items():
        try:
            text = identifier(key, what)
        except ValueProblem as problem:
            raise UsageError(f"{label}: {problem}") from None
        if text in first:
            raise UsageError(f"{label}: {what}s {shown(first[text])} and {shown(key)} are one id once written as text "
                             f"({shown(text)}){clash}")
        first[text] = key
        out.append((text, value))
    return out


def _number(value: Any, what: str, label: str) -> float:
    try:
        return number(value, what)
    except ValueProblem as problem:
        raise UsageError(f"{label}: {problem}") from None


def run_from_dict(data: Mapping, name: str = "run") -> Run:
    """``{query: {doc: score}}`` (a scored run) or ``{query: [doc, ...]}`` (a list run, list order)."""
    label = "run dict"
    if not data:
        raise UsageError(f"{label}: no query (an empty run)")
    values = list(data.values())
    if all(isinstance(v, Mapping) for v in values):
        scores = {}
        for query, docs in _ids(data, "query id", label):
            where = f"{label}, query {shown(query)}"
            scores[query] = {doc: _number(score, "score", f"{where}, doc {shown(doc)}") for doc, score in _ids(docs, "doc id", where)}
        return Run.from_scores(scores, name=name)
    if all(isinstance(v, (list, tuple)) for v in values):
        lists = {}
        for query, docs in _ids(data, "query id", label):
            where = f"{label}, query {shown(query)}"
            try:
                lists[query] = [identifier(doc, "doc id") for doc in docs]  # a repeat occupies its slot, as in a list file
            except ValueProblem as problem:
                raise UsageError(f"{where}: {problem}") from None
        return Run.from_lists(lists, name=name)
    raise UsageError("a run dict maps query ids to {doc_id: score} dicts or to [doc_id, ...] lists")


def qrels_from_dict(data: Mapping) -> Qrels:
    """``{query: {doc: grade}}``: finite grades, each (query, doc) judged once."""
    label = "gold dict"
    if not all(isinstance(v, Mapping) for v in data.values()):
        raise UsageError(f"{label} maps query ids to {{doc_id: grade}} dicts")
    judgments: dict[str, dict[str, float]] = {}
    for query, docs in _ids(data, "query id", label):
        where = f"{label}, query {shown(query)}"
        judged = _ids(docs, "doc id", where, f": {JUDGED_TWICE}")
        judgments[query] = {doc: _number(grade, "grade", f"{where}, doc {shown(doc)}") for doc, grade in judged}
    if not any(judgments.values()):
        raise UsageError(f"{label}: no judgments (an empty gold)")
    return Qrels.from_dict({q: docs for q, docs in judgments.items() if docs})
