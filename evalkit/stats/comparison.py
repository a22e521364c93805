"""Paired comparison of runs against a baseline: every test, effect size and correction.

:func:`compare` takes per-query values already aligned by
:func:`evalkit.stats.paired.align` and runs, for each run against the
baseline: Wilcoxon signed-rank, paired t-test, Fisher randomization test,
bootstrap CI of the mean difference, McNemar (exact and chi-square) on a
binary outcome, win/tie/loss, relative improvement, the matched-pairs
rank-biserial effect size and Sakai's ES_E (the difference over the residual
standard deviation of the two-way ANOVA of all the compared runs). The p-values of each test are then corrected over
the comparisons (one family per test).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

import numpy as np

from evalkit.core.errors import UsageError, listed, unquoted
from evalkit.stats import TestResult
from evalkit.stats.bootstrap import CI_METHODS, bootstrap_ci, bootstrap_cis
from evalkit.stats.correction import CORRECTIONS, adjust
from evalkit.stats.effect_size import rank_biserial, relative_improvement, win_tie_loss
from evalkit.stats.mcnemar import check_binary, mcnemar_tests
from evalkit.stats.paired import PairedValues
from evalkit.stats.randomization import randomization_test, randomization_tests
from evalkit.stats.ttest import paired_t_test
from evalkit.stats.wilcoxon import ZERO_METHODS, wilcoxon_test

TEST_NAMES = {
    "wilcoxon": "Wilcoxon signed-rank",
    "ttest": "paired t-test",
    "randomization": "Fisher randomization",
    "mcnemar_exact": "McNemar exact",
    "mcnemar_chi2": "McNemar chi-square",
}


MAX_RESAMPLES = 1_000_000  # bounds time and memory: p-values and CIs finer than 1e-6 are not needed


@dataclass(frozen=True)
class CompareOptions:
    zero_method: str = "wilcox"
    permutations: int = 10_000
    bootstrap: int = 10_000
    ci_method: str = "percentile"
    confidence: float = 0.95
    seed: int = 42
    correction: str = "holm"
    alpha: float = 0.05

    def check(self) -> None:
        if self.zero_method not in ZERO_METHODS:
            raise UsageError(f"unknown zero method {self.zero_method!r} (choose {', '.join(ZERO_METHODS)})")
        if self.ci_method not in CI_METHODS:
            raise UsageError(f"unknown bootstrap CI method {self.ci_method!r} (choose {', '.join(CI_METHODS)})")
        if self.correction not in CORRECTIONS:
            raise UsageError(f"unknown correction {self.correction!r} (choose {', '.join(CORRECTIONS)})")
        from evalkit.core.options import seed_value, whole_number

        for what, value in (("--permutations", self.permutations), ("--bootstrap", self.bootstrap)):
            whole_number(value, what, 1, MAX_RESAMPLES)  # p-values below 1e-6 need no more
        seed_value(self.seed, "--seed")
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (self.confidence, self.alpha)) \
                or not 0 < self.confidence < 1 or not 0 < self.alpha < 1:
            raise UsageError("--confidence and --alpha must lie strictly between 0 and 1")

    def description(self, binary: str | None, comparisons: int = 2) -> list[str]:
        lines = [
            f"Wilcoxon signed-rank: scipy.stats.wilcoxon, zero_method={self.zero_method} "
            f"({ZERO_METHODS[self.zero_method]}), no continuity correction, method auto "
            "(exact for n <= 50 without ties or zeros, exact permutation for n <= 13, else normal approximation)",
            "paired t-test: scipy.stats.ttest_rel",
            f"Fisher randomization: {self.permutations} random sign flips of the per-query differences "
            f"(exact enumeration when 2^nonzero <= {self.permutations}), seed {self.seed}, p = (1 + hits) / (1 + B)",
            f"bootstrap: {self.confidence:.0%} CI of the mean difference, {self.bootstrap} resamples of queries, "
            f"{CI_METHODS[self.ci_method]}, seed {self.seed}",
        ]
        if binary:
            lines.append(
                f"McNemar on {binary} (statsmodels): exact binomial and chi-square with continuity correction; "
                "b = only the baseline correct, c = only the run correct"
            )
        if comparisons > 1 and self.correction != "none":
            correction = f"correction: {self.correction} ({CORRECTIONS[self.correction]}) over the {comparisons} comparisons of each test"
        elif comparisons > 1:
            correction = "no multiple-comparison correction"
        else:
            correction = "a single comparison: no correction needed"
        lines.append(f"all tests two-sided; {correction}; alpha {self.alpha}")
        return lines


@dataclass
class PairComparison:
    """One run against the baseline."""

    run: str
    baseline: str
    n: int  # paired queries
    mean_run: float
    mean_baseline: float
    difference: float  # mean_run - mean_baseline
    relative: float  # difference / mean_baseline
    ci: tuple[float, float]
    wins: int
    ties: int
    losses: int
    rank_biserial: float
    tests: dict[str, TestResult]
    adjusted: dict[str, float] = field(default_factory=dict)
    es_e: float = float("nan")  # Sakai's ES_E: difference / sqrt(V_E), V_E of the two-way ANOVA of every compared run

    def significant(self, test: str, alpha: float) -> bool:
        return self.adjusted.get(test, self.tests[test].p_value) < alpha

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["ci"] = list(self.ci)
        out["tests"] = {
            name: {**result.as_dict(), "p_adjusted": self.adjusted.get(name)} for name, result in self.tests.items()
        }
        out.pop("adjusted")
        return out


@dataclass
class Comparison:
    metric: str
    binary: str | None
    baseline: str
    options: CompareOptions
    pairs: list[PairComparison]
    n_queries: int
    notes: list[str] = field(default_factory=list)

    @property
    def test_names(self) -> list[str]:
        return list(self.pairs[0].tests) if self.pairs else []


def paired_rows(values: PairedValues, run: int, baseline: int) -> tuple[np.ndarray, np.ndarray]:
    """Values of ``run`` and ``baseline`` on their shared defined queries; none shared is a UsageError."""
    a, b, _ = values.pair(run, baseline)
    if len(a) == 0:
        raise UsageError(f"{values.names[run]} and {values.names[baseline]} share no query with a defined {values.metric}")
    return a, b


def compare_pair(
    values: PairedValues, run: int, baseline: int, options: CompareOptions, binary: PairedValues | None = None,
    ci: tuple[float, float] | None = None, randomization: TestResult | None = None,
) -> PairComparison:
    """All statistics of run ``run`` against ``baseline`` (row indices of ``values``).

    ``ci`` and ``randomization``, when given, are this pair's bootstrap CI and
    randomization test already computed for all pairs at once by :func:`compare`.
    """
    a, b = paired_rows(values, run, baseline)
    mean_a, mean_b = float(a.mean()), float(b.mean())
    wins, ties, losses = win_tie_loss(a, b)
    tests = {
        "wilcoxon": wilcoxon_test(a, b, options.zero_method),
        "ttest": paired_t_test(a, b),
        "randomization": randomization or randomization_test(a, b, options.permutations, options.seed),
    }
    if binary is not None:
        ba, bb, _ = binary.pair(run, baseline)
        check_binary(np.concatenate([ba, bb]), binary.metric)
        exact, chi2 = mcnemar_tests(ba, bb)
        tests["mcnemar_exact"], tests["mcnemar_chi2"] = exact, chi2
    return PairComparison(
        run=values.names[run],
        baseline=values.names[baseline],
        n=len(a),
        mean_run=mean_a,
        mean_baseline=mean_b,
        difference=mean_a - mean_b,
        relative=relative_improvement(mean_a, mean_b),
        ci=ci or bootstrap_ci(a - b, options.bootstrap, options.confidence, options.ci_method, options.seed),
        wins=wins,
        ties=ties,
        losses=losses,
        rank_biserial=rank_biserial(a, b, options.zero_method),
        tests=tests,
    )


def correct(pairs: list[PairComparison], method: str, alpha: float) -> None:
    """Fill ``adjusted`` of every pair: one family per test, over the comparisons."""
    if not pairs:
        return
    for test in pairs[0].tests:
        adjusted = adjust([p.tests[test].p_value for p in pairs], method, alpha)
        for pair, value in zip(pairs, adjusted):
            pair.adjusted[test] = value


def compare(
    values: PairedValues, baseline: str, options: CompareOptions = CompareOptions(), binary: PairedValues | None = None,
    progress: bool = False,
) -> Comparison:
    """Compare every run of ``values`` with ``baseline``; needs at least two runs."""
    options.check()
    if len(values.names) < 2:
        raise UsageError("compare needs at least two runs (a baseline and one run to compare with it)")
    if baseline not in values.names:
        raise UsageError(f"baseline {baseline!r} is not one of the runs ({listed(values.names, 10, unquoted)})")
    base = values.index(baseline)
    others = [i for i in range(len(values.names)) if i != base]
    rows = [paired_rows(values, i, base) for i in others]
    # the resampling statistics of all pairs at once: one set of random draws, shared (the same draws per pair as before)
    cis = bootstrap_cis([a - b for a, b in rows], options.bootstrap, options.confidence, options.ci_method, options.seed)
    randomized = randomization_tests(rows, options.permutations, options.seed)
    from evalkit.core.progress import progress as progress_of

    iterator = progress_of(range(len(others)), desc="comparing", unit="run", enabled=progress and len(others) > 1)
    pairs = [compare_pair(values, others[k], base, options, binary, cis[k], randomized[k]) for k in iterator]
    correct(pairs, options.correction, options.alpha)
    add_es_e(values, pairs)
    n_defined = int(np.sum(~np.isnan(values.matrix).any(axis=0)))
    notes = []
    if n_defined < len(values.query_ids):
        notes.append(f"{len(values.query_ids) - n_defined} queries where {values.metric} is undefined for some run are left out of the pairs")
    return Comparison(
        metric=values.metric,
        binary=binary.metric if binary is not None else None,
        baseline=baseline,
        options=options,
        pairs=pairs,
        n_queries=len(values.query_ids),
        notes=notes,
    )


def add_es_e(values: PairedValues, pairs: list[PairComparison]) -> None:
    """Each pair's ES_E, with V_E from the two-way ANOVA of every run on the queries where all are defined (NaN with fewer than 2)."""
    from evalkit.stats.anova import two_way_anova

    complete = values.matrix[:, ~np.isnan(values.matrix).any(axis=0)]
    if complete.shape[1] < 2:
        return
    anova = two_way_anova(complete)
    for pair in pairs:
        pair.es_e = float(anova.es_e(pair.difference))


