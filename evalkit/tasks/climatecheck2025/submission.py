"""ClimateCheck 2025 submissions: CSV ``claim_id,abstract_id,rank[,label]``.

Official layout: comma-separated with that header; for every claim exactly 10
rows, contiguous, ranks 1..10 unique and in row order (the official scorer
reads row order); the optional ``label`` (required for Subtask II,
verification) is one of ``Supports``, ``Refutes``, ``Not Enough Information``.
Written sorted by claim (numerically when all claim ids are numbers) and rank.
"""
from __future__ import annotations

import csv
import io
import re
from typing import Sequence

from evalkit.core.errors import listed, shown
from evalkit.data.labels import LABELS, normalize_label
from evalkit.submission import Expectations, SubmissionFormat, register
from evalkit.submission.container import SubmissionText, header_and_records
from evalkit.submission.problems import Problems
from evalkit.submission.references import check_coverage, resolve_split

REQUIRED = ("claim_id", "abstract_id", "rank")
LABEL = "label"


def _check_header(header: list[str], line: int, expectations: Expectations, problems: Problems) -> dict[str, int] | None:
    names = [h.strip() for h in header]
    missing = [c for c in REQUIRED if c not in names]
    if missing:
        problems.error("header", f"missing column(s) {', '.join(map(repr, missing))} (found: {listed(header, 10)}); "
                                 "expected claim_id,abstract_id,rank[,label]", line)
        return None
    if names != header or names[: len(REQUIRED)] != list(REQUIRED) or any(n not in REQUIRED + (LABEL,) for n in names):
        problems.error("header", f"header is {shown(','.join(header))}; expected exactly 'claim_id,abstract_id,rank' or "
                                 "'claim_id,abstract_id,rank,label'", line)
    if expectations.labels_required and LABEL not in names:
        problems.error("header", "no 'label' column; the verification task needs claim_id,abstract_id,rank,label", line)
    return {name: names.index(name) for name in REQUIRED + (LABEL,) if name in names}


def check(submission: SubmissionText, expectations: Expectations, problems: Problems) -> None:
    read = header_and_records(submission.text, ",", "\t", problems, "tab-separated; the official format is comma-separated (CSV)")
    if read is None:
        return
    _, header_line, header, records = read
    columns = _check_header(header, header_line, expectations, problems)
    if columns is None:
        return
    seen: dict[str, int] = {}  # claim -> first line
    rows: dict[str, int] = {}  # claim -> rows so far
    abstracts: dict[str, dict[str, int]] = {}  # claim -> abstract -> line
    current = None
    for line, fields in records:
        if len(fields) != len(header):
            problems.error("fields", f"{len(fields)} fields, the header has {len(header)}", line)
            if len(fields) <= max(columns.values()):
                continue
        claim, abstract = fields[columns["claim_id"]].strip(), fields[columns["abstract_id"]].strip()
        if not claim or not abstract:
            problems.error("bad id", "empty claim_id or abstract_id", line)
            continue
        if claim != current and claim in seen:
            problems.error("claim order", f"rows of claim {shown(claim)} continue here after other claims (it starts on line {seen[claim]})", line)
        current = claim
        seen.setdefault(claim, line)
        rows[claim] = position = rows.get(claim, 0) + 1
        rank_text = fields[columns["rank"]].strip()
        try:
            rank = int(rank_text)
        except ValueError:
            problems.error("rank", f"claim {shown(claim)}: rank {shown(rank_text)} is not an integer", line)
        else:
            if rank != position:
                problems.error("rank", f"claim {shown(claim)}: rank {rank} on its row {position}; ranks must be 1..{expectations.depth} in row order", line)
        known = abstracts.setdefault(claim, {})
        if abstract in known:
            problems.error("repeated id", f"claim {shown(claim)} lists abstract {shown(abstract)} again (first on line {known[abstract]})", line)
        else:
            known[abstract] = line
        if expectations.collection is not None and abstract not in expectations.collection:
            problems.error("unknown id", f"claim {shown(claim)}: abstract {shown(abstract)} is not in the collection", line)
        if LABEL in columns:
            value = fields[columns[LABEL]]
            if value not in LABELS:
                canonical = normalize_label(value)
                hint = f" (write {shown(canonical)})" if canonical else ""
                problems.error("label", f"label {shown(value)} is not one of {', '.join(LABELS)}{hint}", line)
    if not seen:
        problems.error("content", "no data rows (header only)", header_line + 1)
        return
    for claim, count in rows.items():
        if count != expectations.depth:
            problems.error("list length", f"claim {shown(claim)} has {count} row{'' if count == 1 else 's'}, "
                                          f"expected exactly {expectations.depth}", seen[claim])
    expected = resolve_split(seen, expectations.splits, expectations.split, submission.path, problems)
    check_coverage(seen, expected, problems, "claim")
    problems.facts.update(queries=len(seen), depth=expectations.depth)


def natural_key(text: str) -> tuple:
    """``c2`` before ``c10``: digit runs compare as numbers."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text) if part)


def claim_order(claims: Sequence[str]) -> list[str]:
    """Claims in natural order (numbers inside ids compare numerically)."""
    return sorted(claims, key=lambda c: (natural_key(c), c))


def official_label(label: str | None, claim: str, abstract: str) -> str:
    """The official spelling of ``label`` (``NEI`` -> ``Not Enough Information``); unknown labels (``None`` too) are refused."""
    canonical = normalize_label(str(label))
    if canonical is None:
        from evalkit.core.errors import UsageError

        raise UsageError(f"claim {shown(claim)}, abstract {shown(abstract)}: label {shown(label)} is not one of {', '.join(LABELS)}")
    return canonical


def render(run, expectations: Expectations, queries: Sequence[str] | None, dedupe: bool) -> str:
    """The CSV, sorted by claim and rank; a label column when the run carries labels."""
    ranked = run.ranked()
    labelled = run.labels is not None
    per_claim: dict[str, list[tuple[str, str | None]]] = {}
    rows = zip(ranked.qidx.tolist(), ranked.didx.tolist(), ranked.first.tolist(), ranked.labels.tolist() if labelled else [None] * len(ranked.qidx))
    for q, d, first, label in rows:
        if dedupe and not first:
            continue
        per_claim.setdefault(run.query_ids[q], []).append((run.doc_ids[d], label))
    wanted = set(queries) if queries is not None else None
    claims = [c for c in per_claim if wanted is None or c in wanted]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(list(REQUIRED) + ([LABEL] if labelled else []))
    for claim in claim_order(claims):
        for rank, (abstract, label) in enumerate(per_claim[claim][: expectations.depth], start=1):
            writer.writerow([claim, abstract, rank] + ([official_label(label, claim, abstract)] if labelled else []))
    return buffer.getvalue()


def sniff(columns: list[str]) -> bool:
    return "claim_id" in columns


FORMAT = register(
    SubmissionFormat(
        name="climatecheck2025",
        description="CSV claim_id,abstract_id,rank[,label]: 10 rows per claim, ranks 1..10 in row order",
        member="predictions.csv",
        plain_suffixes=(".csv",),
        sniff=sniff,
        check=check,
        render=render,
    )
)
