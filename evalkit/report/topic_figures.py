"""The overview paper's per-topic figures (matplotlib's Agg and PDF canvases, no pyplot state, imported lazily).

* :func:`topic_range_figure`: for each topic the best, median and worst score
  over the runs (topics sorted by their median, best first), the chosen run
  overlaid: where it stands on each topic.
* :func:`heatmap_figure`: runs (rows, in rank order) x topics (columns, in the
  same order), each cell the run's score on the topic.

Run names are shown as text (controls made visible, ``$`` never starts
matplotlib's mathtext). PDFs carry no creation date: the same inputs give the same bytes.
"""
from __future__ import annotations

import io
from typing import Sequence

import numpy as np

from evalkit._version import __version__

MAX_NAME = 40
MAX_NAMED_ROWS = 60  # heatmap rows labelled by name; beyond, by rank


def label(name: str) -> str:
    """A run name as a figure shows it: visible, shortened, ``$`` escaped (no mathtext)."""
    from evalkit.core.safetext import visible

    text = visible(name)
    text = text if len(text) <= MAX_NAME else text[: MAX_NAME - 1] + "…"
    return text.replace("$", r"\$")


def _figure(width: float, height: float):
    from evalkit.report.figures import require_plots

    require_plots("the per-topic figures of `evalkit leaderboard --figures`")
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=120)


def _save(figure, title: str, fmt: str) -> bytes:
    buffer = io.BytesIO()
    if fmt == "pdf":
        from matplotlib.backends.backend_pdf import FigureCanvasPdf

        FigureCanvasPdf(figure)
        metadata = {"Creator": f"evalkit {__version__}", "Title": title, "CreationDate": None}
    else:
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        FigureCanvasAgg(figure)
        metadata = {"Software": f"evalkit {__version__}", "Title": title}
    import warnings

    with warnings.catch_warnings():  # a name's character the font has no glyph for is drawn as a box: no warning each time
        warnings.filterwarnings("ignore", message="Glyph .* missing from font")
        figure.savefig(buffer, format=fmt, bbox_inches="tight", metadata=metadata)
    return buffer.getvalue()


def topic_order(matrix: np.ndarray) -> np.ndarray:
    """Topics by their median over the runs, best first; ties by the best run's score, the worst's, the mean, the position."""
    median, mean = np.median(matrix, axis=0), matrix.mean(axis=0)
    return np.lexsort((np.arange(matrix.shape[1]), -mean, -matrix.min(axis=0), -matrix.max(axis=0), -median))


def topic_range_figure(matrix: np.ndarray, names: Sequence[str], highlight: str, metric: str, fmt: str = "png") -> bytes:
    """Best / median / worst per topic over the runs, ``highlight`` overlaid (PNG or PDF bytes)."""
    order = topic_order(matrix)
    x = np.arange(1, matrix.shape[1] + 1)
    values = matrix[:, order]
    figure = _figure(10, 4.2)
    axes = figure.add_subplot(1, 1, 1)
    axes.fill_between(x, values.min(axis=0), values.max(axis=0), step="mid", color="#9ecae1", lw=0, label="best to worst run")
    axes.plot(x, np.median(values, axis=0), drawstyle="steps-mid", color="#08306b", lw=1.6, label="median run")
    chosen = values[list(names).index(highlight)]
    axes.scatter(x, chosen, s=6 if len(x) > 200 else 14, color="#d62728", zorder=3, label=label(highlight))
    axes.set_xlim(0.5, len(x) + 0.5)
    axes.set_xlabel(f"topic (sorted by the median over {len(names)} runs)")
    axes.set_ylabel(metric)
    title = f"Per-topic {metric}: best, median and worst run, {label(highlight)} marked"
    axes.set_title(title, fontsize="medium")
    axes.legend(fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=3, frameon=False)
    axes.grid(axis="y", alpha=0.3)
    return _save(figure, title, fmt)


def heatmap_figure(matrix: np.ndarray, names: Sequence[str], metric: str, fmt: str = "png") -> bytes:
    """Runs x topics heatmap of per-topic scores (rows in rank order, topics as in :func:`topic_range_figure`)."""
    order = topic_order(matrix)
    k = len(names)
    figure = _figure(10, min(2 + 0.22 * k, 14))
    axes = figure.add_subplot(1, 1, 1)
    image = axes.imshow(matrix[:, order], aspect="auto", interpolation="nearest", cmap="viridis", vmin=float(np.min(matrix)),
                        vmax=float(np.max(matrix)))
    if k <= MAX_NAMED_ROWS:
        axes.set_yticks(range(k))
        axes.set_yticklabels([f"{i + 1}. {label(n)}" for i, n in enumerate(names)], fontsize="x-small")
    else:
        axes.set_ylabel("run (by rank)")
    axes.set_xlabel(f"topic (sorted by the median over {k} runs)")
    title = f"Per-topic {metric} of every run"
    axes.set_title(title, fontsize="medium")
    figure.colorbar(image, ax=axes, label=metric, fraction=0.03, pad=0.01)
    return _save(figure, title, fmt)


def board_figures(board, highlight: str) -> list[bytes]:
    """topics.png, topics.pdf, heatmap.png, heatmap.pdf of a leaderboard (its tested metric)."""
    from evalkit.report.overview_rows import board_matrix

    names, _, matrix = board_matrix(board)
    if matrix.shape[1] == 0:
        from evalkit.core.errors import UsageError

        raise UsageError(f"no topic has a {board.metric} value for every run: no per-topic figure to draw")
    return [topic_range_figure(matrix, names, highlight, board.metric, "png"), topic_range_figure(matrix, names, highlight, board.metric, "pdf"),
            heatmap_figure(matrix, names, board.metric, "png"), heatmap_figure(matrix, names, board.metric, "pdf")]
