"""The fusion methods evalkit knows (ranx's, by name, and alpha) and the normalisations they run under.

Every normalisation but ``none`` is invariant under a positive scale of a run's scores, so scores too
large for ``max - min`` are first scaled by an exact power of two (:func:`exact_rescale`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from evalkit.core.errors import UsageError, listed, unquoted

DEFAULT_RRF_K = 60
FLOOR = 1e-9  # ranx's denominator floor (min-max, max, sum, zmuv)


@dataclass(frozen=True)
class FusionMethod:
    name: str
    ranx_name: str | None  # None: evalkit's own
    params: tuple[str, ...] = ()
    supervised: bool = False  # parameters only come from training on a gold (--optimize-on)
    description: str = ""


METHODS: dict[str, FusionMethod] = {
    m.name: m
    for m in (
        FusionMethod("rrf", "rrf", ("k",), description="reciprocal rank fusion, sum of 1/(k + rank)"),
        FusionMethod("combsum", "sum", description="CombSUM: sum of (normalised) scores"),
        FusionMethod("combmnz", "mnz", description="CombMNZ: CombSUM times the number of runs retrieving the doc"),
        FusionMethod("combmax", "max", description="CombMAX: largest score"),
        FusionMethod("combmin", "min", description="CombMIN: smallest score"),
        FusionMethod("combmed", "med", description="CombMED: median score"),
        FusionMethod("combanz", "anz", description="CombANZ: CombSUM divided by the number of runs retrieving the doc"),
        FusionMethod("combgmnz", "gmnz", ("gamma",), description="CombGMNZ: CombSUM times hits^gamma"),
        FusionMethod("wsum", "wsum", ("weights",), description="weighted sum of (normalised) scores"),
        FusionMethod("wmnz", "wmnz", ("weights",), description="weighted CombMNZ"),
        FusionMethod("mixed", "mixed", ("weights",), description="weighted mix of CombSUM and CombMNZ"),
        FusionMethod("isr", "isr", description="inverse square rank"),
        FusionMethod("log_isr", "log_isr", description="logarithmic inverse square rank"),
        FusionMethod("logn_isr", "logn_isr", ("sigma",), description="logarithmic ISR with smoothing sigma"),
        FusionMethod("bordafuse", "bordafuse", description="Borda count"),
        FusionMethod("w_bordafuse", "w_bordafuse", ("weights",), description="weighted Borda count"),
        FusionMethod("condorcet", "condorcet", description="Condorcet pairwise majority"),
        FusionMethod("w_condorcet", "w_condorcet", ("weights",), description="weighted Condorcet"),
        FusionMethod("rbc", "rbc", ("phi",), description="rank-biased centroids with persistence phi"),
        FusionMethod("bayesfuse", "bayesfuse", supervised=True, description="BayesFuse (trained log-odds)"),
        FusionMethod("mapfuse", "mapfuse", supervised=True, description="MAPFuse (trained MAP weights)"),
        FusionMethod("posfuse", "posfuse", supervised=True, description="PosFuse (trained position probabilities)"),
        FusionMethod("probfuse", "probfuse", supervised=True, description="ProbFuse (trained segment probabilities)"),
        FusionMethod("segfuse", "segfuse", supervised=True, description="SegFuse (trained segment probabilities)"),
        FusionMethod("slidefuse", "slidefuse", supervised=True, description="SlideFuse (trained sliding-window probabilities)"),
        FusionMethod("alpha", None, ("alpha",), description="alpha*CE_norm + (1-alpha)*LLM_norm of two runs (cross-encoder, LLM)"),
    )
}
ALIASES = {"sum": "combsum", "mnz": "combmnz", "max": "combmax", "min": "combmin", "med": "combmed", "anz": "combanz", "gmnz": "combgmnz",
           "reciprocal_rank": "rrf"}
NORMS = ("min-max", "min-max-inverted", "max", "sum", "zmuv", "rank", "borda", "none")  # "none": the scores as they are


def get_method(name: str) -> FusionMethod:
    key = name.strip().lower().replace("-", "_")
    key = ALIASES.get(key, key)
    method = METHODS.get(key) or METHODS.get(key.replace("_", ""))
    if method is None:
        raise UsageError(f"unknown fusion method {name!r} (known: {', '.join(METHODS)})")
    return method


def check_norm(norm: str | None) -> str | None:
    if norm is None or norm == "none":
        return None
    if norm.replace("_", "-") not in NORMS:
        raise UsageError(f"unknown normalisation {norm!r} (known: {', '.join(NORMS)})")
    return norm.replace("_", "-")


SCALE_INVARIANT_NORMS = ("min-max", "min-max-inverted", "max", "sum", "zmuv", "rank", "borda")
SAFE_MAGNITUDE = 2.0**1000  # (s - min) and sums of a few such values stay finite below this


def exact_rescale(scores: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """Scores scaled by a power of two (exact, order-preserving) so no magnitude exceeds 2^1000.

    Every normalisation but ``none`` is invariant under a positive scale, so the fused result is the
    same; scores near +/-1e308 no longer overflow in ``max - min`` (ranx would write NaN).
    """
    largest = max((abs(v) for docs in scores.values() for v in docs.values() if math.isfinite(v)), default=0.0)
    if largest <= SAFE_MAGNITUDE:
        return scores
    shift = math.frexp(largest)[1] - math.frexp(SAFE_MAGNITUDE)[1]
    return {q: {d: math.ldexp(v, -shift) for d, v in docs.items()} for q, docs in scores.items()}


def resolve_params(method: FusionMethod, n_runs: int, weights, rrf_k, extra: Mapping[str, Any] | None) -> dict[str, Any]:
    """The keyword arguments of the ranx method: weights (default equal), RRF k (default 60), others as given."""
    params = dict(extra or {})
    unknown = [p for p in params if p not in method.params]
    if unknown:
        takes = ", ".join(method.params) or "no parameters"
        raise UsageError(f"fusion method {method.name} does not take {listed(unknown, 5, unquoted)} (it takes {takes})")
    if "weights" in params:
        if weights is not None:
            raise UsageError("weights given twice (as weights and in the method parameters)")
        weights = params["weights"]
    if "weights" in method.params:
        weights = list(weights) if weights is not None else [1.0 / n_runs] * n_runs
        if len(weights) != n_runs:
            raise UsageError(f"{len(weights)} weights for {n_runs} runs")
        params["weights"] = [float(w) for w in weights]
        if not all(math.isfinite(w) for w in params["weights"]):
            raise UsageError(f"fusion weights must be finite numbers (got {list(weights)})")
    elif weights is not None:
        raise UsageError(f"fusion method {method.name} takes no weights (weighted methods: wsum, wmnz, mixed, w_bordafuse, w_condorcet)")
    if method.name == "rrf":
        k = params.get("k", rrf_k if rrf_k is not None else DEFAULT_RRF_K)
        if float(k) <= 0:
            raise UsageError(f"RRF k must be positive (got {k})")
        params["k"] = float(k) if float(k) != int(float(k)) else int(float(k))
    elif rrf_k is not None and rrf_k != DEFAULT_RRF_K:
        raise UsageError(f"--rrf-k applies to --method rrf, not {method.name}")
    return params
