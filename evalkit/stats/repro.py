"""Reproducibility and replicability measures of a baseline/advanced pair of runs (Breuer et al., SIGIR 2020).

An original experiment ran a baseline ``b`` and an advanced run ``a``; a
reproduction ran ``b'`` and ``a'`` on the same collection (reproducibility,
repro_eval's ``RpdEvaluator``), a replication on another one (replicability,
its ``RplEvaluator``). In ACM's terms, as repro_eval defines them:

* Kendall's tau Union (KTU), per topic: the union ``U`` of the top ``depth``
  documents of both rankings, sorted by document id; each ranking becomes the
  sequence of its documents' positions in ``U``; KTU is Kendall's tau-b of the
  two sequences (:func:`evalkit.stats.rank_correlation.kendall_tau`), the
  run's KTU the mean over topics (reproducibility only).
* Rank-biased overlap (RBO), per topic, truncated at ``rbo_depth`` and
  normalised (:func:`evalkit.stats.rank_correlation.rbo_truncated`), meaned
  over topics (reproducibility only).
* RMSE of the per-topic scores: ``sqrt(mean_t (x_t - x'_t)^2)`` (reproducibility only).
* Effect Ratio: ``ER = mean_t (a'_t - b'_t) / mean_t (a_t - b_t)``.
* Delta Relative Improvement: ``DRI = RI - RI'``, ``RI = (mean(a) - mean(b)) / mean(b)``.
* p-values of a two-sided t-test between the original and the reproduced
  per-topic scores of each run: paired (:func:`evalkit.stats.ttest.paired_t_test`)
  for a reproduction, Student's two-sample (:func:`evalkit.stats.ttest.two_sample_t_test`) for a replication.

Topics missing on one side (documented, never an error): KTU and RBO are
taken over the topics both rankings hold (the others are listed); a topic
whose rankings hold fewer than two common positions has no KTU (NaN, left
out of the mean and counted). Paired figures (RMSE, ER's differences, the
paired t-test) use the topics both sides have a score for; DRI and the
unpaired test each run's own topics. A zero original improvement gives an
ER of +-inf (NaN if the reproduced one is zero too).

Reference: Breuer, Ferro, Fuhr, Maistro, Sakai, Schaer and Soboroff (2020),
"How to Measure the Reproducibility of System-oriented IR Experiments",
SIGIR, https://doi.org/10.1145/3397271.3401036.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from evalkit.core.errors import UsageError

RUN_LENGTH = 1000  # repro_eval's trim threshold of KTU
RBO_DEPTH = 1000
RBO_P = 0.95
SIDES = ("baseline", "advanced")


@dataclass(frozen=True)
class Side:
    """One run: its ranking of each topic (best first) and its per-topic score of each metric."""

    rankings: Mapping[str, Sequence[str]]
    scores: Mapping[str, Mapping[str, float]]  # metric -> topic -> value (NaN: not evaluated)


@dataclass(frozen=True)
class TopicFigures:
    """A per-topic figure (KTU or RBO) of one run pair: mean over the topics where it is defined."""

    mean: float
    per_topic: dict[str, float]
    only_original: list[str]
    only_reproduced: list[str]
    undefined: list[str]

    def as_dict(self, per_topic: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {"mean": _finite(self.mean), "topics": len(self.per_topic) - len(self.undefined),
                               "only_original": self.only_original, "only_reproduced": self.only_reproduced,
                               "undefined": self.undefined}
        if per_topic:
            out["per_topic"] = {t: _finite(v) for t, v in self.per_topic.items()}
        return out


@dataclass(frozen=True)
class MeasureFigures:
    """Everything of one metric: RMSE and p-value per run, ER and DRI of the pair."""

    metric: str
    rmse: dict[str, float] | None
    er: float
    dri: float
    p_value: dict[str, float]
    improvement: dict[str, float]  # mean_t (a_t - b_t), original and reproduced
    relative_improvement: dict[str, float]


@dataclass(frozen=True)
class ReproResult:
    kind: str  # "reproducibility" or "replicability"
    ktu: dict[str, TopicFigures] | None
    rbo: dict[str, TopicFigures] | None
    measures: dict[str, MeasureFigures]
    options: dict[str, Any] = field(default_factory=dict)

    def as_dict(self, per_topic: bool = True) -> dict[str, Any]:
        """JSON-ready: ``ktu``, ``rbo``, ``rmse``, ``er``, ``dri`` and ``p_value`` under each measure (non-finite as None)."""
        ktu = {s: f.mean for s, f in self.ktu.items()} if self.ktu else None
        rbo = {s: f.mean for s, f in self.rbo.items()} if self.rbo else None
        measures = {}
        for name, m in self.measures.items():
            measures[name] = {
                "ktu": _finite_map(ktu), "rbo": _finite_map(rbo), "rmse": _finite_map(m.rmse), "er": _finite(m.er),
                "dri": _finite(m.dri), "p_value": _finite_map(m.p_value), "test": "paired t-test" if self.kind == "reproducibility"
                else "unpaired t-test", "improvement": _finite_map(m.improvement),
                "relative_improvement": _finite_map(m.relative_improvement),
            }
        return {
            "kind": self.kind, "options": self.options, "measures": measures,
            "ktu": {s: f.as_dict(per_topic) for s, f in self.ktu.items()} if self.ktu else None,
            "rbo": {s: f.as_dict(per_topic) for s, f in self.rbo.items()} if self.rbo else None,
        }


def _finite(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def _finite_map(values: Mapping[str, float] | None) -> dict[str, float | None] | None:
    return None if values is None else {k: _finite(v) for k, v in values.items()}


# ----------------------------------------------------------------- document orderings
def ktu_topic(original: Sequence[str], reproduced: Sequence[str], depth: int = RUN_LENGTH) -> float:
    """KTU of one topic (see the module docstring); rankings of unequal length are compared on their common positions."""
    from evalkit.stats.rank_correlation import first_occurrences, kendall_tau

    orig, rep = first_occurrences(original)[:depth], first_occurrences(reproduced)[:depth]
    union = {doc: i for i, doc in enumerate(sorted(set(orig) | set(rep), key=str))}  # ids are text: their own order
    n = min(len(orig), len(rep))
    if n < 2:
        return float("nan")
    return kendall_tau([union[d] for d in orig[:n]], [union[d] for d in rep[:n]])


def _per_topic(original: Mapping[str, Sequence[str]], reproduced: Mapping[str, Sequence[str]], figure) -> TopicFigures:
    topics = [t for t in reproduced if t in original]
    values = {t: float(figure(original[t], reproduced[t])) for t in topics}
    undefined = [t for t, v in values.items() if math.isnan(v)]
    defined = [v for v in values.values() if not math.isnan(v)]
    return TopicFigures(float(np.mean(defined)) if defined else float("nan"), values,
                        [t for t in original if t not in reproduced], [t for t in reproduced if t not in original], undefined)


def ktu(original: Mapping[str, Sequence[str]], reproduced: Mapping[str, Sequence[str]], depth: int = RUN_LENGTH) -> TopicFigures:
    """Kendall's tau Union of each topic both runs rank, and their mean."""
    return _per_topic(original, reproduced, lambda o, r: ktu_topic(o, r, depth))


