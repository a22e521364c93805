"""Fusing ranked runs: ranx's methods and normalisations by name, and alpha fusion.

* :func:`fuse` computes rrf, isr, log_isr, logn_isr, bordafuse, w_bordafuse and
  the comb*/weighted score methods under every normalisation natively
  (:mod:`evalkit.fusion.native`: numpy, milliseconds, ranx's values to 1e-12)
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

One door for the package: :mod:`.methods` (what is known), :mod:`.combine` (:func:`fuse`),
:mod:`.native` (evalkit's numpy computation), :mod:`.ranx_backend` (ranx and :func:`optimize`),
:mod:`.alpha` (alpha fusion), :mod:`.queries` (the query set), :mod:`.api` (:func:`~evalkit.api.fusion.fuse_runs`, what ``evalkit fuse`` does).
"""
from __future__ import annotations

from evalkit.fusion.alpha import DEFAULT_ALPHA, alpha_fusion, llm_rank_norm, min_max
from evalkit.fusion.combine import check_finite, fuse, snap_scores, snapped_run
from evalkit.fusion.methods import ALIASES, DEFAULT_RRF_K, METHODS, NORMS, FusionMethod, check_norm, get_method, resolve_params
from evalkit.fusion.queries import query_union


def optimize(*args, **kwargs):
    """The parameters of a method that maximise a metric on a gold file (:func:`evalkit.fusion.ranx_backend.optimize`,
    ranx imported only when called)."""
    from evalkit.fusion.ranx_backend import optimize as ranx_optimize

    return ranx_optimize(*args, **kwargs)


__all__ = ["ALIASES", "DEFAULT_ALPHA", "DEFAULT_RRF_K", "METHODS", "NORMS", "FusionMethod", "alpha_fusion", "check_finite", "check_norm",
           "fuse", "get_method", "llm_rank_norm", "min_max", "optimize", "query_union", "resolve_params", "snap_scores", "snapped_run"]
