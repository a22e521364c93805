"""A leaderboard as CSV for spreadsheets: one row per run (or per team's best run), every figure in its own column.

Names are written with a leading ``'`` where a spreadsheet would run them as
a formula (:func:`evalkit.judging.sheet.inert`, as the judging sheet does);
NaN is an empty cell; intervals as low and high columns.
"""
from __future__ import annotations

import csv
import io
import math
from typing import Sequence


def leaderboard_csv(board, rows: Sequence) -> str:
    from evalkit.judging.sheet import inert
    from evalkit.report.overview_rows import metric_labels

    labels = metric_labels(board)
    teams = bool(rows) and rows[0].team is not None
    ranked = board.all_pairs is not None
    head = ["rank"] + (["team", "runs_in_team"] if teams else []) + ["run", "file"] + labels
    if ranked:
        head += ["rank_low", "rank_high", "bootstrap_low", "bootstrap_high", "letters", "tied_with_top"]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(head)
    for row in rows:
        cells = [row.rank] + ([inert(row.team), row.runs_in_team] if teams else []) + [inert(row.name), inert(row.file)]
        cells += ["" if math.isnan(row.values[c]) else repr(float(row.values[c])) for c in labels]
        if ranked:
            cells += [*row.rank_interval, *row.bootstrap_interval, row.letters, "yes" if row.tied_with_top else "no"]
        writer.writerow(cells)
    return buffer.getvalue()
