"""ClimateCheck 2025 submission: CSV ``claim_id,abstract_id,rank[,label]``.

As the official scorer does, the ranking of a claim is the order of its rows;
the rank column is checked against it and a disagreement is reported as a
warning. The optional label (Supports / Refutes / Not Enough Information,
case-insensitive) feeds the verification task.
"""
from __future__ import annotations

from evalkit.data import Run
from evalkit.errors import InputError
from evalkit.formats import Format, Sample, register
from evalkit.formats.tables import find_column, header_delimiter, read_delimited
from evalkit.labels import LABELS, normalize_label
from evalkit.textio import LoadedFile

ABSTRACT_COLUMNS = ("abstract_id", "abstract_original_index")


def sniff(sample: Sample) -> bool:
    columns = sample.columns()
    return "claim_id" in columns and bool(columns & set(ABSTRACT_COLUMNS)) and "rank" in columns and "annotation" not in columns


def read(loaded: LoadedFile, **_) -> Run:
    header, records = read_delimited(loaded, header_delimiter(loaded))
    label = loaded.label
    ccol = find_column(header, ("claim_id",), label, "claim id")
    acol = find_column(header, ABSTRACT_COLUMNS, label, "abstract id")
    rcol = find_column(header, ("rank",), label, "rank")
    lcol = next((i for i, h in enumerate(header) if h.lower() in ("label", "prediction", "annotation")), None)
    claims, abstracts, ranks, labels = [], [], [], []
    position: dict[str, int] = {}
    disagreeing: dict[str, int] = {}
    for line, fields in records:
        claim, abstract = fields[ccol].strip(), fields[acol].strip()
        if not claim or not abstract:
            raise InputError(label, "empty claim_id or abstract_id", line)
        try:
            rank = int(fields[rcol].strip())
        except ValueError:
            raise InputError(label, f"rank {fields[rcol]!r} is not an integer", line) from None
        if rank < 1:
            raise InputError(label, f"rank {rank} is not positive", line)
        position[claim] = position.get(claim, 0) + 1
        if rank != position[claim]:
            disagreeing.setdefault(claim, line)
        if lcol is not None:
            text = fields[lcol]
            canonical = normalize_label(text)
            if canonical is None:
                raise InputError(label, f"label {text!r} is not one of {', '.join(LABELS)}", line)
            labels.append(canonical)
        claims.append(claim)
        abstracts.append(abstract)
        ranks.append(rank)
    warnings = ()
    if disagreeing:
        example, line = next(iter(disagreeing.items()))
        warnings = (
            f"{label}: the rank column disagrees with row order for {len(disagreeing)} claims "
            f"(first: {example!r}, line {line}); row order is used, as the official scorer does",
        )
    return Run.from_rows(claims, abstracts, labels=labels if lcol is not None else None, declared_ranks=ranks, warnings=warnings)


FORMAT = register(Format("climatecheck-run", "run", "ClimateCheck submission CSV: claim_id, abstract_id, rank[, label]", sniff, read, (".csv",)))
