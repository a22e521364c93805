"""The page's data in two spellings: compact for the HTML file, plain for ``--json``.

The data is one dict of lists, numbers and strings, with the large numeric
columns held as :class:`Column` (a numpy array). In the HTML page each column
is a little-endian typed array in base64 (``{"t": "f4", "b": "..."}``; Float32
for values, Int32/Uint16 for positions and codes), which the page decodes
straight into a ``Float32Array``/``Int32Array``, a few bytes per value and no
text parsing. In the JSON export each
column is a plain list (NaN and infinity as ``null``), for notebooks.
"""
from __future__ import annotations

import base64
import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

DTYPES = {"f4": "<f4", "i4": "<i4", "u2": "<u2", "u1": "<u1"}


@dataclass(frozen=True, eq=False)
class Column:
    """A numeric column and the typed array it travels as (``f4``, ``i4``, ``u2`` or ``u1``)."""

    values: np.ndarray
    kind: str = "f4"

    def __post_init__(self) -> None:
        if self.kind not in DTYPES:
            raise ValueError(f"unknown column kind {self.kind!r}")

    def embedded(self) -> dict[str, str]:
        raw = np.ascontiguousarray(np.asarray(self.values).astype(DTYPES[self.kind]))
        return {"t": self.kind, "b": base64.b64encode(raw.tobytes()).decode("ascii")}

    def plain(self) -> list:
        values = np.asarray(self.values)
        if self.kind == "f4":
            return [None if not math.isfinite(v) else v for v in values.astype(np.float64).tolist()]
        return values.astype(np.int64).tolist()


def index_column(values: np.ndarray) -> Column:
    """Integer codes or positions: Uint16 when they fit, else Int32 (-1 allowed)."""
    values = np.asarray(values, dtype=np.int64)
    if len(values) and values.min(initial=0) >= 0 and values.max(initial=0) < 65536:
        return Column(values, "u2")
    return Column(values, "i4")


def _convert(value: Any, embedded: bool, keep_nan: bool = False) -> Any:
    """Columns as typed arrays (``embedded``) or lists (their NaN as ``null``); other non-finite numbers ``None``,
    or kept (``keep_nan``) for :func:`evalkit.core.jsonout.dumps` to write ``null`` with a reason."""
    if isinstance(value, Column):
        return value.embedded() if embedded else value.plain()
    if isinstance(value, dict):
        return {str(k): _convert(v, embedded, keep_nan) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_convert(v, embedded, keep_nan) for v in value]
    if isinstance(value, (np.floating, float)):
        number = float(value)
        return number if math.isfinite(number) or keep_nan else None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def to_plain(data: dict) -> dict:
    """The data with every column as a list (the ``--json`` export)."""
    return _convert(data, embedded=False)


def to_json(data: dict) -> str:
    """The ``--json`` export: columns as lists (``null`` for NaN, as documented), every other undefined value ``null``
    and explained under ``"undefined"`` (:mod:`evalkit.core.jsonout`)."""
    from evalkit.core import jsonout

    return jsonout.dumps(_convert(data, embedded=False, keep_nan=True), ensure_ascii=False, indent=1) + "\n"


def to_embedded_json(data: dict) -> str:
    """Compact JSON for a ``<script type="application/json">`` block: columns in base64, every ``<`` escaped."""
    text = json.dumps(_convert(data, embedded=True), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    # "<" as \u003c: no "</script>" or "<!--" in the data can end or confuse the block (still valid JSON)
    return text.replace("<", "\\u003c")
