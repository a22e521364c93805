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
import math
from pathlib import Path
from typing import Any, ClassVar, Mapping, Sequence

from evalkit.corpus import Corpus, Queries
from evalkit.data import Qrels, Run
from evalkit.errors import InputError, UsageError


DEFAULT_RERANK_DEPTH = 100  # every reranker's default top-k to re-score (a system's own `depth` option overrides it)
DEFAULT_LABEL_DEPTH = 10  # labelers label a submission's depth (ClimateCheck: 10 per claim)


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
                f"unknown option {unknown[0]!r} for system {getattr(self, 'name', type(self).__qualname__)} (known: {', '.join(sorted(known)) or 'none'})"
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
    """A reranker implements the model, the base class the plumbing (after the ``rerankers`` library).

    A plugin implements :meth:`score` (``score(query, texts) -> one float per
    text``), or :meth:`score_pairs` to batch across queries. :meth:`rerank`
    owns the rest: the fields check, each query's top ``depth`` candidates by
    the ranking rule, document texts, the model call, and the merge (the
    re-scored top ``depth`` above the rest of the ranking, kept in order).
    Listwise or composite rerankers (RankGPT, the ensemble) override
    :meth:`rerank` itself.
    """

    kind = "reranker"
    default_depth: ClassVar[int] = DEFAULT_RERANK_DEPTH
    default_fields: ClassVar[tuple[str, ...]] = ("title", "text")

    def score(self, query: str, texts: list[str]) -> list[float]:
        """The model: one relevance score per text (higher is better). Plugins implement this."""
        raise UsageError(f"reranker {getattr(self, 'name', type(self).__name__)!r} implements neither score(query, texts) "
                         "nor score_pairs(queries, texts)")

    def score_pairs(self, queries: Sequence[str], texts: Sequence[str]) -> list[float]:
        """Scores of ``(queries[i], texts[i])`` in input order: the ONE place model calls go through
        (an engine may distribute exactly this call). Default: :meth:`score` once per query, in order."""
        scores: list[float] = [0.0] * len(texts)
        start = 0
        while start < len(queries):
            end = start
            while end < len(queries) and queries[end] == queries[start]:
                end += 1
            values = list(self.score(queries[start], list(texts[start:end])))
            if len(values) != end - start:
                raise UsageError(f"reranker {self.name!r}: score() returned {len(values)} scores for {end - start} texts")
            scores[start:end] = values
            start = end
        return scores

    def pair_order(self, queries: Sequence[str], texts: Sequence[str]) -> list[int]:
        """The order :meth:`score_pairs` processes pairs in (an engine keeps it; e.g. by length): default as given."""
        return list(range(len(texts)))

    def model_batch_size(self) -> int:
        """Pairs per model call; engines cut work at multiples of it so every batch is the local one."""
        return int(getattr(self.options, "eval_batch_size", None) or getattr(self.options, "batch_size", None) or 32)

    def fingerprint(self) -> str:
        """What besides the options decides the scores (trained weights): part of engine checkpoint keys."""
        return ""

    engine: Any = None  # set by the pipeline; None: score in this process

    def text_fields(self) -> tuple[str, ...]:
        return tuple(getattr(self.options, "fields", None) or self.default_fields)

    def rerank_depth(self, depth: int | None) -> int:
        return int(depth or getattr(self.options, "depth", None) or self.default_depth)

    def rerank(self, corpus: Corpus, queries: Queries, run: Run, depth: int | None = None) -> Run:
        """``run`` with each query's top ``depth`` re-scored by :meth:`score_pairs`, the rest kept below in order."""
        depth = self.rerank_depth(depth)
        fields = self.text_fields()
        check_fields(corpus, fields)
        candidates = rerank_candidates(queries, run, depth, corpus, self.name)
        text, qtext = doc_text_lookup(corpus, fields), queries.as_dict()
        keys = [(q, d) for q, docs in candidates.items() for d in docs]
        from evalkit.engine import LOCAL

        scores = (self.engine or LOCAL).score_pairs(self, [qtext[q] for q, _ in keys], [text(d) for _, d in keys])
        if len(scores) != len(keys):
            raise UsageError(f"reranker {self.name!r}: {len(scores)} scores for {len(keys)} pairs")
        reranked: dict[str, dict[str, float]] = {q: {} for q in candidates}
        for (q, d), value in zip(keys, scores):
            value = float(value)
            if not math.isfinite(value):
                raise UsageError(f"reranker {self.name!r}: score {value} for query {q!r}, document {d!r} is not finite")
            reranked[q][d] = value
        return merge_reranked(run, reranked, depth).with_name(self.name)


class Labeler(System):
    """A labeler implements the model (:meth:`label_pairs`), the base class the plumbing (:meth:`label`).

    ``label_pairs(claims, texts, query_ids)`` returns one label per pair
    (Supports / Refutes / Not Enough Information); :meth:`label` owns the
    fields check, each query's top ``depth`` by the ranking rule, the texts,
    and writing the labels onto the run.
    """

    kind = "labeler"
    default_depth: ClassVar[int] = DEFAULT_LABEL_DEPTH
    default_fields: ClassVar[tuple[str, ...]] = ("title", "text")

    def label_pairs(self, claims: Sequence[str], texts: Sequence[str], query_ids: Sequence[str]) -> list[str]:
        """The model: one label per (claim, text) pair, in input order. Plugins implement this."""
        raise UsageError(f"labeler {getattr(self, 'name', type(self).__name__)!r} does not implement label_pairs(claims, texts, query_ids)")

    def text_fields(self) -> tuple[str, ...]:
        return tuple(getattr(self.options, "fields", None) or self.default_fields)

    def label(self, corpus: Corpus, queries: Queries, run: Run, depth: int | None = None) -> Run:
        """``run`` with a label on each query's top ``depth`` documents (the ranking unchanged)."""
        depth = int(depth or getattr(self.options, "depth", None) or self.default_depth)
        fields = self.text_fields()
        check_fields(corpus, fields)
        candidates = rerank_candidates(queries, run, depth, corpus, self.name)
        claim, text = queries.as_dict(), doc_text_lookup(corpus, fields)
        keys = [(q, d) for q, docs in candidates.items() for d in docs]
        labels = self.label_pairs([claim[q] for q, _ in keys], [text(d) for _, d in keys], [q for q, _ in keys])
        if len(labels) != len(keys):
            raise UsageError(f"labeler {self.name!r}: {len(labels)} labels for {len(keys)} pairs")
        return labelled_run(run, candidates, labels, f"{run.name}+{self.name}")


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


def doc_text_lookup(corpus: Corpus, fields: Sequence[str]):
    """``doc id -> text of the chosen fields`` (KeyError-free: unknown ids give '')."""
    position = corpus.position()

    def text(doc: str) -> str:
        index = position.get(doc)
        return "" if index is None else corpus.text(index, fields)

    return text


def check_fields(corpus: Corpus, fields: Sequence[str]) -> None:
    if not any(f in corpus.fields for f in fields):
        raise UsageError(f"none of the fields {list(fields)} is in the corpus (it has: {', '.join(corpus.field_names)})")


def labelled_run(run: Run, candidates: Mapping[str, Sequence[str]], labels: Sequence[str], name: str) -> Run:
    """The top-``depth`` rows of ``run`` (``candidates``, their scores kept) with one label each."""
    scores = run.to_scores()
    qids = [q for q, docs in candidates.items() for _ in docs]
    docs = [d for ranked in candidates.values() for d in ranked]
    values = [scores[q][d] for q, d in zip(qids, docs)]
    return Run.from_rows(qids, docs, values, labels=list(labels), name=name)


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
