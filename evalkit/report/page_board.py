"""The leaderboard part of the HTML page: ranks, values and bounds, significance marks, tied groups, files set apart.

Significance comes from the code the Markdown outputs use: markers against
the baseline from :func:`evalkit.report.document.markers` (one family per
column, corrected over the runs), tests between adjacent ranks from
:func:`evalkit.scoring.leaderboard.adjacent_tests` (corrected over the adjacent pairs).
A *tied group* is a maximal run of consecutive ranks whose adjacent tests
are all non-significant (the chain may join runs that differ
significantly end to end, so the page says so). With an all-pairs comparison
(:mod:`evalkit.stats.allpairs`, the leaderboard's default) each row also carries its
rank interval, bootstrap rank interval and letters, and the shading marks the
runs tied with #1 instead of the adjacent chains.
"""
from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from evalkit.stats.comparison import test_description
from evalkit.core.errors import UsageError
from evalkit.metrics.judgments import Bounds
from evalkit.scoring.leaderboard import Leaderboard
from evalkit.report.allpairs_output import summary as all_pairs_summary
from evalkit.report.allpairs_output import title as all_pairs_title
from evalkit.report.document import BETTER, WORSE, ReportOptions, markers
from evalkit.report.leaderboard_output import legend as adjacent_legend
from evalkit.report.leaderboard_output import single_ranks


def groups(board: Leaderboard) -> list[int]:
    """Tied-group number of each entry (0, 1, ...): a new group starts below each significant adjacent difference."""
    out: list[int] = []
    for i in range(len(board.entries)):
        if i == 0:
            out.append(0)
        else:
            out.append(out[-1] + (1 if board.adjacent[i - 1].significant else 0))
    return out


def official_components(task, score) -> list[str]:
    """The per-query metrics whose mean is the official score, when it is such a mean (ClimateCheck Subtask I)."""
    if score.official in score.evaluation.per_query:
        return []
    return [m.label for m in task.official_metrics()]


def composite_upper(columns_upper: Mapping[str, float], official_value: float, lower_means: Mapping[str, float],
                    components: Sequence[str]) -> float | None:
    """The official score's value with unjudged as relevant, when it is the mean of per-query metrics (ClimateCheck)."""
    if not components or any(c not in columns_upper or c not in lower_means for c in components):
        return None
    if not math.isclose(sum(lower_means[c] for c in components) / len(components), official_value, abs_tol=1e-9):
        return None
    return sum(columns_upper[c] for c in components) / len(components)


def baseline_legend(board: Leaderboard, baseline: str, tested: Sequence[str], columns: Sequence[str]) -> str:
    o = board.options
    n_runs = len(board.entries)
    if n_runs < 2 or not tested:
        return ""
    if n_runs == 2:
        family = "one comparison per column, so no correction"
    elif o.correction != "none":
        family = f"{o.correction.capitalize()} correction over the {n_runs - 1} runs compared in each column"
    else:
        family = "no multiple-comparison correction"
    text = (f"{BETTER} / {WORSE}: significantly higher / lower than the baseline {baseline} "
            f"({test_description(board.test, o)} on per-query values; {family}; alpha = {o.alpha}); "
            "no mark: no significant difference.")
    untested = [c for c in columns if c not in tested]
    if untested:
        text += f" Not tested (no per-query values): {', '.join(untested)}."
    return text


def board_section(
    board: Leaderboard, baseline: str, columns: Sequence[str], means: Mapping[str, Mapping[str, float]],
    bounds: Mapping[str, Bounds], official_components: Sequence[str] = (),
) -> dict[str, Any]:
    """Rows in rank order with every column's value and bound, marks against the baseline, the adjacent tests."""
    scored = [e.scored for e in board.entries]
    official = scored[0].score.official if scored else ""
    options = ReportOptions(baseline=baseline, metric=board.metric, test=board.test, compare=board.options)
    found: dict = {}
    tested: list[str] = []
    untestable = ""
    if len(scored) > 1:
        try:
            found, tested = markers(scored, options)
        except UsageError as exc:  # --missing skip with runs answering different queries: no common pairs per column
            untestable = f"No marks against the baseline: {exc.one_line()}."
    group_of = groups(board)
    rows = []
    for i, entry in enumerate(board.entries):
        name = entry.name
        upper = {label: high for label, (_, high) in bounds[name].means().items()}
        if official not in upper:
            value = composite_upper(upper, entry.scored.score.official_value, means[name], official_components)
            if value is not None:
                upper[official] = value
        test = board.adjacent[i] if i < len(board.adjacent) else None
        ranks = board.all_pairs.runs[i] if board.all_pairs else None
        rows.append({
            "name": name,
            "file": entry.file,
            "rank": entry.rank,
            "group": group_of[i],
            "baseline": name == baseline,
            "values": [means[name].get(c, math.nan) for c in columns],
            "upper": [upper.get(c, math.nan) for c in columns],
            "marks": [found.get((name, c), "") for c in columns],
            "unjudged_added": bounds[name].added,
            "rank_interval": list(ranks.rank_interval) if ranks else None,
            "bootstrap_rank_interval": list(ranks.bootstrap_interval) if ranks else None,
            "letters": ranks.letters if ranks else "",
            "tied_with_top": bool(ranks and ranks.tied_with_top),
            "vs_next": None if test is None else {
                "next": test.lower, "n": test.n, "difference": test.difference, "p": test.p_value,
                "p_adjusted": test.p_adjusted, "significant": bool(test.significant),
            },
        })
    return {
        "columns": [{"label": c, "official": c == official, "tested": c in tested} for c in columns],
        "rows": rows,
        "all_pairs": board.all_pairs.as_dict() if board.all_pairs else None,
        "legend": {
            "baseline": untestable or baseline_legend(board, baseline, tested, columns),
            "adjacent": " ".join(adjacent_legend(board)),
            "groups": groups_legend(board),
            "all_pairs": all_pairs_legend(board),
            "bounds": "Bounds: each value is computed with unjudged documents as non-relevant (the score, as everywhere "
                      "in evalkit); hover or switch on bounds for the value with every retrieved unjudged document "
                      "counted relevant (an upper bound for P@k, Success, MRR and Judged@k; for metrics divided by R "
                      "the value under that assumption).",
        },
        "not_ranked": [{"file": r.path, "problem": r.kind, "reason": r.reason} for r in board.rejected],
        "skipped": list(board.skipped),
        "notes": list(board.notes),
    }


def groups_legend(board: Leaderboard) -> str:
    if board.all_pairs:
        return ("Shaded rows: the runs tied with #1 (not significantly different from the best run by the all-pairs "
                f"comparison, {all_pairs_title(board.all_pairs)}).")
    return ("Rows sharing a shade form a tied group: consecutive ranks none of whose adjacent differences is "
            "significant (a chain: its ends may still differ significantly).")


def all_pairs_legend(board: Leaderboard) -> list[str]:
    """What the rank columns say and how they were computed: the summary, then procedure, alpha, B and seed."""
    if not board.all_pairs:
        return []
    return all_pairs_summary(board.all_pairs, single_ranks(board)) + board.all_pairs.description()
