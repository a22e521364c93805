"""JSON that every parser reads: no bare ``NaN`` or ``Infinity`` (``jq`` and ``JSON.parse`` reject them).

A value that is not a finite number is written ``null``, and the document
gains a top-level ``"undefined"`` object naming each such value by its path
(``metrics.F1 (weighted)``, ``ranking[2].official.value``) with the reason:
the caller's when it knows one (an official score the task declares
undefined), else what the value was (``NaN: undefined, e.g. no query had a
value``). numpy scalars become plain numbers. Every JSON output of evalkit
(``score -o json``, ``compare -o json``, ``leaderboard --json``, manifests)
is written through :func:`dumps`, or, where a non-finite number would be a
mistake (bundles, baselines, configs), :func:`strict`, which refuses it with
one line naming the value's path. No JSON writer of evalkit, its systems or
its benchmarks calls ``json.dump`` without ``allow_nan=False``
(``tests/core/test_json_strict.py`` reads the code).
"""
from __future__ import annotations

import json
import math
from typing import Any, Mapping

import numpy as np

from evalkit.core.errors import EvalkitError

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


class NotFiniteJSON(EvalkitError):
    """A value that strict JSON cannot hold (NaN, Infinity) on its way into a JSON file."""


def strict(data: Any, what: str = "JSON output", **options: Any) -> str:
    """``json.dumps(data, allow_nan=False)``: a NaN or Infinity is refused with one line naming its path (never written)."""
    try:
        return json.dumps(data, allow_nan=False, **options)
    except ValueError as error:
        undefined: dict[str, str] = {}
        plain(data, "", undefined)
        if not undefined:
            raise
        where = ", ".join(list(undefined)[:3]) + (f" and {len(undefined) - 3:,} more" if len(undefined) > 3 else "")
        raise NotFiniteJSON(f"{what}: {where} is not a finite number (NaN or Infinity), which strict JSON cannot hold; "
                            "nothing written") from error
