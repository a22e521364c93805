"""Fusing runs: :func:`fuse` picks evalkit's own numpy computation (:mod:`evalkit.fusion.native`) or ranx
(:mod:`evalkit.fusion.ranx_backend`) and returns a scored :class:`~evalkit.data.Run` whose order does not depend
on the order of the runs (:func:`snap_scores`)."""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping, Sequence

from evalkit.data import Run
from evalkit.core.errors import UsageError
from evalkit.fusion.alpha import DEFAULT_ALPHA, alpha_fusion
from evalkit.fusion.methods import check_norm, get_method, resolve_params
from evalkit.fusion.queries import query_union

SCORE_DIGITS = 12


def snap_scores(values: Any, digits: int = SCORE_DIGITS) -> Any:
    """``values`` rounded to ``digits`` significant digits (float64 array), so sums equal up to addition order are equal."""
    import numpy as np

    values = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(values) & (values != 0)
    magnitude = np.floor(np.log10(np.abs(values), out=np.zeros_like(values), where=finite))
    with np.errstate(over="ignore", invalid="ignore"):
        scale = 10.0 ** (digits - 1 - magnitude)
        snapped = np.round(values * scale) / scale
    return np.where(np.isfinite(snapped), snapped, values)  # extreme magnitudes stay as they are


def snapped_run(table: Mapping[str, Mapping[str, float]], name: str) -> Run:
    """``{query: {doc: score}}`` as a Run, scores snapped (:func:`snap_scores`) so the ranking rule breaks ties."""
    per_query = [(q, list(docs.items())) for q, docs in table.items()]
    snapped = iter(snap_scores([score for _, items in per_query for _, score in items]).tolist())
    return Run.from_scores({q: {doc: next(snapped) for doc, _ in items} for q, items in per_query}, name=name)


def fuse(
    runs: Sequence[Run],
    method: str = "rrf",
    norm: str | None = "min-max",
    *,
    weights: Sequence[float] | None = None,
    rrf_k: float | None = None,
    params: Mapping[str, Any] | None = None,
    depth: int | None = None,
    allow_partial: bool = False,
    name: str | None = None,
) -> Run:
    """Fuse ``runs`` with a ranx method (or ``alpha``); the result is a scored :class:`Run`.

    ``params`` are the method's own parameters (``k``, ``gamma``, ``phi``,
    ``sigma``, or trained ones from :func:`optimize`); ``depth`` keeps each
    run's first ``depth`` documents.
    """
    chosen = get_method(method)
    if len(runs) < 2:
        raise UsageError("fusion needs at least two runs")
    if chosen.name == "alpha":
        alpha = (params or {}).get("alpha", DEFAULT_ALPHA)
        if len(runs) != 2:
            raise UsageError("alpha fusion takes exactly two runs: the cross-encoder run, then the LLM ranking")
        query_union(runs, allow_partial)
        return alpha_fusion(runs[0], runs[1], float(alpha), depth=depth, name=name)
    if chosen.supervised and not params:
        raise UsageError(f"fusion method {chosen.name} is trained on a gold file: give --optimize-on GOLD")
    queries = query_union(runs, allow_partial)
    args = params if chosen.supervised else resolve_params(chosen, len(runs), weights, rrf_k, params)
    assert args is not None  # a supervised method without params is refused above

    norm = check_norm(norm)
    from evalkit.fusion import native

    if not chosen.supervised and native.supported(chosen.name, norm):
        fused = native.fuse_native(runs, queries, chosen.name, norm, args, depth=depth, name=name or chosen.name)
        result = replace(fused, scores=snap_scores(fused.scores))
    else:
        from evalkit.fusion.ranx_backend import ranx_fuse

        result = snapped_run(ranx_fuse(runs, queries, chosen, norm, args, depth), name or chosen.name)
    return check_finite(result, chosen.name, norm)


def check_finite(fused: Run, method: str, norm: str | None) -> Run:
    """``fused``, unless a score overflowed float64 (inputs near 1e308 summed under ``--norm none``, say): one line."""
    import numpy as np

    assert fused.scores is not None  # a fused run is scored
    bad = ~np.isfinite(fused.scores)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise UsageError(
            f"fusion {method} under --norm {norm or 'none'} overflows float64 (query {fused.query_ids[fused.qidx[row]]}, "
            f"document {fused.doc_ids[fused.didx[row]]}: {fused.scores[row]}); scores this large need a normalisation such as min-max"
        )
    return fused
