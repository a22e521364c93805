"""All pairs of k runs: one procedure, every pair's difference and test, the ANOVA, rank intervals, tied groups, letters.

:func:`all_pairs` takes per-query values aligned by :func:`evalkit.stats.paired.align`
(queries where a run has no value are left out of every run: the two-way
model needs every run on every query) and runs one all-pairs procedure of
:mod:`evalkit.stats` -- paired Tukey HSD (:mod:`~evalkit.stats.tukey`),
randomised Tukey HSD (:mod:`~evalkit.stats.randomised_tukey`), or a paired
test on every pair with a correction (:mod:`~evalkit.stats.pairwise`) -- then
derives what a leaderboard needs to say which ranks are real: each run's
simultaneous rank interval and bootstrap rank interval
(:mod:`~evalkit.stats.rank_intervals`), the runs tied with the top, and
compact letters (:mod:`~evalkit.stats.letters`). The two-way ANOVA table and
Sakai's ES_E of every pair come with every procedure (:mod:`~evalkit.stats.anova`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from evalkit.stats.comparison import CompareOptions
from evalkit.core.errors import UsageError
from evalkit.core.progress import progress
from evalkit.stats import ALL_PAIRS_PROCEDURES, PairTable
from evalkit.stats.anova import TwoWayAnova, two_way_anova
from evalkit.stats.correction import CORRECTIONS, FAMILYWISE
from evalkit.stats.paired import PairedValues

PROCEDURES = ALL_PAIRS_PROCEDURES
TUKEY_PROCEDURES = ("tukey", "randomised-tukey")
DEFAULT_PROCEDURE = "randomised-tukey"


def resolve_procedure(name: str | None, n_runs: int) -> str | None:
    """The procedure to run: ``auto`` is the default procedure with three or more runs, none with two; ``none``/None: none."""
    if name is None or name == "none":
        return None
    if name == "auto":
        return DEFAULT_PROCEDURE if n_runs >= 3 else None
    return name


@dataclass(frozen=True)
class AllPairsOptions:
    procedure: str = DEFAULT_PROCEDURE
    correction: str = "holm"  # for the paired tests; the Tukey procedures are family-wise by construction
    alpha: float = 0.05
    permutations: int = 10_000  # randomised Tukey HSD and the randomization test
    bootstrap: int = 10_000  # resamples of the queries: bootstrap rank intervals (and the paired tests' intervals)
    seed: int = 42
    zero_method: str = "wilcox"

    def check(self) -> None:
        if self.procedure not in PROCEDURES:
            raise UsageError(f"unknown all-pairs procedure {self.procedure!r} (choose {', '.join(PROCEDURES)})")
        CompareOptions(self.zero_method, self.permutations, self.bootstrap, "percentile", 0.95, self.seed, self.correction,
                       self.alpha).check()

    @property
    def tukey(self) -> bool:
        return self.procedure in TUKEY_PROCEDURES

    @property
    def familywise(self) -> bool:
        """Whether the procedure controls the family-wise error rate (so the rank intervals hold jointly)."""
        return self.tukey or self.correction in FAMILYWISE

    @property
    def correction_used(self) -> str | None:
        return None if self.tukey else self.correction

    @property
    def random_draws(self) -> int | None:
        return self.permutations if self.procedure in ("randomised-tukey", "randomization") else None


@dataclass(frozen=True)
class PairResult:
    first: str
    second: str
    difference: float  # mean(first) - mean(second)
    low: float
    high: float
    p_value: float  # the pair on its own
    p_adjusted: float  # accounting for every pair
    significant: bool
    es_e: float  # Sakai's ES_E: difference / sqrt(V_E)

    def as_dict(self) -> dict[str, Any]:
        return {"run_a": self.first, "run_b": self.second, "difference": self.difference, "interval": [self.low, self.high],
                "p_value": self.p_value, "p_adjusted": self.p_adjusted, "significant": self.significant, "es_e": self.es_e}


@dataclass(frozen=True)
class RunRanks:
    name: str
    mean: float
    rank_interval: tuple[int, int]  # from the procedure
    bootstrap_interval: tuple[int, int]
    tied_with_top: bool
    letters: str

    @property
    def label(self) -> str:
        """The rank interval as a leaderboard shows it: ``3`` or ``1-3``."""
        low, high = self.rank_interval
        return str(low) if low == high else f"{low}-{high}"

    @property
    def bootstrap_label(self) -> str:
        low, high = self.bootstrap_interval
        return str(low) if low == high else f"{low}-{high}"

    def as_dict(self) -> dict[str, Any]:
        return {"run": self.name, "mean": self.mean, "rank_interval": list(self.rank_interval),
                "bootstrap_rank_interval": list(self.bootstrap_interval), "tied_with_top": self.tied_with_top, "letters": self.letters}


@dataclass
class AllPairs:
    metric: str  # the per-query values compared
    options: AllPairsOptions
    n_queries: int  # queries every run has a value for
    left_out: int  # queries left out (a run had no value)
    anova: TwoWayAnova
    pairs: list[PairResult]
    runs: list[RunRanks]  # in the order of the runs given
    notes: list[str] = field(default_factory=list)

    @property
    def top_group(self) -> list[str]:
        return [r.name for r in self.runs if r.tied_with_top]

    def run(self, name: str) -> RunRanks:
        return next(r for r in self.runs if r.name == name)

    def runs_frame(self):
        """One row per run (pandas): mean, rank interval, bootstrap rank interval, letters, tied with #1."""
        from evalkit.core.errors import require

        pd = require("pandas", "AllPairs.runs_frame() (a DataFrame)")

        return pd.DataFrame([{"run": r.name, "mean": r.mean, "rank_low": r.rank_interval[0], "rank_high": r.rank_interval[1],
                              "bootstrap_low": r.bootstrap_interval[0], "bootstrap_high": r.bootstrap_interval[1],
                              "letters": r.letters, "tied_with_top": r.tied_with_top} for r in self.runs]).set_index("run")

    def pairs_frame(self):
        """One row per pair (pandas): difference, interval, raw and adjusted p-value, significance, ES_E."""
        from evalkit.core.errors import require

        pd = require("pandas", "AllPairs.pairs_frame() (a DataFrame)")

        return pd.DataFrame([{"run_a": p.first, "run_b": p.second, "difference": p.difference, "low": p.low, "high": p.high,
                              "p_value": p.p_value, "p_adjusted": p.p_adjusted, "significant": p.significant, "es_e": p.es_e}
                             for p in self.pairs])

    def interval_kind(self) -> str:
        o = self.options
        confidence = f"{1 - o.alpha:.0%}"
        if o.procedure == "tukey":
            return f"simultaneous {confidence} Tukey HSD interval (qtukey on {self.anova.df_residual} df)"
        if o.procedure == "randomised-tukey":
            return f"simultaneous {confidence} interval: difference +- the critical range of the {o.permutations:,} permuted run-mean ranges"
        if o.correction in FAMILYWISE:
            return (f"simultaneous {confidence} by Bonferroni: percentile bootstrap interval at {1 - o.alpha / max(len(self.pairs), 1):.4%} "
                    f"({o.bootstrap:,} resamples of the queries, seed {o.seed})")
        return f"per-pair {confidence} percentile bootstrap interval ({o.bootstrap:,} resamples of the queries, seed {o.seed}), not simultaneous"

    def description(self) -> list[str]:
        """What was done, printed with every result: procedure, correction, alpha, B, seed, and how to read the ranks."""
        o, k = self.options, len(self.runs)
        if o.tukey:
            family = f"family-wise over the {len(self.pairs)} pairs by construction"
        elif o.correction == "none":
            family = f"no correction over the {len(self.pairs)} pairs"
        else:
            family = f"{o.correction} correction over the {len(self.pairs)} pairs ({CORRECTIONS[o.correction]})"
        draws = f", {o.permutations:,} permutations, seed {o.seed}" if o.random_draws else ""
        zero = f", zero_method {o.zero_method}" if o.procedure == "wilcoxon" else ""
        lines = [
            f"all pairs: {PROCEDURES[o.procedure]}{zero}{draws}; on per-query {self.metric} of {k} runs x {self.n_queries} queries; "
            f"{family}; significant when p_adjusted < alpha = {o.alpha}",
            f"interval of a difference: {self.interval_kind()}",
            "rank interval: [1 + runs significantly better, k - runs significantly worse] "
            + ("(simultaneous: all hold together with probability >= " f"{1 - o.alpha:.0%})" if o.familywise
               else "(not simultaneous: the correction controls the false discovery rate, or none)"),
            f"bootstrap rank interval: the {o.alpha / 2:.1%} and {1 - o.alpha / 2:.1%} quantiles of each run's rank over "
            f"{o.bootstrap:,} resamples of the queries, seed {o.seed} (each holds on its own, not jointly)",
            "tied with #1: the run with the highest mean and every run not significantly different from it; "
            "letters: runs sharing a letter are not significantly different (Piepho 2004)",
            f"two-way ANOVA (score ~ run + query): runs explain {self.anova.row('system').share:.1%} of the variance, "
            f"queries {self.anova.row('topic').share:.1%}, residual {self.anova.row('residual').share:.1%}; "
            f"ES_E = difference / sqrt(V_E), V_E = {self.anova.residual_variance:.6g} (Sakai 2014)",
        ]
        return lines + self.notes

    def as_dict(self) -> dict[str, Any]:
        o = self.options
        return {
            "procedure": o.procedure,
            "description": PROCEDURES[o.procedure],
            "metric": self.metric,
            "alpha": o.alpha,
            "correction": o.correction_used,
            "permutations": o.random_draws,
            "bootstrap_resamples": o.bootstrap,
            "seed": o.seed,
            "zero_method": o.zero_method if o.procedure == "wilcoxon" else None,
            "familywise": o.familywise,
            "interval": self.interval_kind(),
            "queries": self.n_queries,
            "queries_left_out": self.left_out,
            "anova": anova_dict(self.anova),
            "top_group": self.top_group,
            "runs": [r.as_dict() for r in self.runs],
            "pairs": [p.as_dict() for p in self.pairs],
            "notes": self.description(),
        }


