"""ranx behind evalkit's fusion: the methods evalkit does not compute itself (condorcet, w_condorcet, rbc,
the trained methods) and :func:`optimize`, ranx's ``optimize_fusion``. ranx (and numba) are imported only here,
only when called, with numba's warnings silenced."""
from __future__ import annotations

import contextlib
import sys
from typing import Any, Mapping, Sequence

from evalkit.data import Qrels, Run
from evalkit.core.errors import PartialRunError, UsageError
from evalkit.fusion.methods import SCALE_INVARIANT_NORMS, FusionMethod, check_norm, exact_rescale, get_method
from evalkit.fusion.queries import query_union

RANX_METRIC = {"MRR": "mrr", "Recall": "recall", "nDCG": "ndcg", "P": "precision", "MAP": "map", "Success": "hit_rate", "R-Prec": "r-precision",
               "Bpref": "bpref"}


def require_ranx(feature: str) -> None:
    """ranx importable, or one line naming the extra that brings it."""
    from evalkit.core.errors import require

    with quiet_numba():
        require("ranx", feature)


def ranx_metric(metric: str) -> str:
    """The ranx name of an evalkit metric (``"MRR@5"`` -> ``"mrr@5"``)."""
    from evalkit.metrics import parse_metric

    parsed = parse_metric(metric)
    base = RANX_METRIC.get(type(parsed).name) if parsed.rel is None else None  # ranx has no per-metric relevance level
    if base is None:
        raise UsageError(f"metric {parsed.label} cannot be optimised through ranx (use one of: {', '.join(RANX_METRIC)})")
    return f"{base}@{parsed.k}" if getattr(parsed, "k", None) else base


def to_ranx(run: Run, queries: Sequence[str], depth: int | None = None, norm: str | None = None):
    """A ranx ``Run`` over ``queries`` (empty where ``run`` has none), order-preserving scores
    (rescaled exactly when ``norm`` is scale-invariant and scores are huge: :func:`exact_rescale`)."""
    from ranx import Run as RanxRun

    scores = run.to_scores(depth)
    if norm in SCALE_INVARIANT_NORMS:
        scores = exact_rescale(scores)
    return RanxRun({q: scores.get(q, {}) for q in queries}, name=run.name)


def ranx_fuse(runs: Sequence[Run], queries: Sequence[str], method: FusionMethod, norm: str | None, params: Mapping[str, Any],
              depth: int | None = None) -> dict[str, dict[str, float]]:
    """ranx's ``fuse`` of ``runs`` over ``queries``: ``{query: {doc: fused score}}`` (scores as ranx gives them)."""
    require_ranx(f"the fusion method {method.name} (computed by ranx)")
    with quiet_numba():
        from ranx import fuse

        fused = fuse([to_ranx(r, queries, depth, norm) for r in runs], norm=norm, method=method.ranx_name, params=dict(params))
    data = fused.to_dict()
    return {q: data.get(q, {}) for q in queries}


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
    require_ranx("optimising a fusion (--optimize-on, ranx's optimize_fusion)")
    with quiet_numba():
        from ranx import Qrels as RanxQrels
        from ranx import optimize_fusion

    from evalkit.core.progress import shows_bars

    kwargs: dict[str, Any] = {"show_progress": show_progress and shows_bars()}  # ranx's tqdm bar: on a terminal only
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