def rbo(original: Mapping[str, Sequence[str]], reproduced: Mapping[str, Sequence[str]], p: float = RBO_P,
        depth: int = RBO_DEPTH) -> TopicFigures:
    """RBO (truncated at ``depth``, normalised) of each topic both runs rank, and their mean."""
    from evalkit.stats.rank_correlation import check_persistence, rbo_truncated

    check_persistence(p)
    return _per_topic(original, reproduced, lambda o, r: rbo_truncated(r, o, p, depth))


# ----------------------------------------------------------------- effectiveness and overall effects
def _values(scores: Mapping[str, float]) -> dict[str, float]:
    return {t: float(v) for t, v in scores.items() if not math.isnan(float(v))}


def _common(x: Mapping[str, float], y: Mapping[str, float]) -> tuple[np.ndarray, np.ndarray]:
    x, y = _values(x), _values(y)
    topics = [t for t in x if t in y]
    return np.array([x[t] for t in topics], dtype=np.float64), np.array([y[t] for t in topics], dtype=np.float64)


def rmse(original: Mapping[str, float], reproduced: Mapping[str, float]) -> float:
    """``sqrt(mean_t (x_t - x'_t)^2)`` over the topics both have a score for (NaN if none)."""
    x, y = _common(original, reproduced)
    return float(np.sqrt(np.mean((x - y) ** 2))) if len(x) else float("nan")


def mean_improvement(advanced: Mapping[str, float], baseline: Mapping[str, float]) -> float:
    """``mean_t (a_t - b_t)`` over the topics both runs have a score for."""
    a, b = _common(advanced, baseline)
    return float(np.mean(a - b)) if len(a) else float("nan")