def anova_dict(anova: TwoWayAnova) -> dict[str, Any]:
    rows = [{"source": r.source, "ss": r.ss, "df": r.df, "ms": r.ms, "f": r.f, "p": r.p,
             "share": r.share} for r in anova.rows]
    return {"model": "score ~ run + query (two-way ANOVA without replication)", "rows": rows,
            "residual_variance": anova.residual_variance, "df_residual": anova.df_residual}


def pair_table(matrix: np.ndarray, options: AllPairsOptions, anova: TwoWayAnova, boot_means: np.ndarray,
               advance: Callable[[int], object] | None = None) -> PairTable:
    """The procedure's :class:`~evalkit.stats.PairTable` of ``matrix`` (runs x queries, no NaN); ``advance(n)`` is told
    of the randomised Tukey HSD's replicates as they are done."""
    if options.procedure == "tukey":
        from evalkit.stats.tukey import tukey_hsd

        return tukey_hsd(matrix, options.alpha, anova)
    if options.procedure == "randomised-tukey":
        from evalkit.stats.randomised_tukey import randomised_tukey_hsd

        return randomised_tukey_hsd(matrix, options.alpha, options.permutations, options.seed, advance=advance)
    from evalkit.stats.pairwise import pairwise_table

    return pairwise_table(matrix, options.procedure, boot_means, options.correction, options.alpha, options.zero_method,
                          options.permutations, options.seed)


