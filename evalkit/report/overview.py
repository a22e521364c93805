"""The organiser's overview-paper exports of a leaderboard: a LaTeX table, a CSV, per-topic figures.

>>> from evalkit.leaderboard import build_leaderboard                                       # doctest: +SKIP
>>> board = build_leaderboard("runs/", "gold.tsv")                                         # doctest: +SKIP
>>> write_overview(board, latex="table.tex", csv="board.csv", figures="figs/", group_by="^[^_]+")  # doctest: +SKIP

Rows are the leaderboard's runs, or with ``group_by`` each team's best run
(teams found as ``evalkit pool`` finds them: :mod:`evalkit.judging.groups`,
the regular expression on each run's file name, or with ``group_on="path"``
on its path inside the folder). Rank intervals, letters and the tied-with-#1
mark are those of the all-pairs procedure over every run. Every file is
written through the command's output transaction with a manifest sidecar.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from evalkit.errors import UsageError


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
    rows, seen, counts = [], {}, {}
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

        official, ranked = board.entries[0].scored.score.official, []
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


def figure_paths(folder: str | os.PathLike) -> list[str]:
    """The figures written into ``folder``: per-topic range and heatmap, PNG and PDF."""
    return [os.path.join(os.fspath(folder), f"{name}.{ext}") for name in ("topics", "heatmap") for ext in ("png", "pdf")]


def targets(latex: str | None = None, csv: str | None = None, figures: str | None = None) -> list[str]:
    """Every file :func:`write_overview` writes (manifest sidecars included), to check before any work."""
    from evalkit.outputs import sidecar_of

    if latex and not latex.lower().endswith(".tex"):
        raise UsageError(f"{latex}: the LaTeX table is a .tex file; name it NAME.tex")
    if csv and not csv.lower().endswith(".csv"):
        raise UsageError(f"{csv}: name the CSV NAME.csv")
    if figures and not os.path.isdir(figures):
        raise UsageError(f"{figures}: the figures folder does not exist")
    files = [p for p in (latex, csv) if p] + (figure_paths(figures) if figures else [])
    return [x for f in files for x in (f, sidecar_of(f))]


def write_overview(board, manifest: Mapping[str, Any] | None = None, *, latex: str | None = None, csv: str | None = None,
                   figures: str | None = None, highlight: str | None = None, group_by: str | None = None, group_on: str = "name",
                   label: str = "tab:leaderboard", force: bool = False) -> list[str]:
    """Write the LaTeX table, the CSV and/or the figures of ``board``, committed together; returns the paths written."""
    from evalkit.manifest import write_sidecar
    from evalkit.outputs import atomic_write, committed_together

    if not board.entries:
        raise UsageError("no run could be ranked: nothing to export")
    rows = overview_rows(board, group_by, group_on)  # a bad pattern fails before anything is written
    chosen = None
    if figures:
        from evalkit.runset import pick_run

        chosen = pick_run(highlight, [e.name for e in board.entries], [e.file for e in board.entries], "--highlight")
    meta = {**dict(manifest or {}), "export": {"group_by": group_by, "group_on": group_on if group_by else None, "highlight": chosen}}
    written = []
    with committed_together(targets(latex, csv, figures), force):
        if latex:
            from evalkit.report.latex import leaderboard_latex

            atomic_write(latex, leaderboard_latex(board, rows, label=label), force=force)
            write_sidecar(latex, meta)
            written.append(latex)
        if csv:
            from evalkit.report.csv_export import leaderboard_csv

            atomic_write(csv, leaderboard_csv(board, rows), force=force)
            write_sidecar(csv, meta)
            written.append(csv)
        if figures:
            from evalkit.report.topic_figures import board_figures

            for path, payload in zip(figure_paths(figures), board_figures(board, chosen)):
                atomic_write(path, payload, force=force)
                write_sidecar(path, meta)
                written.append(path)
    return written


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
