"""The kinds of pipeline stage every system is.

* :class:`Retriever` -- corpus + queries -> scored :class:`~evalkit.data.Run` (top k).
* :class:`Reranker` -- corpus + queries + run -> run whose top ``depth`` is re-scored.
* :class:`Labeler` -- corpus + queries + run -> the same ranking with a label per
  (query, document) in its top ``depth`` (claim verification: Supports /
  Refutes / Not Enough Information), ``Run.labels``.

Options are a dataclass ``Options`` on each system (defaults, types and a
``help`` text in the field metadata), so the CLI can list them and coerce
``--set key=value``. Learnable systems implement :meth:`System.fit` and
save/load to a folder. System modules must not import torch or transformers
at import time: import them inside methods.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, ClassVar

from evalkit.corpus import Corpus, Queries
from evalkit.data import Qrels, Run
from evalkit.errors import InputError, UsageError


@dataclasses.dataclass
class NoOptions:
    """A system without options."""


def option(default: Any, help: str, **kwargs) -> Any:
    """A dataclass field with a help text: ``k1: float = option(1.5, "BM25 term saturation")``."""
    if isinstance(default, (list, dict)):
        return dataclasses.field(default_factory=lambda: type(default)(default), metadata={"help": help}, **kwargs)
    return dataclasses.field(default=default, metadata={"help": help}, **kwargs)


class System:
    """Base class of registered systems (see :mod:`evalkit.registry`)."""

    name: ClassVar[str]
    kind: ClassVar[str]  # "retriever", "reranker" or "labeler"
    description: ClassVar[str] = ""
    Options: ClassVar[type] = NoOptions
    learnable: ClassVar[bool] = False

    def __init__(self, **options: Any) -> None:
        known = {f.name for f in dataclasses.fields(self.Options)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise UsageError(
                f"unknown option {unknown[0]!r} for system {self.name} (known: {', '.join(sorted(known)) or 'none'})"
            )
        self.options = self.Options(**options)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.options})"

    def config(self) -> dict[str, Any]:
        """Name and options, for manifests."""
        return {"system": self.name, "options": dataclasses.asdict(self.options)}

    # ------------------------------------------------------------- learning
    def fit(self, corpus: Corpus, queries: Queries, qrels: Qrels, first_stage: Run | None = None) -> "System":
        raise UsageError(f"system {self.name} is not trainable")

    def save(self, folder: str | Path) -> Path:
        """Write options (and, in learnable systems, weights) to ``folder``."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "evalkit-system.json").write_text(json.dumps(self.config(), indent=2) + "\n")
        return folder

    @staticmethod
    def saved_config(folder: str | Path) -> dict[str, Any]:
        """The ``evalkit-system.json`` of a saved system, checked to be a JSON object (one line otherwise)."""
        from evalkit.textio import parse_json, read_input_bytes

        path = Path(folder) / "evalkit-system.json"
        if not path.exists():
            raise UsageError(f"{folder}: not a saved evalkit system (no evalkit-system.json)")
        data = parse_json(read_input_bytes(path), str(path))
        if not isinstance(data, dict):
            raise InputError(str(path), "not a saved evalkit system (expected a JSON object)")
        return data

    @classmethod
    def load(cls, folder: str | Path) -> "System":
        path = Path(folder) / "evalkit-system.json"
        data = cls.saved_config(folder)
        options = data.get("options", {})
        if not isinstance(options, dict) or not all(isinstance(k, str) and k.isidentifier() for k in options):
            raise InputError(str(path), "not a saved evalkit system (expected an object with an 'options' object)")
        try:
            return cls(**options)
        except TypeError as exc:
            raise InputError(str(path), f"options do not fit system {getattr(cls, 'name', cls.__name__)!r} ({exc})") from None


class Retriever(System):
    kind = "retriever"

    def retrieve(self, corpus: Corpus, queries: Queries, k: int = 1000) -> Run:  # pragma: no cover - abstract
        raise NotImplementedError


class Reranker(System):
    kind = "reranker"

    def rerank(self, corpus: Corpus, queries: Queries, run: Run, depth: int = 100) -> Run:  # pragma: no cover - abstract
        raise NotImplementedError


class Labeler(System):
    kind = "labeler"

    def label(self, corpus: Corpus, queries: Queries, run: Run, depth: int = 10) -> Run:  # pragma: no cover - abstract
        raise NotImplementedError


STAGE_KINDS = ("retriever", "reranker", "labeler")


def rerank_candidates(queries: Queries, run: Run, depth: int, corpus: Corpus, who: str) -> dict[str, list[str]]:
    """The top ``depth`` documents of each query of ``run`` (ranking rule order), for queries in ``queries``.

    A document the corpus lacks means the run belongs to another corpus: a
    :class:`UsageError` naming ``who`` (the system), not an empty text.
    """
    if depth <= 0:
        raise UsageError(f"{who}: depth must be positive (got {depth})")
    lists = run.to_lists(depth)
    candidates = {q: lists.get(q, []) for q in queries.ids}
    known = corpus.position()
    missing = next((d for docs in candidates.values() for d in docs if d not in known), None)
    if missing is not None:
        raise UsageError(f"{who}: document {missing!r} of run {run.name} is not in the corpus (wrong corpus?)")
    return candidates


def merge_reranked(run: Run, reranked: dict[str, dict[str, float]], depth: int) -> Run:
    """New scored run: re-scored top ``depth`` first, the rest of ``run`` below it in its old order."""
    lists = run.to_lists()
    scores: dict[str, dict[str, float]] = {}
    for query, ranked in lists.items():
        top = reranked.get(query)
        if top is None:
            continue
        rest = [d for d in ranked[depth:] if d not in top]
        floor = min(top.values(), default=0.0)
        ordered = dict(sorted(top.items(), key=lambda kv: -kv[1]))
        for offset, doc in enumerate(rest, start=1):
            ordered[doc] = floor - offset
        scores[query] = ordered
    return Run.from_scores(scores, name=run.name)
