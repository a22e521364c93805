"""PNG figures for reports (matplotlib's Agg canvas, no pyplot state, imported lazily)."""
from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from evalkit._version import __version__

MAX_LEGEND_NAME = 40


def _short(name: str) -> str:
    return name if len(name) <= MAX_LEGEND_NAME else name[: MAX_LEGEND_NAME - 1] + "…"


def figure_beside(out: str | os.PathLike, kind: str) -> Path:
    """The figure written beside a report ``NAME.md`` / ``NAME.json``: ``NAME.<kind>.png``."""
    target = Path(out)
    return target.with_name(f"{target.stem}.{kind}.png")


def require_plots(feature: str = "the PNG figures of a report") -> None:
    """matplotlib, or one line naming the extra that brings it (``feature``: what asked, plural)."""
    from evalkit.core.errors import require

    require("matplotlib", feature, verb="need")


def _figure(width: float, height: float):
    require_plots()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=110)
    FigureCanvasAgg(figure)
    return figure


def _png(figure, title: str) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", bbox_inches="tight", metadata={"Software": f"evalkit {__version__}", "Title": title})
    return buffer.getvalue()


def grouped_bars(
    categories: Sequence[str], series: Mapping[str, Sequence[float]], title: str, xlabel: str, ylabel: str
) -> bytes:
    """One group of bars per category, one bar per series (run); returns PNG bytes."""
    n_series = max(len(series), 1)
    figure = _figure(max(7.0, 0.45 * len(categories) * min(n_series, 6) ** 0.5 + 4), 4.2 + 0.18 * n_series)
    axes = figure.add_subplot(1, 1, 1)
    x = np.arange(len(categories))
    width = 0.8 / n_series
    colours = None
    if n_series > 10:  # the default cycle repeats after 10 colours
        from matplotlib import colormaps

        colours = [colormaps["tab20"](i % 20) for i in range(n_series)]
    for i, (name, heights) in enumerate(series.items()):
        colour = colours[i] if colours else None
        axes.bar(x + (i - (n_series - 1) / 2) * width, heights, width, label=_short(name), color=colour)
    axes.set_xticks(x)
    axes.set_xticklabels(categories)
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.set_title(title)
    axes.grid(axis="y", alpha=0.3)
    axes.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=min(2, n_series), frameon=False)
    return _png(figure, title)


def rank_distribution_chart(distributions: Mapping[str, Mapping[str, int]], buckets: Sequence[str], metric_note: str = "") -> bytes:
    """Share of queries by rank of the first relevant document, per run."""
    series = {}
    for name, counts in distributions.items():
        total = sum(counts.values()) or 1
        series[name] = [100.0 * counts[b] / total for b in buckets]
    return grouped_bars(buckets, series, "Rank of the first relevant document" + metric_note, "rank", "% of queries")


def query_length_chart(labels: Sequence[str], means: Mapping[str, Sequence[float]], metric: str) -> bytes:
    """Mean metric per query-length bucket, per run."""
    return grouped_bars(labels, means, f"{metric} by query length", "query length (whitespace tokens)", metric)


def before_after_chart(runs: Sequence[str], groups: Sequence[str], before: Sequence[float], after: Sequence[float], metric: str,
                       title: str) -> bytes:
    """One row per run (in the order given): its value with full judgments (dot) and with reduced ones (ring), joined by a
    line, coloured by group."""
    from matplotlib import colormaps

    n = len(runs)
    figure = _figure(9.0, 1.4 + 0.3 * max(n, 1))
    axes = figure.add_subplot(1, 1, 1)
    y = np.arange(n)[::-1]
    names = list(dict.fromkeys(groups))
    palette = colormaps["tab10" if len(names) <= 10 else "tab20"]
    colour = {g: palette(i % palette.N) for i, g in enumerate(names)}
    for row, a, b in zip(y, before, after):
        axes.plot([a, b], [row, row], color="0.6", linewidth=1.2, zorder=1)
    for group in names:
        rows = [i for i, g in enumerate(groups) if g == group]
        axes.scatter([before[i] for i in rows], y[rows], color=colour[group], s=30, zorder=2, label=_short(group))
        axes.scatter([after[i] for i in rows], y[rows], facecolors="white", edgecolors=colour[group], s=46, linewidths=1.5, zorder=3)
    axes.set_yticks(y)
    axes.set_yticklabels([_short(r) for r in runs], fontsize="small")
    axes.set_xlabel(f"{metric}   (dot: full judgments; ring: without the unique documents of the run's group)")
    axes.set_title(title)
    axes.grid(axis="x", alpha=0.3)
    axes.legend(title="group", fontsize="small", loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    return _png(figure, title)


def rank_scatter(runs: Sequence[str], ranks_a: Sequence[int], ranks_b: Sequence[int], label_a: str, label_b: str, title: str) -> bytes:
    """Each run at (its rank under A, its rank under B), labelled; the diagonal is where the two rankings agree."""
    n = max(len(runs), 1)
    figure = _figure(6.5, 6.0)
    axes = figure.add_subplot(1, 1, 1)
    axes.plot([0.5, n + 0.5], [0.5, n + 0.5], color="0.7", linewidth=1, zorder=1)
    moved = [a != b for a, b in zip(ranks_a, ranks_b)]
    axes.scatter(ranks_a, ranks_b, c=["tab:red" if m else "tab:blue" for m in moved], s=28, zorder=2)
    for name, a, b in zip(runs, ranks_a, ranks_b):
        axes.annotate(_short(name), (a, b), textcoords="offset points", xytext=(4, 3), fontsize="x-small")
    axes.set_xlim(0.5, n + 0.5)
    axes.set_ylim(n + 0.5, 0.5)  # rank 1 at the top
    ticks = list(range(1, n + 1, max(1, n // 15)))
    axes.set_xticks(ticks)
    axes.set_yticks(ticks)
    axes.set_xlabel(f"rank under {label_a}")
    axes.set_ylabel(f"rank under {label_b}")
    axes.set_title(title)
    axes.grid(alpha=0.3)
    return _png(figure, title)
