"""Errors that the CLI turns into one clear line and exit code 2.

Every problem with user input is an :class:`InputError` carrying the file and,
where known, the 1-based line, rendered as ``FILE:LINE: message``.
"""
from __future__ import annotations

from typing import Any, Iterable

LINE_LIMIT = 1000  # characters of one error or warning line; the rest is cut and counted
VALUE_WIDTH = 60  # characters of one value (an id, a token, a file name) echoed in a message
LIST_WIDTH = 240  # characters of the items a message lists (then "and N more")


def shown(value: Any, width: int = VALUE_WIDTH) -> str:
    """``repr`` of a value for a message, cut to ``width`` characters and counted: ``'11111...' (30,001 characters)``."""
    text = value if isinstance(value, str) else str(value)
    if len(text) <= width:
        return repr(value) if isinstance(value, str) else text
    return f"{text[:width]!r}... ({len(text):,} characters)"


def unquoted(value: Any, width: int = VALUE_WIDTH) -> str:
    """``str`` of a value for a message (a name listed as it is), cut to ``width`` characters and counted."""
    text = str(value)
    return text if len(text) <= width else f"{text[:width]}... ({len(text):,} characters)"


def listed(items: Iterable[Any], limit: int = 5, show=shown, total: int | None = None) -> str:
    """The first ``limit`` items for a message, then how many more: ``'a', 'b', 'c' and 199,997 more``.

    At most ``LIST_WIDTH`` characters of items (at least one item, each cut by ``show``), so a message
    that lists what it found stays one short line whatever the input holds.
    ``total`` is the number of items when ``items`` is a lazy iterable (only ``limit`` of them are read).
    """
    first: list[str] = []
    count, width, full = 0, 0, False
    for item in items:
        count += 1
        if not full:
            text = show(item)
            if len(first) < limit and (not first or width + 2 + len(text) <= LIST_WIDTH):
                first.append(text)
                width += len(text) + 2
                continue
            full = True
        if total is not None:
            break
    count = count if total is None else total
    more = f" and {count - len(first):,} more" if count > len(first) else ""
    return ", ".join(first) + more


def bounded(text: str, limit: int = LINE_LIMIT) -> str:
    """One line of at most about ``limit`` characters: what is cut is counted (a last guard; messages cut their values)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... (cut: {len(text):,} characters in all)"


class EvalkitError(Exception):
    """Base class: a problem the user can fix; printed without a traceback."""

    exit_code = 2

    def one_line(self) -> str:
        """The message on one line, control characters from file names and ids shown escaped (never sent to the
        terminal), cut and counted past :data:`LINE_LIMIT` characters."""
        from evalkit.core.safetext import visible

        return bounded(visible(" ".join(str(self).split())))


class InputError(EvalkitError):
    """A file that cannot be read as what it claims to be."""

    def __init__(self, path: str, message: str, line: int | None = None):
        self.path = str(path)
        self.line = line
        self.message = message
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")


class UsageError(EvalkitError):
    """A bad option value: unknown metric, unknown task, k <= 0, ..."""


class PartialRunError(EvalkitError):
    """Run and gold cover clearly different query sets (probably a wrong split)."""


# top-level module -> the evalkit extra that installs it
EXTRA_OF_MODULE = {
    "torch": "systems", "transformers": "systems", "sentence_transformers": "systems", "rank_bm25": "systems", "Stemmer": "systems",
    "tokenizers": "systems", "sentencepiece": "systems", "ray": "ray", "onnxruntime": "onnx", "optimum": "onnx", "faiss": "faiss",
    "spacy": "spacy", "llama_cpp": "llm", "gguf": "llm", "accelerate": "llm", "ranx": "ranx", "numba": "ranx", "pyarrow": "arrow",
    "matplotlib": "plots", "pandas": "pandas",
}


class MissingExtraError(UsageError):
    """A feature whose optional library is not installed (a light install): one line naming the extra that brings it."""


def require(module: str, feature: str, verb: str = "needs") -> Any:
    """``module`` imported, or one line: ``{feature} {verb} {module}: pip install 'evalkit-ir[EXTRA]'``.

    ``feature`` names what asked, e.g. "the figures of `evalkit report`" (with ``verb="need"``); the extra is
    :data:`EXTRA_OF_MODULE`'s.
    """
    import importlib

    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] != module.split(".")[0]:
            raise  # the library is there but one of its own imports is missing: its error, not ours
        from evalkit._version import DISTRIBUTION

        top = module.split(".")[0]
        raise MissingExtraError(f"{feature} {verb} {top}: pip install '{DISTRIBUTION}[{EXTRA_OF_MODULE[top]}]'") from None


def missing_module_message(exc: ModuleNotFoundError) -> str:
    """One line for a feature whose library is not installed, with the install command that brings it."""
    module = (exc.name or str(exc)).split(".")[0]
    extra = EXTRA_OF_MODULE.get(module)
    from evalkit._version import DISTRIBUTION

    hint = f"pip install '{DISTRIBUTION}[{extra}]'" if extra else f"install the package that provides {module!r}"
    return f"evalkit: this needs {module!r}, which is not installed: {hint}"
