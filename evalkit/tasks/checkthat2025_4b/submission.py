"""CheckThat! 2025 Task 4b submissions: ``predictions.tsv`` with ``post_id<TAB>preds``.

Official layout: header exactly ``post_id<TAB>preds``; one row per tweet of
the split, each exactly once; ``preds`` a Python list literal of 5 distinct
cord_uids, best first, written in single quotes (``['a', 'b', ...]``);
uploaded as a zip holding ``predictions.tsv`` at its top level.

The check reads the file itself, leniently (comma-separated files, extra or
renamed columns, double quotes are reported, not fatal), and keeps going after
each problem.
"""
from __future__ import annotations

from typing import Sequence

from evalkit.tasks.checkthat2025_4b.columns import SUBMISSION_QUERY_ID
from evalkit.core.errors import listed, shown
from evalkit.core.listparse import ListLiteralError, format_id_list, parse_id_list
from evalkit.submission import Expectations, SubmissionFormat, register
from evalkit.submission.container import SubmissionText, header_and_records
from evalkit.submission.problems import Problems
from evalkit.submission.references import check_coverage, resolve_split

HEADER = ["post_id", "preds"]


def _locate_columns(header: list[str], first_row: list[str], line: int, problems: Problems) -> tuple[int, int] | None:
    lowered = [h.strip().lower() for h in header]
    if "preds" in lowered:
        list_col = lowered.index("preds")
    else:
        lists = [i for i, value in enumerate(first_row) if i < len(header) and value.lstrip().startswith("[")]
        if len(lists) != 1:
            hint = " (a TREC run? `evalkit submit` converts runs)" if len(" ".join(header).split()) == 6 else ""
            problems.error("header", f"no 'preds' column and no single column of id lists; the content cannot be checked{hint}", line)
            return None
        list_col = lists[0]
        problems.error("header", f"the id lists are in column {shown(header[list_col])}; it must be named 'preds'", line)
    id_col = next((lowered.index(c) for c in SUBMISSION_QUERY_ID if c in lowered and lowered.index(c) != list_col), None)
    if id_col is None:
        problems.error("header", "no 'post_id' column; the content cannot be checked", line)
        return None
    if lowered[id_col] != "post_id":
        problems.error("header", f"the tweet ids are in column {shown(header[id_col])}; it must be named 'post_id'", line)
    extra = [h for i, h in enumerate(header) if i not in (id_col, list_col)]
    if extra:
        problems.error("header", f"extra column(s) {listed(extra)}; only post_id and preds are allowed", line)
    return id_col, list_col


def _check_ids(query: str, ids: list[str], line: int, expectations: Expectations, problems: Problems) -> None:
    if len(ids) != expectations.depth:
        problems.error("list length", f"post_id {shown(query)} has {len(ids)} id{'' if len(ids) == 1 else 's'}, expected exactly {expectations.depth}", line)
    positions: dict[str, list[int]] = {}
    for position, doc in enumerate(ids, start=1):
        positions.setdefault(doc, []).append(position)
        if not doc.strip() or doc != doc.strip() or len(doc.split()) != 1:
            problems.error("bad id", f"post_id {shown(query)}: id {shown(doc)} at position {position} is empty or holds spaces", line)
    for doc, where in positions.items():
        if len(where) > 1:
            places = listed(where, 10, str)
            problems.error("repeated id", f"post_id {shown(query)} lists {shown(doc)} {len(where)} times (positions {places})", line)
    if expectations.collection is not None:
        unknown = [d for d in positions if d not in expectations.collection]
        if unknown:
            problems.error("unknown id", f"post_id {shown(query)}: {listed(unknown)} not in the collection", line)


def check(submission: SubmissionText, expectations: Expectations, problems: Problems) -> None:
    complaint = "comma-separated; the official format is tab-separated (post_id<TAB>preds)"
    read = header_and_records(submission.text, "\t", ",", problems, complaint)
    if read is None:
        return
    delimiter, header_line, header, records = read
    if header != HEADER:
        problems.error("header", f"header is {shown(delimiter.join(header))}; expected exactly 'post_id<TAB>preds'", header_line)
    columns = None
    seen: dict[str, int] = {}
    double_quoted: list[int] = []
    for line, fields in records:
        if columns is None:
            columns = _locate_columns(header, fields, header_line, problems)
            if columns is None:
                return
        id_col, list_col = columns
        if len(fields) != len(header):
            problems.error("fields", f"{len(fields)} fields, the header has {len(header)}", line)
            if len(fields) <= max(id_col, list_col):
                continue
        query = fields[id_col]
        if query != query.strip():
            problems.error("bad query id", f"post_id {shown(query)} has surrounding spaces", line)
        query = query.strip()
        if not query:
            problems.error("bad query id", "empty post_id", line)
            continue
        if query in seen:
            problems.error("duplicate query", f"post_id {shown(query)} appears again (first on line {seen[query]})", line)
            continue
        seen[query] = line
        raw = fields[list_col]
        try:
            ids = parse_id_list(raw)
        except ListLiteralError as exc:
            problems.error("preds", f"post_id {shown(query)}: preds {exc}: {shown(' '.join(raw[:1000].split()))}", line)
            continue
        if '"' in raw:
            double_quoted.append(line)
        _check_ids(query, ids, line, expectations, problems)
    if columns is None:
        problems.error("content", "no data rows (header only)", header_line + 1)
        return
    if double_quoted:
        problems.warning(
            "quotes",
            f"{len(double_quoted)} rows write preds with double quotes; the official spelling is single quotes "
            "(['a', 'b'])",
            double_quoted[0],
        )
    expected = resolve_split(seen, expectations.splits, expectations.split, submission.path, problems)
    check_coverage(seen, expected, problems, "post_id")
    problems.facts.update(queries=len(seen), depth=expectations.depth)


def render(run, expectations: Expectations, queries: Sequence[str] | None, dedupe: bool) -> str:
    """``post_id<TAB>preds`` rows, top ``depth`` ids of each query in single-quoted list literals."""
    lists = run.to_lists()
    order = list(queries) if queries is not None else list(lists)
    rows = ["\t".join(HEADER)]
    for query in order:
        if query not in lists:
            continue
        ids = list(dict.fromkeys(lists[query])) if dedupe else lists[query]
        rows.append(f"{query}\t{format_id_list(ids[: expectations.depth])}")
    return "\n".join(rows) + "\n"


def sniff(columns: list[str]) -> bool:
    return "post_id" in columns or "preds" in columns


FORMAT = register(
    SubmissionFormat(
        name="checkthat2025-4b",
        description="predictions.tsv: post_id<TAB>preds, 5 distinct cord_uids per tweet as ['a', 'b', ...], zipped without a folder",
        member="predictions.tsv",
        plain_suffixes=(".tsv",),
        sniff=sniff,
        check=check,
        render=render,
    )
)
