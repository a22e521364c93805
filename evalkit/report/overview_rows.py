"""The rows of the overview-paper exports: each run, or each team's best run, with its figures and rank marks.

Teams are found as ``evalkit pool`` finds them (:mod:`evalkit.judging.groups`):
the regular expression on each run's file name, or with ``group_on="path"``
on its path inside the folder; teams are ranked by their best run.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence


@dataclass(frozen=True)
class OverviewRow:
    rank: int  # the run's rank, or its team's rank among the teams
    team: str | None
    name: str
    file: str
    values: dict[str, float]  # metric label -> value, official first
    rank_interval: tuple[int, int] | None
    bootstrap_interval: tuple[int, int] | None
    letters: str | None
    tied_with_top: bool | None
    runs_in_team: int = 1


def overview_rows(board, group_by: str | None = None, group_on: str = "name") -> list[OverviewRow]:
    """One row per run, or per team (its best run) with ``group_by``."""
    from evalkit.judging.groups import groups_of

    ranks = {r.name: r for r in board.all_pairs.runs} if board.all_pairs else {}
    teams = groups_of([e.file for e in board.entries], [e.name for e in board.entries], group_by, on=group_on) if group_by else None
    rows: list[OverviewRow] = []
    seen: dict = {}
    counts: dict = {}
    for i, entry in enumerate(board.entries):
        team = teams[i] if teams else None
        counts[team] = counts.get(team, 0) + 1
        if teams and team in seen:
            continue
        seen[team] = len(rows)
        r = ranks.get(entry.name)
        rows.append(OverviewRow(len(rows) + 1 if teams else entry.rank, team, entry.name, entry.file, dict(entry.scored.score.values),
                                r.rank_interval if r else None, r.bootstrap_interval if r else None, r.letters if r else None,
                                r.tied_with_top if r else None))
    if teams:  # teams ranked by their best run; equal best scores share a rank
        from dataclasses import replace

        official = board.entries[0].scored.score.official
        ranked: list[OverviewRow] = []
        for row in rows:
            tied = ranked and abs(row.values[official] - ranked[-1].values[official]) <= 1e-12
            ranked.append(replace(row, rank=ranked[-1].rank if tied else len(ranked) + 1, runs_in_team=counts[row.team]))
        rows = ranked
    return rows


def procedure_text(board) -> str:
    """Which all-pairs procedure, on what, at which alpha (for captions and notes)."""
    from evalkit.report.allpairs_output import title

    if not board.all_pairs:
        return ""
    return f"{title(board.all_pairs)}, on per-query {board.all_pairs.metric} over {board.all_pairs.n_queries} queries"


def metric_labels(board) -> list[str]:
    return list(board.entries[0].scored.score.values) if board.entries else []


def best_values(rows: Sequence[OverviewRow], labels: Sequence[str]) -> dict[str, float]:
    import math

    return {c: max((r.values[c] for r in rows if not math.isnan(r.values[c])), default=float("nan")) for c in labels}


def board_matrix(board):
    """The leaderboard's per-topic values of its tested metric: names, topic ids and a runs x topics matrix, in rank
    order, the topics every run has a value for."""
    import numpy as np

    from evalkit.stats.paired import align

    names = [e.name for e in board.entries]
    values = align([e.scored.score.evaluation for e in board.entries], board.metric, names,
                   common=board.entries[0].scored.score.evaluation.missing == "skip")
    keep = ~np.isnan(values.matrix).any(axis=0)
    return names, [q for q, k in zip(values.query_ids, keep.tolist()) if k], values.matrix[:, keep]
