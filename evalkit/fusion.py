"""Fusing ranked runs: ranx's methods and normalisations by name, and alpha fusion.

* :func:`fuse` computes rrf, isr, log_isr, logn_isr, bordafuse, w_bordafuse and
  the comb*/weighted score methods under every normalisation natively
  (:mod:`evalkit.fusion_native`: numpy, milliseconds, ranx's values to 1e-12)
  and hands condorcet, w_condorcet, rbc and the trained methods to ranx
  (imported only then, numba's warnings silenced), the runs
  unchanged in order: every run is read as :meth:`~evalkit.data.Run.to_scores` gives it, so scored
  runs keep their scores and list submissions are fused through their ranks
  (score ``D + 1 - rank``, ``D`` the run's depth). RRF (Cormack et al., SIGIR
  2009) scores ``sum_r 1 / (k + rank_r(d))`` with ``k`` configurable (default 60).
* :func:`alpha_fusion` combines a cross-encoder and an LLM ranking as
  ``alpha * CE_norm(d) + (1 - alpha) * LLM_norm(d)`` with ``CE_norm`` the
  per-query min-max of the cross-encoder scores and
  ``LLM_norm(d) = 1 - (rank(d) - 1) / (N - 1)`` (:func:`llm_rank_norm`).
* :func:`optimize` picks weights (or a method's parameters) on a dev gold
  with ranx's ``optimize_fusion``.

Runs over different query sets are refused unless ``allow_partial`` (then the
union is fused; a run contributes nothing to queries it does not answer,
except under borda normalisation and (w_)bordafuse, where, as in ranx, it
gives every candidate the share of an unretrieved document).

Fused scores are rounded to 12 significant digits (:func:`snap_scores`): ranx
adds the runs' contributions in input order, so two documents whose sums are
equal (RRF ranks (1, 2, 8) and (2, 8, 1)) could differ in the last bit and
the input order of the runs would decide their order. Rounded, they tie and
the ranking rule (doc id descending) decides, whatever the order of the runs.
"""
from __future__ import annotations

import contextlib
import math
import sys
from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence

from evalkit.data import Qrels, Run
from evalkit.errors import PartialRunError, UsageError

DEFAULT_RRF_K = 60
DEFAULT_ALPHA = 0.4
MIN_MAX_FLOOR = 1e-9  # ranx's min-max denominator floor


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
NORMS = ("min-max", "min-max-inverted", "max", "sum", "zmuv", "rank", "borda", "none")
RANX_METRIC = {"MRR": "mrr", "Recall": "recall", "nDCG": "ndcg", "P": "precision", "MAP": "map", "Success": "hit_rate", "R-Prec": "r-precision",
               "Bpref": "bpref"}


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


def ranx_metric(metric: str) -> str:
    """The ranx name of an evalkit metric (``"MRR@5"`` -> ``"mrr@5"``)."""
    from evalkit.metrics import parse_metric

    parsed = parse_metric(metric)
    base = RANX_METRIC.get(type(parsed).name) if parsed.rel is None else None  # ranx has no per-metric relevance level
    if base is None:
        raise UsageError(f"metric {parsed.label} cannot be optimised through ranx (use one of: {', '.join(RANX_METRIC)})")
    return f"{base}@{parsed.k}" if getattr(parsed, "k", None) else base


def query_union(runs: Sequence[Run], allow_partial: bool = False) -> list[str]:
    """The queries to fuse (first run's order first); refuses differing sets unless ``allow_partial``."""
    sets = [set(r.query_ids.tolist()) for r in runs]
    order = list(dict.fromkeys(q for r in runs for q in r.query_ids.tolist()))
    if not allow_partial and any(s != sets[0] for s in sets[1:]):
        common = set.intersection(*sets)
        sizes = ", ".join(f"{r.name}: {len(s)}" for r, s in zip(runs, sets))
        raise PartialRunError(
            f"the runs answer different query sets ({sizes}; {len(common)} in common, {len(order)} in all); "
            "pass --allow-partial to fuse over the union"
        )
    return order


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


