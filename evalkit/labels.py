"""Claim-verification labels (ClimateCheck 2025 Subtask II).

Canonical spellings are those of the official data; input is matched
case-insensitively with a few common variants. For retrieval, Supports and
Refutes make an abstract relevant (grade 1); Not Enough Information makes it
judged non-relevant (grade 0).
"""
from __future__ import annotations

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
