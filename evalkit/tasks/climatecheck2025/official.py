"""The ClimateCheck 2025 official figures, computed as the organisers' scorer computes them.

Reference: ``evaluation/evaluate.py`` of the shared task's repository
(``Mahmoud-Mohammed-Fathallah/climatecheck-shared-task``), run as
``python evaluate.py predictions.csv output gold.csv``. It reads both files
with pandas and computes, on the file as written:

* Recall@k: gold claims with at least one ``Supports``/``Refutes`` row (exact
  spelling), in sorted claim order; recall = relevant gold abstracts found in
  the claim's first k prediction ROWS as written (the rank column is not
  used; a repeated row occupies a slot) / the claim's relevant gold rows; a
  claim without predictions scores 0. Mean = ``sum / len``.
* Bpref: claims of the predictions (first appearance), skipped without a
  relevant or a ``Not Enough Information`` gold abstract; the claim's rows
  sorted by the rank column (pandas ``sort_values``: numpy's unstable
  quicksort on the column's dtype, NaN last); walking them, a relevant
  abstract adds ``1 - n/R`` and counts as seen (a repeat again), an NEI one
  raises ``n`` while ``n < R`` (a repeat again); stop when R relevant were
  seen. Value = sum / R, R the distinct relevant abstracts. Mean over the
  claims not skipped, 0.0 when none.
* Subtask I = ``mean(Recall@2, Recall@5, Recall@10, Bpref)``.
* Subtask II (with a ``label`` column): every prediction row whose (claim,
  abstract) pair is in the gold is one item (repeats count again), gold label
  = the pair's first gold annotation; both lower-cased, nothing else; weighted
  precision, recall and F1 as scikit-learn computes them (zero division 0).
  Subtask II = F1 + Recall@10. Without a label column the scorer prints 404.

Ids are compared as pandas parsed them: a column whose values are all
integers holds numbers (``007`` equals ``7``, ``7.0`` equals ``7``), a column
with any other value holds strings (which never equal numbers); pandas' NA
spellings (``NA``, ``null``, ``nan``, empty...) are missing values that match
nothing. This module has no evalkit dependencies beyond numpy so it can be
read next to the reference.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

RELEVANT = ("Supports", "Refutes")
NOT_ENOUGH_INFO = "Not Enough Information"
# pandas.read_csv's default NA spellings (pandas._libs.parsers.STR_NA_VALUES)
NA_STRINGS = frozenset({
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA",
    "NULL", "NaN", "None", "n/a", "nan", "null",
})
# linear patterns (each digit run is read one way only), applied to stripped text: a field of 1 MB is one pass
_INT = re.compile(r"[+-]?[0-9]+\Z")
_FLOAT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z|[+-]?(?:inf|infinity)\Z", re.IGNORECASE)
INT64_MAX = 2**63 - 1


def _int64(text: str) -> bool:
    """An integer pandas holds as int64 (Python's ``int`` refuses over 4,300 digits: length first)."""
    stripped = text.strip()
    if not _INT.match(stripped):
        return False
    digits = stripped.lstrip("+-").lstrip("0")
    return len(digits) <= 19 and int(digits or "0") <= INT64_MAX


def _int_value(text: str) -> int:
    """An int64 field's value (leading zeros dropped first: ``int`` counts them against its digit limit)."""
    stripped = text.strip()
    value = int(stripped.lstrip("+-").lstrip("0") or "0")
    return -value if stripped.startswith("-") else value


def column_kind(texts: Sequence[str]) -> str:
    """The dtype pandas infers for a column of these field texts: ``"int"``, ``"float"`` or ``"str"``."""
    present = [t for t in texts if t not in NA_STRINGS]
    if present and len(present) == len(texts) and all(_int64(t) for t in present):
        return "int"
    if all(_FLOAT.match(t.strip()) for t in present) and present:
        return "float"
    return "str" if present else "float"  # an all-missing column is float64 (NaN)


def cell(text: str, kind: str) -> Any:
    """One field as pandas holds it in a column of ``kind``; ``None`` for a missing value (NaN)."""
    if text in NA_STRINGS:
        return None
    if kind == "int":
        return _int_value(text)
    if kind == "float":
        return float(text)
    return text


def column(texts: Sequence[str]) -> tuple[list[Any], str]:
    kind = column_kind(texts)
    return [cell(t, kind) for t in texts], kind


@dataclass(frozen=True)
class Predictions:
    """The prediction file's columns as pandas reads them, in file order."""

    claims: list[Any]
    abstracts: list[Any]
    ranks: list[Any]
    rank_kind: str
    labels: list[Any] | None  # None: no label column
    label_kind: str = "str"

    @classmethod
    def from_texts(cls, claims: Sequence[str], abstracts: Sequence[str], ranks: Sequence[str], labels: Sequence[str] | None) -> "Predictions":
        rank_values, rank_kind = column(ranks)
        label_values, label_kind = column(labels) if labels is not None else (None, "str")
        return cls(column(claims)[0], column(abstracts)[0], rank_values, rank_kind, label_values, label_kind)


@dataclass(frozen=True)
class Gold:
    """The gold file's columns as pandas reads them, in file order."""

    claims: list[Any]
    abstracts: list[Any]
    annotations: list[Any]  # raw text (None: missing)

    @classmethod
    def from_texts(cls, claims: Sequence[str], abstracts: Sequence[str], annotations: Sequence[str]) -> "Gold":
        return cls(column(claims)[0], column(abstracts)[0], column(annotations)[0])


def _sorted_keys(keys: list[Any]) -> list[Any]:
    """groupby's key order: sorted (numbers numerically, strings byte-wise)."""
    try:
        return sorted(keys)
    except TypeError:  # mixed types cannot happen within one pandas column; keep first-seen order
        return keys


def recall_at_k(gold: Gold, predictions: Predictions, k: int) -> tuple[float, dict[Any, float]]:
    """Official Recall@k: (mean, per-claim values in the scorer's claim order)."""
    golden: dict[Any, list[Any]] = {}
    for claim, abstract, annotation in zip(gold.claims, gold.abstracts, gold.annotations):
        if claim is not None and annotation in RELEVANT:
            golden.setdefault(claim, []).append(abstract)
    retrieved: dict[Any, list[Any]] = {}
    for claim, abstract in zip(predictions.claims, predictions.abstracts):
        if claim is not None:
            retrieved.setdefault(claim, []).append(abstract)
    per_claim: dict[Any, float] = {}
    for claim in _sorted_keys(list(golden)):
        top = retrieved.get(claim, [])[:k]
        relevant = golden[claim]
        per_claim[claim] = sum(1 for t in relevant if t is not None and t in top) / len(relevant)
    scores = list(per_claim.values())
    return (sum(scores) / len(scores) if scores else 0), per_claim


def rank_order(values: list[Any], kind: str) -> list[int]:
    """Positions of ``values`` in the order pandas ``sort_values`` gives: numpy's (unstable) quicksort
    of the present values in the column's dtype, then the missing ones in row order
    (``pandas.core.sorting.nargsort``)."""
    present = [i for i, v in enumerate(values) if v is not None]
    missing = [i for i, v in enumerate(values) if v is None]
    if kind == "str":
        array = np.empty(len(present), dtype=object)
        array[:] = [values[i] for i in present]
    else:
        array = np.array([values[i] for i in present], dtype=np.int64 if kind == "int" else np.float64)
    return [present[i] for i in array.argsort(kind="quicksort").tolist()] + missing


def bpref(gold: Gold, predictions: Predictions) -> tuple[float, dict[Any, float]]:
    """Official Bpref: (mean, per-claim values of the claims not skipped)."""
    relevant: dict[Any, set] = {}
    nonrelevant: dict[Any, set] = {}
    for claim, abstract, annotation in zip(gold.claims, gold.abstracts, gold.annotations):
        if claim is None:
            continue
        if annotation in RELEVANT:
            relevant.setdefault(claim, set()).add(abstract)
        elif annotation == NOT_ENOUGH_INFO:
            nonrelevant.setdefault(claim, set()).add(abstract)
    rows: dict[Any, list[int]] = {}
    for row, claim in enumerate(predictions.claims):
        if claim is not None:
            rows.setdefault(claim, []).append(row)
    per_claim: dict[Any, float] = {}
    for claim, claim_rows in rows.items():
        rel, nonrel = relevant.get(claim, set()) - {None}, nonrelevant.get(claim, set()) - {None}
        if not relevant.get(claim) or not nonrelevant.get(claim):
            continue
        order = rank_order([predictions.ranks[r] for r in claim_rows], predictions.rank_kind)
        R = len(relevant[claim])
        irrelevant = seen = 0
        total = 0.0
        for position in order:
            doc = predictions.abstracts[claim_rows[position]]
            if doc is not None and doc in rel:
                total += 1 - (irrelevant / R)
                seen += 1
            elif doc is not None and doc in nonrel:
                if irrelevant < R:
                    irrelevant += 1
            if seen == R:
                break
        per_claim[claim] = total / R
    scores = list(per_claim.values())
    return (sum(scores) / len(scores) if scores else 0.0), per_claim


def weighted_prf(y_true: Sequence[str], y_pred: Sequence[str]) -> tuple[float, float, float]:
    """Weighted precision, recall and F1 with scikit-learn's arithmetic (``average="weighted"``, zero division 0).

    Labels: the sorted union; per label P = tp/pred, R = tp/true, F1 = 2tp/(true + pred),
    each 0 where its denominator is 0; averaged as ``np.average(values, weights=true)``.
    """
    labels = sorted(set(y_true) | set(y_pred))
    true = np.array([sum(1 for t in y_true if t == label) for label in labels], dtype=np.int64)
    pred = np.array([sum(1 for p in y_pred if p == label) for label in labels], dtype=np.int64)
    tp = np.array([sum(1 for t, p in zip(y_true, y_pred) if t == p == label) for label in labels], dtype=np.int64)

    def divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
        zero = denominator == 0
        result = numerator / np.where(zero, 1, denominator)
        result[zero] = 0.0
        return result

    precision = divide(tp, pred)
    recall = divide(tp, true)
    f1 = divide(2.0 * tp.astype(np.float64), 1.0 * true.astype(np.float64) + pred.astype(np.float64))

    def average(values: np.ndarray) -> float:
        return float(np.multiply(values, true, dtype=np.float64).sum() / true.sum(dtype=np.float64))

    return average(precision), average(recall), average(f1)


@dataclass(frozen=True)
class Verification:
    """Subtask II: the classified items and their weighted scores, or why they are undefined."""

    items: int
    precision: float
    recall: float
    f1: float
    undefined: str | None = None
    accuracy: float = float("nan")  # share of items whose lower-cased labels agree (not printed by the scorer)


class LabelError(ValueError):
    """A label the official scorer cannot lower-case (it would crash): ``row`` is the prediction row (0-based)."""

    def __init__(self, row: int, what: str):
        super().__init__(what)
        self.row = row


def verification(gold: Gold, predictions: Predictions) -> Verification:
    """Official Subtask II precision / recall / F1 (weighted), or undefined with the reason."""
    nan = float("nan")
    if predictions.labels is None:
        return Verification(0, nan, nan, nan, "the predictions have no label column (the official scorer prints 404)")
    first_label: dict[tuple[Any, Any], Any] = {}
    for claim, abstract, annotation in zip(gold.claims, gold.abstracts, gold.annotations):
        if claim is not None and abstract is not None:
            first_label.setdefault((claim, abstract), annotation)
    y_true: list[str] = []
    y_pred: list[str] = []
    for row, (claim, abstract, label) in enumerate(zip(predictions.claims, predictions.abstracts, predictions.labels)):
        if claim is None or abstract is None or (claim, abstract) not in first_label:
            continue
        annotation = first_label[(claim, abstract)]
        if not isinstance(label, str) or predictions.label_kind != "str":
            raise LabelError(row, f"label {label!r} is not text (the official scorer fails on it)")
        if not isinstance(annotation, str):
            raise LabelError(row, f"the gold annotation of this pair is {annotation!r}, not text (the official scorer fails on it)")
        y_true.append(annotation.lower())
        y_pred.append(label.lower())
    if not y_true:
        return Verification(0, nan, nan, nan, "no predicted (claim, abstract) pair is judged in the gold "
                                              "(scikit-learn, and so the official scorer, fails on zero items)")
    precision, recall, f1 = weighted_prf(y_true, y_pred)
    accuracy = sum(1 for t, p in zip(y_true, y_pred) if t == p) / len(y_true)
    return Verification(len(y_true), precision, recall, f1, accuracy=accuracy)


def subtask1_score(recalls: Sequence[float], bpref_value: float) -> float:
    """``np.mean([R@2, R@5, R@10, Bpref])`` as the scorer computes it."""
    return float(np.mean([*recalls, bpref_value]))
