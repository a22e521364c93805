"""Per-query CheckThat! 4b scores computed the way the official scorer does, independently of evalkit.

Used by the compare / report / leaderboard tests to check evalkit's
alignment and statistics against scipy and statsmodels on the same vectors.
"""
from __future__ import annotations

import ast
import csv
from pathlib import Path

import numpy as np


def read_gold(path: Path) -> dict[str, tuple[str, str]]:
    """``{post_id: (tweet_text, cord_uid)}`` in file order."""
    import pandas as pd

    frame = pd.read_csv(path, sep="\t", dtype=str)
    return {str(p): (t, c) for p, t, c in zip(frame["post_id"], frame["tweet_text"], frame["cord_uid"])}


def read_preds(path: Path) -> dict[str, list[str]]:
    """``{post_id: [cord_uid, ...]}`` of a ``post_id<TAB>preds`` submission (trusted test data)."""
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle, delimiter="\t"))
    header = rows[0]
    q, p = header.index("post_id"), header.index("preds")
    return {row[q]: list(ast.literal_eval(row[p])) for row in rows[1:]}


def per_query(gold: dict, preds: dict, k: int = 5, success: int | None = None) -> np.ndarray:
    """MRR@k per gold query (0 when unanswered), or Success@``success`` when given."""
    out = []
    for post_id, (_, cord_uid) in gold.items():
        ranked = preds.get(post_id, [])
        if success is not None:
            out.append(1.0 if cord_uid in ranked[:success] else 0.0)
        else:
            out.append(1.0 / (ranked[:k].index(cord_uid) + 1) if cord_uid in ranked[:k] else 0.0)
    return np.array(out)