def to_ranx(run: Run, queries: Sequence[str], depth: int | None = None, norm: str | None = None):
    """A ranx ``Run`` over ``queries`` (empty where ``run`` has none), order-preserving scores
    (rescaled exactly when ``norm`` is scale-invariant and scores are huge: :func:`exact_rescale`)."""
    from ranx import Run as RanxRun

    scores = run.to_scores(depth)
    if norm in SCALE_INVARIANT_NORMS:
        scores = exact_rescale(scores)
    return RanxRun({q: scores.get(q, {}) for q in queries}, name=run.name)


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


def from_ranx(fused, queries: Sequence[str], name: str) -> Run:
    """The fused ranx run as an evalkit run, scores snapped (:func:`snap_scores`)."""
    data = fused.to_dict()
    return snapped_run({q: data.get(q, {}) for q in queries}, name)


def snapped_run(table: Mapping[str, Mapping[str, float]], name: str) -> Run:
    """``{query: {doc: score}}`` as a Run, scores snapped (:func:`snap_scores`) so the ranking rule breaks ties."""
    per_query = [(q, list(docs.items())) for q, docs in table.items()]
    snapped = iter(snap_scores([score for _, items in per_query for _, score in items]).tolist())
    return Run.from_scores({q: {doc: next(snapped) for doc, _ in items} for q, items in per_query}, name=name)


@contextlib.contextmanager
def quiet_numba():
    """ranx through numba: its NumbaTypeSafetyWarning (an unsigned-to-signed cast inside ranx) is noise to users."""
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*unsafe cast.*")
        warnings.filterwarnings("ignore", module="numba")
        warnings.filterwarnings("ignore", module="ranx")
        try:
            from numba.core.errors import NumbaTypeSafetyWarning
        except ImportError:  # numba absent or moved: the filters above still apply
            pass
        else:
            warnings.filterwarnings("ignore", category=NumbaTypeSafetyWarning)
        yield


def resolve_params(method: FusionMethod, n_runs: int, weights, rrf_k, extra: Mapping[str, Any] | None) -> dict[str, Any]:
    """The keyword arguments of the ranx method: weights (default equal), RRF k (default 60), others as given."""
    params = dict(extra or {})
    unknown = [p for p in params if p not in method.params]
    if unknown:
        takes = ", ".join(method.params) or "no parameters"
        raise UsageError(f"fusion method {method.name} does not take {', '.join(unknown)} (it takes {takes})")
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

    norm = check_norm(norm)
    from evalkit import fusion_native

    if not chosen.supervised and fusion_native.supported(chosen.name, norm):
        fused = fusion_native.fuse_native(runs, queries, chosen.name, norm, args, depth=depth, name=name or chosen.name)
        result = replace(fused, scores=snap_scores(fused.scores))
    else:
        with quiet_numba():
            from ranx import fuse as ranx_fuse

            fused = ranx_fuse([to_ranx(r, queries, depth, norm) for r in runs], norm=norm, method=chosen.ranx_name, params=dict(args))
        result = from_ranx(fused, queries, name or chosen.name)
    return check_finite(result, chosen.name, norm)


def check_finite(fused: Run, method: str, norm: str | None) -> Run:
    """``fused``, unless a score overflowed float64 (inputs near 1e308 summed under ``--norm none``, say): one line."""
    import numpy as np

    bad = ~np.isfinite(fused.scores)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise UsageError(
            f"fusion {method} under --norm {norm or 'none'} overflows float64 (query {fused.query_ids[fused.qidx[row]]}, "
            f"document {fused.doc_ids[fused.didx[row]]}: {fused.scores[row]}); scores this large need a normalisation such as min-max"
        )
    return fused


def check_optimizable(method: str) -> FusionMethod:
    """The method, if ranx can choose its parameters on a gold file."""
    chosen = get_method(method)
    if chosen.ranx_name is None or not (chosen.params or chosen.supervised):
        raise UsageError(f"fusion method {chosen.name} has nothing to optimise (try wsum, rrf, wmnz, mixed, rbc, ...)")
    return chosen