def by_mean(values: PairedValues, binary: PairedValues | None = None) -> tuple[PairedValues, PairedValues | None]:
    """``values`` (and ``binary``) with the runs in order of their mean, best first (equal means keep their order)."""
    order = np.argsort(-np.nanmean(values.matrix, axis=1), kind="stable")

    def reorder(v: PairedValues) -> PairedValues:
        return PairedValues(v.metric, [v.names[i] for i in order], v.query_ids, v.matrix[order])

    return reorder(values), reorder(binary) if binary is not None else None


def all_pairs(values: PairedValues, options: AllPairsOptions = AllPairsOptions(), binary: PairedValues | None = None) -> AllPairs:
    """Compare every pair of the runs of ``values`` by ``options.procedure``; McNemar uses ``binary`` (0/1 per query)."""
    from evalkit.stats.bootstrap import bootstrap_means
    from evalkit.stats.letters import compact_letters
    from evalkit.stats.mcnemar import check_binary
    from evalkit.stats.rank_intervals import better_matrix, bootstrap_rank_intervals, simultaneous_rank_intervals, tied_with_top

    options.check()
    source = values
    if options.procedure == "mcnemar":
        if binary is None:
            raise UsageError("McNemar's test needs a 0/1 outcome per query (e.g. success@1)")
        check_binary(binary.matrix, binary.metric)
        source = binary
    names = list(source.names)
    if len(names) < 2:
        raise UsageError("an all-pairs comparison needs at least two runs")
    complete = ~np.isnan(source.matrix).any(axis=0)
    matrix = np.ascontiguousarray(source.matrix[:, complete])
    if matrix.shape[1] < 2:
        raise UsageError(f"an all-pairs comparison needs at least 2 queries where every run has a {source.metric} (got {matrix.shape[1]})")
    notes = []
    left_out = int((~complete).sum())
    if left_out:
        notes.append(f"{left_out} queries where some run has no {source.metric} are left out of every run (the two-way model pairs every run on every query)")
    anova = two_way_anova(matrix)
    k = len(names)
    replicates = options.bootstrap + (options.permutations if options.procedure == "randomised-tukey" else 0)
    with progress(total=replicates, desc=f"all pairs of {k} runs ({options.procedure})", unit="replicate") as bar:
        boot_means = bootstrap_means(matrix, options.bootstrap, options.seed, advance=bar.update)
        table = pair_table(matrix, options, anova, boot_means, advance=bar.update)
    means = matrix.mean(axis=1)
    better = better_matrix(table, k, options.alpha)
    significant = table.p_adjusted < options.alpha
    pairs = [
        PairResult(names[i], names[j], float(table.difference[p]), float(table.low[p]), float(table.high[p]), float(table.p_value[p]),
                   float(table.p_adjusted[p]), bool(significant[p]), float(anova.es_e(float(table.difference[p]))))
        for p, (i, j) in enumerate(zip(table.first.tolist(), table.second.tolist()))
    ]
    apart = np.zeros((k, k), dtype=bool)
    apart[table.first[significant], table.second[significant]] = True
    letters = compact_letters(means, apart | apart.T)
    top = set(tied_with_top(means, table, options.alpha))
    ranks = simultaneous_rank_intervals(better)
    boot_ranks = bootstrap_rank_intervals(boot_means, options.alpha)
    runs = [RunRanks(names[i], float(means[i]), ranks[i], boot_ranks[i], i in top, letters[i]) for i in range(k)]
    return AllPairs(source.metric, options, matrix.shape[1], left_out, anova, pairs, runs, notes)
