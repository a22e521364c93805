"""The organiser's overview-paper exports of a leaderboard: a LaTeX table, a CSV, per-topic figures.

>>> from evalkit.scoring.leaderboard import build_leaderboard                                       # doctest: +SKIP
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
from typing import Any, Mapping

from evalkit.core.errors import UsageError


def figure_paths(folder: str | os.PathLike) -> list[str]:
    """The figures written into ``folder``: per-topic range and heatmap, PNG and PDF."""
    return [os.path.join(os.fspath(folder), f"{name}.{ext}") for name in ("topics", "heatmap") for ext in ("png", "pdf")]


def targets(latex: str | None = None, csv: str | None = None, figures: str | None = None) -> list[str]:
    """Every file :func:`write_overview` writes (manifest sidecars included), to check before any work."""
    from evalkit.io.transactions import sidecar_of

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
    from evalkit.io.manifest import write_sidecar
    from evalkit.io.transactions import atomic_write, committed_together
    from evalkit.report.overview_rows import overview_rows

    if not board.entries:
        raise UsageError("no run could be ranked: nothing to export")
    rows = overview_rows(board, group_by, group_on)  # a bad pattern fails before anything is written
    chosen = None
    if figures:
        from evalkit.scoring.runset import pick_run

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

            assert chosen is not None  # picked above whenever figures are asked for
            for path, payload in zip(figure_paths(figures), board_figures(board, chosen)):
                atomic_write(path, payload, force=force)
                write_sidecar(path, meta)
                written.append(path)
    return written
