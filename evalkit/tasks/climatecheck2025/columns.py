"""The column names of ClimateCheck 2025's gold and submission files, as its readers look them up
(:func:`evalkit.core.columns.find`: case-insensitive, first match wins). The general names of any table are
:mod:`evalkit.core.columns`'."""
from __future__ import annotations

ABSTRACT_ID = ("abstract_id", "abstract_original_index")
LABEL = ("label", "prediction", "annotation")
CLAIM_TEXT = ("claim", "claim_text", "text")
