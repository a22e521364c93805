"""An independent oracle of the ClimateCheck 2025 official scorer's semantics (tests only).

Written from the scorer's documented behaviour (``evaluation/evaluate.py`` of
the shared task), not copied: both files are read with pandas as the scorer
reads them (so pandas' own type inference and ``sort_values`` decide, not
evalkit's emulation of them), and scikit-learn computes the weighted scores.
Returns ``None`` for a figure the scorer reports as 404 or cannot compute.
"""
from __future__ import annotations

from pathlib import Path

RELEVANT = ["Supports", "Refutes"]
NEI = "Not Enough Information"


def recall(gold, predictions, k: int) -> float:
    relevant = gold[gold["annotation"].isin(RELEVANT)]
    listed = {claim: list(rows["abstract_id"]) for claim, rows in predictions.groupby("claim_id", sort=False)}
    values = []
    for claim, rows in relevant.groupby("claim_id"):  # sorted claims, as the scorer's groupby
        wanted = list(rows["abstract_original_index"])
        first_k = listed.get(claim, [])[:k]
        values.append(sum(1 for abstract in wanted if abstract in first_k) / len(wanted))
    return sum(values) / len(values) if values else 0


def bpref(gold, predictions) -> float:
    values = []
    for claim in predictions["claim_id"].unique():
        judged = gold[gold["claim_id"] == claim]
        relevant = set(judged.loc[judged["annotation"].isin(RELEVANT), "abstract_original_index"])
        nei = set(judged.loc[judged["annotation"] == NEI, "abstract_original_index"])
        if not relevant or not nei:
            continue
        R = len(relevant)
        below = credited = 0
        total = 0.0
        for abstract in predictions[predictions["claim_id"] == claim].sort_values(by="rank")["abstract_id"]:
            if abstract in relevant:
                total += 1 - below / R
                credited += 1
            elif abstract in nei and below < R:
                below += 1
            if credited == R:
                break
        values.append(total / R)
    return sum(values) / len(values) if values else 0.0


def verification(gold, predictions) -> tuple[float, float, float] | None:
    from sklearn.metrics import precision_recall_fscore_support

    if "label" not in predictions.columns:
        return None
    first = gold.drop_duplicates(subset=["claim_id", "abstract_original_index"], keep="first")
    lookup = {(c, a): label for c, a, label in zip(first["claim_id"], first["abstract_original_index"], first["annotation"])}
    y_true, y_pred = [], []
    for claim, abstract, label in zip(predictions["claim_id"], predictions["abstract_id"], predictions["label"]):
        if (claim, abstract) in lookup:
            y_true.append(lookup[(claim, abstract)].lower())
            y_pred.append(label.lower())
    if not y_true:
        return None
    precision, recall_, f1, _ = precision_recall_fscore_support(y_true, y_pred, average="weighted", zero_division=0)
    return float(precision), float(recall_), float(f1)


def official_scores(predictions_path: str | Path, gold_path: str | Path) -> dict[str, float | None]:
    """Every official figure of one submission: Recall@2/5/10, Bpref, Subtask I; P, R, F1, Subtask II (None: undefined)."""
    import numpy as np
    import pandas as pd

    gold = pd.read_csv(gold_path)
    predictions = pd.read_csv(predictions_path)
    out: dict[str, float | None] = {f"Recall@{k}": recall(gold, predictions, k) for k in (2, 5, 10)}
    out["Bpref"] = bpref(gold, predictions)
    out["Subtask I"] = float(np.mean([out["Recall@2"], out["Recall@5"], out["Recall@10"], out["Bpref"]]))
    labelled = verification(gold, predictions)
    precision, recall_, f1 = labelled if labelled else (None, None, None)
    out.update({"Precision": precision, "Recall": recall_, "F1": f1, "Subtask II": None if f1 is None else f1 + out["Recall@10"]})
    return out
