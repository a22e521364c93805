"""A leaderboard as a LaTeX table (booktabs) for the overview paper: a document that compiles as is with pdflatex.

The table environment between the ``% evalkit table`` lines can be pasted
into a paper (it needs ``booktabs``, ``[T1]{fontenc}`` and ``textcomp``).
Columns: rank, the team (with ``group_by``), the run, the official score
(bold header), the task's other figures, the rank interval and the letters
of the all-pairs procedure; the best value per column in bold; a dagger
marks runs statistically tied with #1. The caption names the procedure and
alpha. Every name and id goes through :func:`evalkit.core.safetext.latex_text`:
a run named ``\\input{/etc/passwd}`` prints as text.
"""
from __future__ import annotations

import math
from typing import Sequence

from evalkit.core.safetext import latex_text

PREAMBLE = r"""\documentclass{article}
\usepackage[T1]{fontenc}
\usepackage[utf8]{inputenc}
\usepackage{textcomp}
\usepackage{booktabs}
\usepackage[margin=2cm,landscape]{geometry}
\begin{document}
"""


def _number(value: float, best: float) -> str:
    if math.isnan(value):
        return "--"
    text = f"{value:.4f}"
    return rf"\textbf{{{text}}}" if not math.isnan(best) and abs(value - best) <= 1e-12 else text


def _interval(interval: tuple[int, int] | None) -> str:
    if interval is None:
        return ""
    low, high = interval
    return str(low) if low == high else f"{low}--{high}"


def label_key(label: str) -> str:
    """A ``\\label`` key: letters, digits and ``: . _ -`` kept, anything else ``-`` (a key is no place for TeX text)."""
    import re

    return re.sub(r"[^A-Za-z0-9:._-]", "-", str(label)) or "tab:leaderboard"


def caption(board, rows: Sequence) -> str:
    """What the table shows, which procedure and alpha (all text escaped)."""
    from evalkit.report.overview_rows import procedure_text

    official = board.entries[0].scored.score.official
    teams = rows and rows[0].team is not None
    parts = [f"Leaderboard of {latex_text(board.task or '?')} on {board.n_gold:,} queries: "
             + (f"the best run of each of {len(rows)} teams ({len(board.entries)} runs), " if teams else f"{len(rows)} runs, ")
             + f"ranked by the official {latex_text(official)}; best value per column in bold."]
    if board.all_pairs:
        parts.append(f"Rank intervals and letters from comparing every pair of the {len(board.entries)} runs "
                     f"({latex_text(procedure_text(board))}): runs sharing a letter are not significantly different; "
                     r"$\dagger$: statistically tied with \#1.")
    return " ".join(parts)


def table(board, rows: Sequence, label: str = "tab:leaderboard") -> str:
    """The ``table`` environment alone."""
    from evalkit.report.overview_rows import best_values, metric_labels

    labels = metric_labels(board)
    best = best_values(rows, labels)
    teams = bool(rows) and rows[0].team is not None
    ranked = board.all_pairs is not None
    heads = ["Rank"] + (["Team"] if teams else []) + ["Run"]
    heads += [rf"\textbf{{{latex_text(labels[0])}}}"] + [latex_text(c) for c in labels[1:]] + (["Ranks", "Letters"] if ranked else [])
    spec = "r" + ("l" if teams else "") + "l" + "r" * len(labels) + ("rl" if ranked else "")
    lines = [r"\begin{table}[t]", r"\centering", r"\small", rf"\caption{{{caption(board, rows)}}}", rf"\label{{{label_key(label)}}}",
             rf"\begin{{tabular}}{{{spec}}}", r"\toprule", " & ".join(heads) + r" \\", r"\midrule"]
    for row in rows:
        name = latex_text(row.name) + (r"$^\dagger$" if row.tied_with_top else "")
        cells = [str(row.rank)] + ([latex_text(row.team) + (f" ({row.runs_in_team})" if row.runs_in_team > 1 else "")] if teams else [])
        cells += [name] + [_number(row.values[c], best[c]) for c in labels]
        if ranked:
            cells += [_interval(row.rank_interval), latex_text(row.letters or "")]
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines)


def leaderboard_latex(board, rows: Sequence, label: str = "tab:leaderboard") -> str:
    """A complete LaTeX document holding :func:`table` (compiles with pdflatex as is)."""
    return (PREAMBLE + "% evalkit table: from here\n" + table(board, rows, label) + "\n% evalkit table: to here\n"
            + r"\end{document}" + "\n")