def _ratio(numerator: float, denominator: float) -> float:
    """``numerator / denominator``; a zero denominator gives +-inf (NaN over a zero numerator)."""
    if math.isnan(numerator) or math.isnan(denominator) or (denominator == 0 and numerator == 0):
        return float("nan")
    return math.copysign(math.inf, numerator) if denominator == 0 else numerator / denominator


def relative_improvement(advanced: Mapping[str, float], baseline: Mapping[str, float]) -> float:
    """``(mean(a) - mean(b)) / mean(b)``, each mean over the run's own topics."""
    a, b = list(_values(advanced).values()), list(_values(baseline).values())
    if not a or not b:
        return float("nan")
    mean_a, mean_b = float(np.mean(a)), float(np.mean(b))
    return _ratio(mean_a - mean_b, mean_b)


def effect_ratio(orig_b: Mapping[str, float], orig_a: Mapping[str, float], rep_b: Mapping[str, float], rep_a: Mapping[str, float]) -> float:
    """``ER = mean_t (a'_t - b'_t) / mean_t (a_t - b_t)``."""
    return _ratio(mean_improvement(rep_a, rep_b), mean_improvement(orig_a, orig_b))


def delta_relative_improvement(orig_b: Mapping[str, float], orig_a: Mapping[str, float], rep_b: Mapping[str, float],
                               rep_a: Mapping[str, float]) -> float:
    """``DRI = RI - RI'``."""
    return relative_improvement(orig_a, orig_b) - relative_improvement(rep_a, rep_b)


def p_value(original: Mapping[str, float], reproduced: Mapping[str, float], paired: bool) -> float:
    """Two-sided t-test p-value of the original against the reproduced per-topic scores."""
    from evalkit.stats.ttest import paired_t_test, two_sample_t_test

    if paired:
        x, y = _common(original, reproduced)
        return paired_t_test(y, x).p_value
    return two_sample_t_test(np.array(list(_values(original).values())), np.array(list(_values(reproduced).values()))).p_value


# ----------------------------------------------------------------- all of it
def reproduction(original: Mapping[str, Side], reproduced: Mapping[str, Side], metrics: Sequence[str], same_collection: bool = True,
                 depth: int = RUN_LENGTH, rbo_p: float = RBO_P, rbo_depth: int = RBO_DEPTH) -> ReproResult:
    """Every measure of the module docstring; ``original`` and ``reproduced`` map ``baseline``/``advanced`` to a :class:`Side`.

    ``same_collection``: a reproduction (KTU, RBO, RMSE and the paired test);
    otherwise a replication (ER, DRI and the unpaired test only: the topics differ).
    """
    for what, sides in (("original", original), ("reproduced", reproduced)):
        if set(sides) != set(SIDES):
            raise UsageError(f"{what}: give a baseline and an advanced run (got {sorted(sides)})")
    if not metrics:
        raise UsageError("name at least one metric")
    if depth < 1 or rbo_depth < 1:
        raise UsageError("the KTU and RBO depths must be at least 1")
    for side in SIDES:
        for sides in (original, reproduced):
            absent = [m for m in metrics if m not in sides[side].scores]
            if absent:
                raise UsageError(f"{side}: no per-topic scores of {', '.join(absent)}")
    ktus = rbos = None
    if same_collection:
        ktus = {s: ktu(original[s].rankings, reproduced[s].rankings, depth) for s in SIDES}
        rbos = {s: rbo(original[s].rankings, reproduced[s].rankings, rbo_p, rbo_depth) for s in SIDES}
    measures = {}
    for metric in metrics:
        ob, oa = original["baseline"].scores[metric], original["advanced"].scores[metric]
        rb, ra = reproduced["baseline"].scores[metric], reproduced["advanced"].scores[metric]
        measures[metric] = MeasureFigures(
            metric,
            {"baseline": rmse(ob, rb), "advanced": rmse(oa, ra)} if same_collection else None,
            effect_ratio(ob, oa, rb, ra),
            delta_relative_improvement(ob, oa, rb, ra),
            {"baseline": p_value(ob, rb, same_collection), "advanced": p_value(oa, ra, same_collection)},
            {"original": mean_improvement(oa, ob), "reproduced": mean_improvement(ra, rb)},
            {"original": relative_improvement(oa, ob), "reproduced": relative_improvement(ra, rb)},
        )
    options = {"depth": depth, "rbo_p": rbo_p, "rbo_depth": rbo_depth} if same_collection else {}
    return ReproResult("reproducibility" if same_collection else "replicability", ktus, rbos, measures, options)
