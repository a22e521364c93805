"""Topic set size design from a leaderboard: the topics the next edition needs, the power this one had.

>>> board = evalkit.scoring.leaderboard ...                                  # doctest: +SKIP
>>> design = design_from_board(board, differences=[0.05, 0.1])       # doctest: +SKIP
>>> design.as_markdown()                                             # doctest: +SKIP

The variance comes from the leaderboard's per-topic scores of its tested
metric (:mod:`evalkit.stats.topic_set_size` has the formulas): the residual
variance ``V_E`` of the two-way ANOVA over all its runs, and the paired
variance of the differences: of the two runs named by ``pair``, or
``2 V_E`` (the variance of a difference of two independent scores of
variance V_E; Sakai 2016, section 5) when no pair is named.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from evalkit.core.errors import UsageError


@dataclass(frozen=True)
class DesignRow:
    difference: float
    paired_t: int
    anova: int
    ci: int | None  # topics for an expected CI width of ``difference``


@dataclass(frozen=True)
class PairPower:
    upper: str
    lower: str
    n: int
    difference: float
    variance: float
    power: float


@dataclass(frozen=True, eq=False)
class TopicDesign:
    metric: str
    n_topics: int
    systems: int
    residual_variance: float
    paired_variance: float
    variance_from: str
    alpha: float
    power: float
    rows: list[DesignRow]
    achieved: list[PairPower]
    manifest: dict[str, Any] = field(default_factory=dict, repr=False)

    def as_dict(self) -> dict[str, Any]:
        from evalkit.stats.repro import _finite

        return {
            "metric": self.metric, "topics": self.n_topics, "systems": self.systems, "residual_variance": self.residual_variance,
            "paired_variance": self.paired_variance, "paired_variance_from": self.variance_from, "alpha": self.alpha,
            "power": self.power,
            "needed": [{"difference": r.difference, "paired_t_test": r.paired_t, "anova": r.anova, "ci_width": r.ci} for r in self.rows],
            "achieved_power": [{"upper": p.upper, "lower": p.lower, "n": p.n, "difference": p.difference, "variance": p.variance,
                                "power": _finite(p.power)} for p in self.achieved],
            "manifest": self.manifest,
        }

    def as_json(self) -> str:
        from evalkit.core import jsonout

        return jsonout.dumps(self.as_dict(), indent=2) + "\n"

    def as_markdown(self) -> str:
        from evalkit.io.manifest import manifest_markdown
        from evalkit.core.safetext import markdown_text

        lines = [f"# Topic set size design ({markdown_text(self.metric)})", "",
                 f"Pilot: {self.systems} runs x {self.n_topics} topics; residual variance V_E = {self.residual_variance:.6g} "
                 f"(two-way ANOVA without replication); paired variance {self.paired_variance:.6g} ({markdown_text(self.variance_from)}).",
                 "", f"Topics needed for power {self.power:g} at alpha {self.alpha:g} (Sakai 2016):", "",
                 f"| minimum difference | paired t-test | one-way ANOVA, {self.systems} systems | CI width <= difference |",
                 "|---|---|---|---|"]
        lines += [f"| {r.difference:g} | {r.paired_t:,} | {r.anova:,} | {r.ci:,} |" for r in self.rows]
        if self.achieved:
            lines += ["", f"Achieved power of this edition (paired t-test, alpha {self.alpha:g}, at each adjacent pair's observed difference):",
                      "", "| upper | lower | topics | difference | variance | power |", "|---|---|---|---|---|---|"]
            lines += [f"| {markdown_text(p.upper)} | {markdown_text(p.lower)} | {p.n} | {p.difference:.4f} | {p.variance:.4g} | "
                      f"{p.power:.3f} |" for p in self.achieved]
        return "\n".join(lines + ["", manifest_markdown(self.manifest), ""]) if self.manifest else "\n".join(lines + [""])


def design_from_board(board, differences: Sequence[float], power: float = 0.8, alpha: float = 0.05, systems: int | None = None,
                      pair: tuple[str, str] | None = None, manifest: dict[str, Any] | None = None) -> TopicDesign:
    """Topic set sizes for each minimum difference, and the achieved power of the board's adjacent pairs."""
    import numpy as np

    from evalkit.report.overview_rows import board_matrix
    from evalkit.scoring.runset import pick_run
    from evalkit.stats import topic_set_size as tss

    if len(board.entries) < 2:
        raise UsageError("topic set size design needs a leaderboard of at least 2 runs")
    if not differences:
        raise UsageError("give at least one minimum difference to detect, e.g. 0.05")
    names, _, matrix = board_matrix(board)
    v_e = tss.residual_variance(matrix)
    if pair is not None:
        files = [e.file for e in board.entries]
        first, second = (names.index(pick_run(p, names, files, "--pair")) for p in pair)
        variance, source = tss.paired_variance(matrix[first], matrix[second]), f"of {names[first]} - {names[second]}"
    else:
        variance, source = 2 * v_e, "2 V_E"
    m = systems or len(names)
    rows = [DesignRow(d, tss.paired_t_topics(d, variance, power, alpha), tss.anova_topics(m, d, v_e, power, alpha),
                      tss.ci_topics(d, variance, alpha)) for d in differences]
    achieved = []
    for i in range(len(names) - 1):
        a, b = matrix[i], matrix[i + 1]
        d = a - b
        achieved.append(PairPower(names[i], names[i + 1], len(d), float(np.mean(d)), float(np.var(d, ddof=1)),
                                  tss.achieved_power(a, b, alpha)))
    return TopicDesign(board.metric, int(matrix.shape[1]), len(names), v_e, variance, source, alpha, power, rows, achieved,
                       dict(manifest or {}))


def topics_needed(folder: str, gold: str, differences: Sequence[float] = (0.02, 0.05, 0.1), *, power: float = 0.8, alpha: float = 0.05,
                  systems: int | None = None, pair: tuple[str, str] | None = None, patterns: Sequence[str] = ("*",),
                  scoring=None, progress: bool = False) -> tuple[TopicDesign, list[str]]:
    """Rank the runs in ``folder`` against ``gold`` (as ``evalkit leaderboard`` does) and design the next topic set;
    returns the design (with its manifest) and the leaderboard's notes."""
    from evalkit.scoring.leaderboard import build_leaderboard
    from evalkit.io.manifest import build_manifest, input_entry
    from evalkit.core.options import ScoringOptions

    board = build_leaderboard(folder, gold, scoring=scoring or ScoringOptions(), patterns=patterns, pairs=None, progress=progress)
    notes = board.notes + [f"{r.path}: not used ({r.reason})" for r in board.rejected]
    manifest = build_manifest(
        board.task or None, [input_entry("gold", gold)] + [input_entry(f"run:{e.name}", e.scored.run.source) for e in board.entries],
        {"folder": str(folder), "glob": list(patterns), "differences": list(differences), "power": power, "alpha": alpha,
         "systems": systems, "pair": list(pair) if pair else None, "metric": board.metric},
        command="topics-needed",
    )
    return design_from_board(board, differences, power, alpha, systems, (str(pair[0]), str(pair[1])) if pair else None, manifest), notes
