"""Errors that the CLI turns into one clear line and exit code 2.

Every problem with user input is an :class:`InputError` carrying the file and,
where known, the 1-based line, rendered as ``FILE:LINE: message``.
"""
from __future__ import annotations


class EvalkitError(Exception):
    """Base class: a problem the user can fix; printed without a traceback."""

    exit_code = 2

    def one_line(self) -> str:
        """The message on one line, control characters from file names and ids shown escaped (never sent to the terminal)."""
        from evalkit.safetext import visible

        return visible(" ".join(str(self).split()))


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
    "spacy": "spacy", "llama_cpp": "llm", "gguf": "llm", "accelerate": "llm",
}


def missing_module_message(exc: ModuleNotFoundError) -> str:
    """One line for a feature whose library is not installed, with the install command that brings it."""
    module = (exc.name or str(exc)).split(".")[0]
    extra = EXTRA_OF_MODULE.get(module)
    from evalkit._version import DISTRIBUTION

    hint = f"pip install '{DISTRIBUTION}[{extra}]'" if extra else f"install the package that provides {module!r}"
    return f"evalkit: this needs {module!r}, which is not installed: {hint}"
