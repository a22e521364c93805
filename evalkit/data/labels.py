"""Claim-verification labels (ClimateCheck 2025 Subtask II).

Canonical spellings are those of the official data; input is matched
case-insensitively with a few common variants. For retrieval, Supports and
Refutes make an abstract relevant (grade 1); Not Enough Information makes it
judged non-relevant (grade 0).
"""
from __future__ import annotations

from typing import Sequence

from evalkit.core.errors import UsageError

SUPPORTS, REFUTES, NEI = "Supports", "Refutes", "Not Enough Information"
LABELS = (SUPPORTS, REFUTES, NEI)
_VARIANTS = {
    "supports": SUPPORTS,
    "support": SUPPORTS,
    "supported": SUPPORTS,
    "refutes": REFUTES,
    "refute": REFUTES,
    "refuted": REFUTES,
    "not enough information": NEI,
    "not enough info": NEI,
    "not_enough_information": NEI,
    "not_enough_info": NEI,
    "nei": NEI,
}
GRADES = {SUPPORTS: 1.0, REFUTES: 1.0, NEI: 0.0}


def normalize_label(text: str) -> str | None:
    """The canonical label for ``text``, or ``None`` when it is not a known label."""
    return _VARIANTS.get(" ".join(text.strip().lower().split()))


def enforce_nei_share(labels: list[str], evidence: Sequence[float], share: float) -> list[str]:
    """Relabel the non-NEI pairs with the least ``evidence`` as NEI until ``share`` of all labels are NEI.

    The calibration of the ClimateCheck 2025 winning verification system, which
    targeted a minimum proportion of NEI answers. Ties keep input order.
    """
    if not 0.0 <= share <= 1.0:
        raise UsageError(f"min_nei_share must lie in [0, 1] (got {share})")
    out = list(labels)
    needed = int(round(share * len(out) + 1e-9)) - sum(label == NEI for label in out)
    if needed > 0:
        weakest = sorted((i for i, label in enumerate(out) if label != NEI), key=lambda i: evidence[i])
        for i in weakest[:needed]:
            out[i] = NEI
    return out
