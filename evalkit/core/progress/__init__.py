"""Progress of long steps: one helper for every command and system (:func:`progress`).

On a terminal (stderr a TTY) a step shows a tqdm bar (what, n of total, rate,
time left), cleared when it ends. Written to a pipe or a file (CI logs,
``nohup``), a step prints plain lines instead, never carriage returns::

    [evalkit] ce train BCE, phase 2 of 4: 310/1,240 batch (25%), 4.2 batch/s, 1:14 elapsed, ~3:41 left, loss 0.4127

a line when the step reaches a new tenth of its total, at most every
``MIN_SECONDS``, and one at least every ``HEARTBEAT_SECONDS`` while it
advances; a step that ends within ``MIN_SECONDS`` prints nothing, one that
printed ends with a ``done`` line. ``EVALKIT_PROGRESS`` = ``bar``, ``plain``
or ``off`` forces a mode (``auto``, the default, picks by the stream). Where
no bar is shown, the model libraries' own bars are turned off as well
(:func:`quiet_library_bars`, called when the built-in systems load).
"""
from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any, Callable, Iterable, Iterator, TextIO

from evalkit.core.progress.lines import line_of

ENV = "EVALKIT_PROGRESS"
MODES = ("auto", "bar", "plain", "off")
MIN_SECONDS = 5.0  # plain lines: never more often (the last one aside)
HEARTBEAT_SECONDS = 30.0  # plain lines: at least this often while the step advances


def mode_for(stream: Any, enabled: bool = True) -> str:
    """``bar`` (a terminal), ``plain`` (a pipe or a file) or ``off``; ``EVALKIT_PROGRESS`` overrides ``auto``."""
    if not enabled:
        return "off"
    chosen = os.environ.get(ENV, "auto").strip().lower()
    if chosen in ("bar", "plain", "off"):
        return chosen
    try:
        return "bar" if stream.isatty() else "plain"
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return "plain"


class Progress:
    """A step's progress: iterate over it, or :meth:`update` it, inside ``with`` (or :meth:`close` it)."""

    def __init__(self, iterable: Iterable | None = None, *, total: int | None = None, desc: str = "", unit: str = "it",
                 enabled: bool = True, stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        if total is None and iterable is not None and hasattr(iterable, "__len__"):
            total = len(iterable)  # type: ignore[arg-type]
        self.iterable, self.total, self.desc, self.unit = iterable, total, desc, unit
        self.stream = stream if stream is not None else sys.stderr
        self.mode = mode_for(self.stream, enabled)
        self.clock = clock
        self.n, self.postfix, self.lines, self.tenth, self.closed = 0, "", 0, 0, False
        self.started = self.last = clock()
        self.bar = None
        self._lock = threading.Lock()  # updates may come from worker threads (an LLM backend's answers)
        if self.mode == "bar":
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=desc, unit=unit, leave=False, file=self.stream, dynamic_ncols=True,
                            disable=False)  # ours: never TQDM_DISABLE's default (quiet_library_bars)

    def __iter__(self) -> Iterator:
        assert self.iterable is not None, "Progress(iterable) to iterate"
        try:
            for item in self.iterable:
                yield item
                self.update(1)
        finally:
            self.close()

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def update(self, n: int = 1) -> None:
        """``n`` more units done."""
        with self._lock:
            self._update(n)

    def _update(self, n: int) -> None:
        self.n += n
        if self.bar is not None:
            self.bar.update(n)
        elif self.mode == "plain":
            now = self.clock()
            tenth = int(10 * self.n / self.total) if self.total else 0
            since = now - self.last
            if since >= HEARTBEAT_SECONDS or (since >= MIN_SECONDS and tenth > self.tenth):
                self._print(now)
                self.tenth = tenth

    def set_postfix(self, **values: Any) -> None:
        """What the step reports beside its count (``loss=0.41``): in the bar, and at the end of each plain line."""
        self.postfix = ", ".join(f"{key} {value}" for key, value in values.items())
        if self.bar is not None:
            self.bar.set_postfix(**values)

    def set_description(self, desc: str) -> None:
        self.desc = desc
        if self.bar is not None:
            self.bar.set_description(desc)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.bar is not None:
            self.bar.close()
        elif self.mode == "plain" and self.lines:
            self._print(self.clock(), done=True)

    def _print(self, now: float, done: bool = False) -> None:
        text = line_of(self.desc, self.n, self.total, self.unit, now - self.started, self.postfix, done)
        try:
            print(text, file=self.stream, flush=True)
        except (OSError, ValueError):  # a reader that went away: progress is never worth failing for
            self.mode = "off"
        self.lines += 1
        self.last = now


def progress(iterable: Iterable | None = None, *, total: int | None = None, desc: str = "", unit: str = "it", enabled: bool = True,
             stream: TextIO | None = None) -> Progress:
    """The progress of one step (a bar on a terminal, plain lines elsewhere, nothing when not ``enabled``)."""
    return Progress(iterable, total=total, desc=desc, unit=unit, enabled=enabled, stream=stream)


def shows_bars(stream: TextIO | None = None) -> bool:
    """Whether a live bar is shown (for a library with its own bars, e.g. ranx's ``show_progress``)."""
    return mode_for(stream if stream is not None else sys.stderr) == "bar"


def quiet_library_bars(stream: TextIO | None = None) -> None:
    """Where no bar is shown (a pipe, a file), the model libraries' own tqdm bars off too ("Loading weights", downloads).

    Sets ``HF_HUB_DISABLE_PROGRESS_BARS`` and ``TQDM_DISABLE`` unless the user set them, and turns off the bars
    of transformers and huggingface_hub where they are already imported. On a terminal nothing changes.
    """
    if mode_for(stream if stream is not None else sys.stderr) == "bar":
        return
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TQDM_DISABLE", "1")
    hub = sys.modules.get("huggingface_hub.utils")
    if hub is not None and hasattr(hub, "disable_progress_bars"):
        hub.disable_progress_bars()
    logging = sys.modules.get("transformers.utils.logging")
    if logging is not None and hasattr(logging, "disable_progress_bar"):
        logging.disable_progress_bar()


__all__ = ["HEARTBEAT_SECONDS", "MIN_SECONDS", "Progress", "line_of", "mode_for", "progress", "quiet_library_bars", "shows_bars"]
