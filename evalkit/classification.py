"""Weighted precision, recall and F1 over labelled pairs (scikit-learn semantics).

For each label l present in the gold or the predictions: P_l = tp_l / predicted_l,
R_l = tp_l / support_l, F1_l = 2 tp_l / (2 tp_l + fp_l + fn_l), each 0 when its
denominator is 0. The weighted average is sum_l support_l * M_l / sum_l support_l
(``sklearn.metrics.precision_recall_fscore_support(average="weighted")``).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np


def weighted_prf(y_true: Sequence[str], y_pred: Sequence[str]) -> dict[str, float]:
    """Weighted precision/recall/F1 and accuracy; NaN everywhere for zero pairs."""
    true = np.asarray(y_true, dtype=object)
    pred = np.asarray(y_pred, dtype=object)
    if len(true) == 0:
        nan = float("nan")
        return {"precision": nan, "recall": nan, "f1": nan, "accuracy": nan, "pairs": 0}
    labels = sorted(set(true.tolist()) | set(pred.tolist()))
    support = np.array([np.sum(true == l) for l in labels], dtype=np.float64)
    predicted = np.array([np.sum(pred == l) for l in labels], dtype=np.float64)
    tp = np.array([np.sum((true == l) & (pred == l)) for l in labels], dtype=np.float64)

    def ratio(a, b):
        return np.divide(a, b, out=np.zeros_like(a), where=b != 0)

    precision, recall = ratio(tp, predicted), ratio(tp, support)
    f1 = ratio(2 * tp, support + predicted)
    weights = support / support.sum()
    return {
        "precision": float(np.sum(weights * precision)),
        "recall": float(np.sum(weights * recall)),
        "f1": float(np.sum(weights * f1)),
        "accuracy": float(np.mean(true == pred)),
        "pairs": int(len(true)),
    }
