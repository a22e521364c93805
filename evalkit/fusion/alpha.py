"""Alpha fusion of a cross-encoder ranking and an LLM ranking (the RankGPT stage; ``evalkit fuse --method alpha``)."""
from __future__ import annotations

from typing import Mapping

from evalkit.data import Run
from evalkit.core.errors import UsageError
from evalkit.fusion.methods import FLOOR, exact_rescale

DEFAULT_ALPHA = 0.4


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
    span = max(high - low, FLOOR)
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
