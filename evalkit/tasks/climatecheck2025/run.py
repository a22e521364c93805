"""ClimateCheck 2025 submission: CSV ``claim_id,abstract_id,rank[,label]``.

Read as leniently as the official scorer reads it (every file it scores is
read): the columns are kept as written for the official figures
(:mod:`evalkit.tasks.climatecheck2025.official`: Recall@k over row order, Bpref
over the rank column, labels compared lower-cased), and evalkit's own reading
is warned about where it differs: evalkit's metrics rank a claim's rows in
the order written, count a repeated abstract once, and read label spellings
case-insensitively (``NEI``, ``Supports `` with a space). Only files the
scorer cannot read are refused: no claim_id / abstract_id / rank column.
"""
from __future__ import annotations

from typing import Iterable

from evalkit.tasks.climatecheck2025.columns import ABSTRACT_ID, LABEL
from evalkit.data import Run
from evalkit.core.errors import listed, shown
from evalkit.io.formats import Format, Sample, register
from evalkit.io.formats.tables import find_column, header_delimiter, read_delimited
from evalkit.data.labels import LABELS, normalize_label
from evalkit.io.textio import LoadedFile

OFFICIAL_LOWER = {label.lower() for label in LABELS}


def sniff(sample: Sample) -> bool:
    columns = sample.columns()
    return "claim_id" in columns and bool(columns & set(ABSTRACT_ID)) and "rank" in columns and "annotation" not in columns


def _first(found: dict[str, int], what: str, limit: int = 3) -> str:
    return f"{len(found)} {what}: {listed(found.items(), limit, lambda item: f'{shown(item[0])} (line {item[1]})', len(found))}"


def read(loaded: LoadedFile, **_) -> Run:
    return read_rows(*read_delimited(loaded, header_delimiter(loaded)), loaded.label)


def read_rows(header: list[str], records: Iterable[tuple[int, list[str]]], label: str, **_) -> Run:
    ccol = find_column(header, ("claim_id",), label, "claim id")
    acol = find_column(header, ABSTRACT_ID, label, "abstract id")
    rcol = find_column(header, ("rank",), label, "rank")
    lcol = next((i for i, h in enumerate(header) if h.lower() in LABEL), None)
    written: dict[str, list[str]] = {"claim_id": [], "abstract_id": [], "rank": [], "_line": []}  # _line: each row's file line
    official_labels = lcol is not None and header[lcol] == "label"  # the scorer reads only a column named exactly so
    if official_labels:
        written["label"] = []
    claims, abstracts, labels, ranks = [], [], [], []
    position: dict[str, int] = {}
    disagreeing: dict[str, int] = {}
    odd_ranks: dict[str, int] = {}
    odd_labels: dict[str, int] = {}
    empty_claims = empty_abstracts = 0
    for line, fields in records:
        written["_line"].append(str(line))
        written["claim_id"].append(fields[ccol])
        written["abstract_id"].append(fields[acol])
        written["rank"].append(fields[rcol])
        if official_labels:
            assert lcol is not None  # official_labels: a label column was found
            written["label"].append(fields[lcol])
        claim, abstract = fields[ccol].strip(), fields[acol].strip()
        if not claim:  # no official measure reads a row without a claim
            empty_claims += 1
            continue
        empty_abstracts += not abstract
        rank_text = fields[rcol].strip()
        try:
            rank = int(rank_text)
        except ValueError:
            odd_ranks.setdefault(rank_text, line)
            rank = 0
        position[claim] = position.get(claim, 0) + 1
        if rank != position[claim]:
            disagreeing.setdefault(claim, line)
        if lcol is not None:
            text = fields[lcol]
            canonical = normalize_label(text)
            if text.lower() not in OFFICIAL_LOWER:  # the scorer compares lower-cased text: 'supports' is right, 'NEI' wrong
                odd_labels.setdefault(text, line)
            labels.append(canonical or text.strip())
        claims.append(claim)
        abstracts.append(abstract)
        ranks.append(rank)
    warnings = []
    if disagreeing:
        claim, line = next(iter(disagreeing.items()))
        warnings.append(
            f"{label}: the rank column disagrees with row order for {len(disagreeing)} claims (first: {shown(claim)}, line {line}); "
            "the official Recall@k reads row order and the official Bpref sorts by the rank column; evalkit's own metrics read row order"
        )
    if odd_ranks:
        warnings.append(f"{label}: {_first(odd_ranks, 'rank values that are not integers')} (the official Bpref sorts them as pandas reads them)")
    if odd_labels:
        warnings.append(
            f"{label}: {_first(odd_labels, 'labels that are not ' + ', '.join(LABELS) + ' up to case')}; the official Subtask II "
            "compares labels lower-cased only, so these count as wrong labels there (evalkit's own reading maps known variants)"
        )
    if empty_claims:
        warnings.append(f"{label}: {empty_claims} rows without a claim id are ignored (as the official scorer ignores them)")
    if empty_abstracts:
        warnings.append(f"{label}: {empty_abstracts} rows without an abstract id match no gold abstract but occupy their rank")
    return Run.from_rows(
        claims, abstracts, labels=labels if lcol is not None else None, declared_ranks=ranks, warnings=tuple(warnings),
        as_written={k: tuple(v) for k, v in written.items()},
    )


FORMAT = register(Format("climatecheck-run", "run", "ClimateCheck submission CSV: claim_id, abstract_id, rank[, label]", sniff, read, read_rows,
                         header_names=("claim_id", "abstract_id")), before="checkthat-list")