def optimize(
    runs: Sequence[Run],
    qrels: Qrels,
    method: str = "wsum",
    norm: str | None = "min-max",
    metric: str = "mrr@5",
    *,
    step: float = 0.1,
    depth: int | None = None,
    allow_partial: bool = False,
    show_progress: bool = True,
) -> dict[str, Any]:
    """The parameters of ``method`` that maximise ``metric`` on ``qrels`` (ranx ``optimize_fusion``).

    Weights are searched on a grid of ``step`` over the simplex (ranx).
    Gold queries no run answers are left out: they score 0 whatever the weights.
    """
    chosen = check_optimizable(method)
    queries = query_union(runs, allow_partial)
    judged = qrels.to_dict()
    kept = [q for q in queries if q in judged]
    if not kept:
        raise PartialRunError(f"{qrels.source.path if qrels.source else qrels.name}: no run query is in the gold; wrong split?")
    with quiet_numba():
        from ranx import Qrels as RanxQrels
        from ranx import optimize_fusion

    kwargs: dict[str, Any] = {"show_progress": show_progress}
    if chosen.params == ("weights",):
        kwargs["step"] = step
    with contextlib.redirect_stdout(sys.stderr), quiet_numba():  # ranx draws its progress bar on stdout
        best = optimize_fusion(
            RanxQrels({q: judged[q] for q in kept}),
            [to_ranx(r, kept, depth, check_norm(norm)) for r in runs],
            norm=check_norm(norm),
            method=chosen.ranx_name,
            metric=ranx_metric(metric),
            **kwargs,
        )
    return dict(best)


def llm_rank_norm(n: int) -> list[float]:
    """``LLM_norm`` for ranks 1..n: ``1 - (rank - 1) / (n - 1)``; a single document gets 1."""
    if n == 1:
        return [1.0]
    return [1.0 - (rank - 1) / (n - 1) for rank in range(1, n + 1)]


def min_max(scores: Mapping[str, float]) -> dict[str, float]:
    """Per-query min-max: ``(s - min) / max(max - min, 1e-9)`` (ranx's rule)."""
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    span = max(high - low, MIN_MAX_FLOOR)
    return {doc: (value - low) / span for doc, value in scores.items()}


def alpha_fusion(ce: Run, llm: Run, alpha: float = DEFAULT_ALPHA, *, depth: int | None = None, name: str | None = None) -> Run:
    """``alpha * CE_norm(d) + (1 - alpha) * LLM_norm(d)`` per query.

    ``CE_norm``: :func:`min_max` of the cross-encoder run's scores (a list
    run's scores follow its ranks). ``LLM_norm``: :func:`llm_rank_norm` over
    the LLM ranking (repeats dropped, first position kept). A document missing
    from one of the two gets 0 from it. Used by ``evalkit fuse --method alpha``
    and the RankGPT stage.
    """
    if not 0.0 <= alpha <= 1.0:
        raise UsageError(f"alpha must lie in [0, 1] (got {alpha})")
    ce_scores = exact_rescale(ce.to_scores(depth))  # min-max is scale-invariant: no overflow near 1e308
    llm_lists = llm.to_lists(depth)
    fused: dict[str, dict[str, float]] = {}
    for query in dict.fromkeys(list(ce_scores) + list(llm_lists)):
        ce_norm = min_max(ce_scores.get(query, {}))
        ranking = list(dict.fromkeys(llm_lists.get(query, [])))
        llm_norm = dict(zip(ranking, llm_rank_norm(len(ranking)))) if ranking else {}
        docs = dict.fromkeys(list(ce_norm) + ranking)
        fused[query] = {d: alpha * ce_norm.get(d, 0.0) + (1.0 - alpha) * llm_norm.get(d, 0.0) for d in docs}
    return Run.from_scores(fused, name=name or f"alpha{alpha:g}")
