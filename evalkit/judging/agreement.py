"""How far two sets of judgments agree, and what the difference does to a leaderboard.

**On the judgments** (:func:`gold_agreement`): the pairs both golds judge
(a grade >= 0 in both; below 0 is unjudged, trec_eval's convention) give the
confusion matrix of grades, Cohen's kappa on relevance (grade >= the
relevance level: the binary decision every binary metric makes), Cohen's
weighted kappa on the grades, Krippendorff's alpha (ordinal) and, for each
query, its pairs, the share of equal relevance decisions and of equal grades
(:mod:`evalkit.stats.agreement` for the formulas). ``complete="a"`` (or
``"b"``) takes that gold as complete: every pair the other judges and it does
not counts as grade 0 (the reading of BEIR and SciFact qrels, which list only
relevant documents).

**On the rankings** (:func:`ranking_agreement`): every run scored on both
golds (the task's official score, or the metric asked for), each ranking by
score descending (equal scores: by run name), then Kendall's tau-b between
the scores, Yilmaz et al.'s tau_AP of B's ranking against A's (A the
reference; with tied scores Urbano and Marrero's tau_AP,b), rank-biased
overlap of the two orders (extrapolated, persistence ``p``;
:mod:`evalkit.stats.rank_correlation`) and every pair of runs whose order
flips (strictly ordered both ways), with whether the all-pairs procedure
(:mod:`evalkit.stats.allpairs`) calls its difference significant under A and
under B.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from evalkit.core.errors import UsageError
from evalkit.stats.agreement import cohen_kappa, confusion_matrix, krippendorff_alpha_pair
from evalkit.stats.rank_correlation import kendall_tau, rbo, tau_ap, tau_ap_b

if TYPE_CHECKING:  # pragma: no cover
    from evalkit.stats.allpairs import AllPairs
    from evalkit.data import Qrels


def _judged(qrels: "Qrels") -> dict[tuple[str, str], float]:
    pairs = zip(qrels.query_ids[qrels.qidx].tolist(), qrels.doc_ids[qrels.didx].tolist())
    return {pair: grade for pair, grade in zip(pairs, qrels.grades.tolist()) if grade >= 0}


@dataclass
class GoldAgreement:
    """The agreement of two golds on the pairs both judge (see the module docstring)."""

    pairs: int
    only_a: int
    only_b: int
    relevance_level: float
    weights: str
    categories: list[float]
    confusion: list[list[int]]  # [grade under A][grade under B]
    cohen_kappa: float  # binary, at the relevance level
    kappa_grades: float  # unweighted, on the grades
    weighted_kappa: float
    krippendorff_alpha: float  # ordinal
    observed_agreement: float  # share of equal relevance decisions
    per_query: list[dict[str, Any]] = field(default_factory=list)
    complete: str | None = None


def gold_agreement(a: "Qrels", b: "Qrels", relevance_level: float = 1.0, weights: str = "linear",
                   complete: str | None = None) -> GoldAgreement:
    """Agreement of ``a`` and ``b`` on the pairs both judge; ``complete`` in ``{None, "a", "b"}`` (module docstring)."""
    if complete not in (None, "a", "b"):
        raise UsageError(f"complete must be a or b (got {complete!r})")
    judged_a, judged_b = _judged(a), _judged(b)
    if complete == "a":
        judged_a = {**{p: 0.0 for p in judged_b}, **judged_a}
    elif complete == "b":
        judged_b = {**{p: 0.0 for p in judged_a}, **judged_b}
    common = sorted(set(judged_a) & set(judged_b))
    if len(common) < 2:
        raise UsageError(f"the two golds judge {len(common)} pair{'s' * (len(common) != 1)} in common: agreement needs at least two "
                         "(same query and document ids? --complete a|b where one gold lists only relevant documents)")
    x = np.array([judged_a[p] for p in common])
    y = np.array([judged_b[p] for p in common])
    rel_x, rel_y = (x >= relevance_level).astype(float), (y >= relevance_level).astype(float)
    cats, matrix = confusion_matrix(x, y)
    per_query = []
    queries = np.array([q for q, _ in common], dtype=object)
    for query in sorted(set(queries.tolist())):
        rows = queries == query
        per_query.append({"query": query, "pairs": int(rows.sum()), "relevance_agreement": float(np.mean(rel_x[rows] == rel_y[rows])),
                          "grade_agreement": float(np.mean(x[rows] == y[rows])),
                          "relevant_a": int(rel_x[rows].sum()), "relevant_b": int(rel_y[rows].sum())})
    return GoldAgreement(
        pairs=len(common), only_a=len(judged_a) - len(common), only_b=len(judged_b) - len(common), relevance_level=relevance_level,
        weights=weights, categories=cats.tolist(), confusion=matrix.tolist(),
        cohen_kappa=cohen_kappa(rel_x, rel_y, scale=[0.0, 1.0]), kappa_grades=cohen_kappa(x, y),
        weighted_kappa=cohen_kappa(x, y, weights), krippendorff_alpha=krippendorff_alpha_pair(x, y, "ordinal"),
        observed_agreement=float(np.mean(rel_x == rel_y)), per_query=per_query, complete=complete,
    )


@dataclass
class RankingAgreement:
    """Two leaderboards of the same runs side by side (see the module docstring)."""

    metric: str
    runs: list[dict[str, Any]]  # run, score_a, score_b, rank_a, rank_b, move (rank_a - rank_b: places gained under B)
    # (+ llm_share_a/b, human_share_a/b: LLM@k and Human@k where that gold says who judged)
    kendall_tau: float
    tau_ap: float
    tau_ap_variant: str  # "tau_ap" (no ties) or "tau_ap_b"
    rbo: float
    rbo_p: float
    flipped_pairs: list[dict[str, Any]]
    procedure: str | None = None
    notes: list[str] = field(default_factory=list)
    judged_k: int | None = None  # the k of the runs' llm_share_a/b (LLM@k) where a gold says who judged


def order_of(names: Sequence[str], scores: Sequence[float]) -> list[int]:
    """Indices of the runs by score descending, equal scores by name."""
    return sorted(range(len(names)), key=lambda i: (-scores[i], names[i]))


def ranks_of(names: Sequence[str], scores: Sequence[float]) -> list[int]:
    rank = [0] * len(names)
    for position, i in enumerate(order_of(names, scores), start=1):
        rank[i] = position
    return rank


def significance(compared: "AllPairs | None") -> dict[frozenset, dict[str, Any]]:
    """``{frozenset({run, run}): pair result}`` of an all-pairs comparison."""
    if compared is None:
        return {}
    return {frozenset((p.first, p.second)): {"significant": p.significant, "p_adjusted": p.p_adjusted} for p in compared.pairs}


def ranking_agreement(names: Sequence[str], scores_a: Sequence[float], scores_b: Sequence[float], metric: str, *,
                      pairs_a: "AllPairs | None" = None, pairs_b: "AllPairs | None" = None, p: float = 0.9) -> RankingAgreement:
    """Tau, tau_AP, RBO and flipped pairs of the runs ``names`` scored ``scores_a`` under A and ``scores_b`` under B."""
    names = list(names)
    a, b = np.asarray(scores_a, dtype=float), np.asarray(scores_b, dtype=float)
    if len(names) < 2:
        raise UsageError("comparing two leaderboards needs at least two runs")
    if len(set(names)) != len(names):
        raise UsageError("two runs have the same name; name them apart")
    rank_a, rank_b = ranks_of(names, a.tolist()), ranks_of(names, b.tolist())
    runs = [{"run": n, "score_a": float(a[i]), "score_b": float(b[i]), "rank_a": rank_a[i], "rank_b": rank_b[i],
             "move": rank_a[i] - rank_b[i]} for i, n in enumerate(names)]
    runs.sort(key=lambda r: (r["rank_a"], r["run"]))
    tied = len(np.unique(a)) < len(a) or len(np.unique(b)) < len(b)
    variant = "tau_ap_b" if tied else "tau_ap"
    ap = tau_ap_b(a, b) if tied else tau_ap(a, b)
    order_a = [names[i] for i in order_of(names, a.tolist())]
    order_b = [names[i] for i in order_of(names, b.tolist())]
    sig_a, sig_b = significance(pairs_a), significance(pairs_b)
    flipped = []
    for i in range(len(names)):
        for j in range(len(names)):
            if a[i] > a[j] and b[i] < b[j]:
                key = frozenset((names[i], names[j]))
                flipped.append({
                    "above_under_a": names[i], "above_under_b": names[j],
                    "scores_a": [float(a[i]), float(a[j])], "scores_b": [float(b[i]), float(b[j])],
                    "significant_a": sig_a.get(key, {}).get("significant"), "significant_b": sig_b.get(key, {}).get("significant"),
                    "p_adjusted_a": sig_a.get(key, {}).get("p_adjusted"), "p_adjusted_b": sig_b.get(key, {}).get("p_adjusted"),
                })
    flipped.sort(key=lambda f: (rank_a[names.index(str(f["above_under_a"]))], rank_a[names.index(str(f["above_under_b"]))]))
    notes = ["tied scores: tau_AP is Urbano and Marrero's tau_AP,b"] if tied else []
    either = pairs_a or pairs_b
    procedure = either.options.procedure if either is not None else None
    return RankingAgreement(metric=metric, runs=runs, kendall_tau=kendall_tau(a, b), tau_ap=ap, tau_ap_variant=variant,
                            rbo=rbo(order_a, order_b, p), rbo_p=p, flipped_pairs=flipped, procedure=procedure, notes=notes)
