"""ClimateCheck 2025 gold: CSV with ``claim_id``, ``abstract_id`` (or
``abstract_original_index``) and ``annotation`` (Supports / Refutes / Not
Enough Information); other columns such as the claim text are optional.

Supports and Refutes are relevant (grade 1), NEI is judged non-relevant
(grade 0). The labels are kept for the verification task.
"""
from __future__ import annotations

from typing import Iterable

from evalkit.tasks.climatecheck2025.columns import ABSTRACT_ID, CLAIM_TEXT
from evalkit.data import Qrels
from evalkit.core.errors import InputError, shown
from evalkit.io.formats import Format, Sample, register
from evalkit.io.formats.tables import find_column, header_delimiter, read_delimited
from evalkit.io.formats.trec_qrels import check_unique_pairs
from evalkit.data.labels import GRADES, LABELS, normalize_label
from evalkit.io.textio import LoadedFile


def sniff(sample: Sample) -> bool:
    columns = sample.columns()
    return "claim_id" in columns and "annotation" in columns


def read(loaded: LoadedFile, **_) -> Qrels:
    return read_rows(*read_delimited(loaded, header_delimiter(loaded)), loaded.label)


def read_rows(header: list[str], records: Iterable[tuple[int, list[str]]], label: str, **_) -> Qrels:
    ccol = find_column(header, ("claim_id",), label, "claim id")
    acol = find_column(header, ABSTRACT_ID, label, "abstract id")
    lcol = find_column(header, ("annotation",), label, "annotation")
    tcol = next((i for i, h in enumerate(header) if h.lower() in CLAIM_TEXT), None)
    claims, abstracts, labels, texts, lines = [], [], [], {}, []
    written: dict[str, list[str]] = {"claim_id": [], "abstract_id": [], "annotation": []}
    for line, fields in records:
        for key, col in (("claim_id", ccol), ("abstract_id", acol), ("annotation", lcol)):
            written[key].append(fields[col])
        claim, abstract = fields[ccol].strip(), fields[acol].strip()
        if not claim or not abstract:
            raise InputError(label, "empty claim_id or abstract id", line)
        canonical = normalize_label(fields[lcol])
        if canonical is None:
            raise InputError(label, f"annotation {shown(fields[lcol])} is not one of {', '.join(LABELS)}", line)
        claims.append(claim)
        abstracts.append(abstract)
        labels.append(canonical)
        lines.append(line)
        if tcol is not None:
            texts[claim] = fields[tcol]
    qrels = Qrels.from_rows(
        claims, abstracts, [GRADES[x] for x in labels], labels=labels, texts=texts or None,
        as_written={k: tuple(v) for k, v in written.items()},
    )
    check_unique_pairs(qrels.qidx, qrels.didx, len(qrels.doc_ids), label, lambda row: lines[row])
    return qrels


FORMAT = register(Format("climatecheck-gold", "qrels", "ClimateCheck gold CSV: claim_id, abstract_id, annotation", sniff, read, read_rows,
                         header_names=("claim_id", "abstract_id", "annotation")), before="checkthat-list")