SIGNIFICANCE_TESTS = ("wilcoxon", "ttest", "randomization")


def significance_test(name: str, run: np.ndarray, baseline: np.ndarray, options: CompareOptions = CompareOptions()) -> TestResult:
    """One of the per-query tests by name (used for report markers and leaderboard ranks)."""
    return significance_tests(name, [(run, baseline)], options)[0]


def significance_tests(
    name: str, pairs: Sequence[tuple[np.ndarray, np.ndarray]], options: CompareOptions = CompareOptions()
) -> list[TestResult]:
    """:func:`significance_test` of every ``(run, baseline)`` pair (randomization: one stream of signs for all)."""
    from evalkit.stats.pairwise import paired_tests

    if name not in SIGNIFICANCE_TESTS:
        raise UsageError(f"unknown test {name!r} (choose {', '.join(SIGNIFICANCE_TESTS)})")
    return paired_tests(name, pairs, options.zero_method, options.permutations, options.seed)


def test_description(name: str, options: CompareOptions) -> str:
    if name == "wilcoxon":
        return f"two-sided Wilcoxon signed-rank test (zero_method {options.zero_method})"
    if name == "ttest":
        return "two-sided paired t-test"
    return f"two-sided Fisher randomization test ({options.permutations} sign flips, seed {options.seed})"
