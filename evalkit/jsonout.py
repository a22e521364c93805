"""JSON that every parser reads: no bare ``NaN`` or ``Infinity`` (``jq`` and ``JSON.parse`` reject them).

A value that is not a finite number is written ``null``, and the document
gains a top-level ``"undefined"`` object naming each such value by its path
(``metrics.F1 (weighted)``, ``ranking[2].official.value``) with the reason:
the caller's when it knows one (an official score the task declares
undefined), else what the value was (``NaN: undefined, e.g. no query had a
value``). numpy scalars become plain numbers. Every JSON output of evalkit
(``score -o json``, ``compare -o json``, ``leaderboard --json``, manifests)
is written through :func:`dumps`.
"""
from __future__ import annotations

import json
import math
from typing import Any, Mapping

import numpy as np

UNDEFINED_KEY = "undefined"
DEFAULT_REASONS = {
    "NaN": "NaN: undefined (no query gave it a value, or the measure is undefined on these inputs)",
    "Infinity": "Infinity: not a finite number",
    "-Infinity": "-Infinity: not a finite number",
}


def _spelling(value: float) -> str:
    return "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"


def plain(value: Any, path: str = "", undefined: dict[str, str] | None = None, reasons: Mapping[str, str] | None = None) -> Any:
    """``value`` with non-finite floats as ``None`` (recorded in ``undefined`` by path) and numpy scalars as Python ones."""
    undefined = {} if undefined is None else undefined
    if isinstance(value, Mapping):
        return {str(k): plain(v, f"{path}.{k}" if path else str(k), undefined, reasons) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        items = value.tolist() if isinstance(value, np.ndarray) else value
        return [plain(v, f"{path}[{i}]", undefined, reasons) for i, v in enumerate(items)]
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, (float, np.floating)):
        number = float(value)
        if math.isfinite(number):
            return number
        undefined[path] = (reasons or {}).get(path) or DEFAULT_REASONS[_spelling(number)]
        return None
    return value


def document(data: Mapping[str, Any], reasons: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``data`` (a dict) with every non-finite number ``None`` and explained under ``"undefined"``.

    ``reasons`` maps a value's path to why it is undefined (default: what the value was).
    """
    undefined: dict[str, str] = {}
    cleaned = plain(data, "", undefined, reasons)
    if undefined:
        cleaned[UNDEFINED_KEY] = undefined
    return cleaned


def dumps(data: Mapping[str, Any], reasons: Mapping[str, str] | None = None, **options: Any) -> str:
    """``json.dumps`` of :func:`document`: no bare ``NaN`` or ``Infinity``, ever."""
    return json.dumps(document(data, reasons), allow_nan=False, **options)
