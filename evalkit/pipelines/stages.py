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

Every stage call (``retrieve``, ``rerank``, ``label``, ``fit``, and the
listwise hooks ``score_lists`` / ``label_pairs``) receives the execution
context as ``engine`` (:mod:`evalkit.pipelines.engine`; default: this
process); a system hands its model work to it as ``engine.run(Work(...))``
and passes it on to the systems it is made of. A plugin method written
without an ``engine`` parameter is called without it (:func:`call_stage`).

The shared plumbing (candidates, texts, merging; :mod:`evalkit.pipelines.plumbing`)
is re-exported here. ``docs/plugins.md`` is the plugin author's guide.
"""
from __future__ import annotations

import dataclasses
import inspect
import math
import numbers
from pathlib import Path
from typing import Any, ClassVar, Iterable, Sequence

from evalkit.data.corpus import Corpus, Queries
from evalkit.data import Qrels, Run
from evalkit.core.errors import InputError, UsageError
from evalkit.core.jsonout import strict
from evalkit.pipelines.engine import LOCAL, Engine, Work
from evalkit.pipelines.plumbing import Candidates, check_fields, doc_text_lookup, labelled_run, merge_reranked, rerank_candidates

__all__ = ["DEFAULT_LABEL_DEPTH", "DEFAULT_RERANK_DEPTH", "LOCAL", "STAGE_KINDS", "Candidates", "Engine", "Labeler", "NoOptions",
           "Reranker", "Retriever", "System", "Work", "call_stage", "check_fields", "doc_text_lookup", "labelled_run", "merge_reranked",
           "option", "option_fields", "rerank_candidates", "stage_depth"]


DEFAULT_RERANK_DEPTH = 100  # every reranker's default top-k to re-score (a class's `default_depth` or its `depth` option overrides it)
DEFAULT_LABEL_DEPTH = 10  # every labeler's: a submission's depth (ClimateCheck: 10 per claim)


@dataclasses.dataclass
class NoOptions:
    """A system without options."""


def option(default: Any, help: str, **kwargs) -> Any:
    """A dataclass field with a help text: ``k1: float = option(1.5, "BM25 term saturation")``."""
    if isinstance(default, (list, dict)):
        return dataclasses.field(default_factory=lambda: type(default)(default), metadata={"help": help}, **kwargs)
    return dataclasses.field(default=default, metadata={"help": help}, **kwargs)


def option_fields(cls: type) -> tuple[dataclasses.Field, ...]:
    """The option fields of system class ``cls`` (one line when its ``Options`` is not a dataclass)."""
    options = getattr(cls, "Options", NoOptions)
    if not (isinstance(options, type) and dataclasses.is_dataclass(options)):
        raise UsageError(f"system {getattr(cls, 'name', '') or cls.__qualname__}: Options must be a dataclass "
                         "(fields made with evalkit.pipelines.stages.option)")
    return dataclasses.fields(options)


class System:
    """Base class of registered systems (see :mod:`evalkit.pipelines.registry`).

    ``name`` is the registry name (default: the entry-point name; an instance of
    a class without one is named after its class); ``kind`` comes from the base
    class (:class:`Retriever`, :class:`Reranker`, :class:`Labeler`).
    """

    name: str = ""
    kind: ClassVar[str]  # "retriever", "reranker" or "labeler"
    description: ClassVar[str] = ""
    Options: ClassVar[type] = NoOptions
    learnable: ClassVar[bool] = False
    engine: Any = None  # where the model work runs (evalkit.pipelines.engine), set by the pipeline; None: this process
    distributed: ClassVar[str | None] = None  # what a distributed engine runs remotely ("": nothing; None: by kind)

    def __init__(self, **options: Any) -> None:
        if not self.name:
            self.name = type(self).__name__
        known = {f.name for f in option_fields(type(self))}
        unknown = sorted(set(options) - known)
        if unknown:
            raise UsageError(f"unknown option {unknown[0]!r} for system {self.name} (known: {', '.join(sorted(known)) or 'none'})")
        self.options = self.Options(**options)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.options})"

    def config(self) -> dict[str, Any]:
        """Name and options, for manifests."""
        return {"system": self.name, "options": dataclasses.asdict(self.options)}

    def prepare_worker(self) -> None:
        """Called once in each engine actor after the system arrives there: move an already loaded model to
        the actor's device (its ``device`` option resolved on the actor, e.g. a GPU the driver lacks)."""

    # ------------------------------------------------------------- learning
    def fit(self, corpus: Corpus, queries: Queries, qrels: Qrels, first_stage: Run | None = None, *, engine: Engine = LOCAL) -> "System":
        """Learn from ``qrels`` on ``queries`` (``first_stage``: a run on them to mine candidates from); model work on ``engine``."""
        raise UsageError(f"system {self.name} is not trainable")

    def save(self, folder: str | Path) -> Path:
        """Write options (and, in learnable systems, weights) to ``folder``."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "evalkit-system.json").write_text(strict(self.config(), str(folder / "evalkit-system.json"), indent=2) + "\n")
        return folder

    @staticmethod
    def saved_config(folder: str | Path) -> dict[str, Any]:
        """The ``evalkit-system.json`` of a saved system, checked to be a JSON object (one line otherwise)."""
        from evalkit.io.textio import parse_json, read_input_bytes

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
            raise InputError(str(path), f"options do not fit system {cls.name or cls.__name__!r} ({exc})") from None


class Retriever(System):
    """A retriever implements :meth:`retrieve`: the corpus and queries in, each query's top ``k`` as a scored run out."""

    kind = "retriever"

    def retrieve(self, corpus: Corpus, queries: Queries, k: int = 1000, *, engine: Engine = LOCAL) -> Run:
        """``{query: {doc: score}}`` for each query's best ``k`` documents (higher is better). Plugins implement this
        (model work handed to ``engine``; a plugin may leave the parameter out)."""
        raise UsageError(f"retriever {self.name!r} does not implement retrieve(corpus, queries, k)")


class Reranker(System):
    """A reranker implements the model, the base class the plumbing (after the ``rerankers`` library).

    A plugin implements ONE of the model hooks, from simplest to most general:

    * :meth:`score` -- ``score(query, texts) -> one float per text`` (pointwise:
      a text's score must not depend on the other texts in the list);
    * :meth:`score_pairs` -- ``(queries[i], texts[i])`` pairs across queries, to
      batch them (its default calls :meth:`score` once per query);
    * :meth:`score_lists` -- listwise (RankGPT) or composite (the ensemble):
      new scores for each query's whole candidate list.

    :meth:`rerank` owns the rest: the fields check, each query's top ``depth``
    candidates by the ranking rule (``depth``: the call's, else the system's
    ``depth`` option, else :attr:`default_depth`), the document texts, the one
    model call (:meth:`score_pairs` as one :class:`Work` on the ``engine`` the
    call receives, which a distributed engine spreads over its workers), the
    checks of the scores, and the merge: the re-scored top above the rest of
    the ranking, kept in order (ties by doc id descending).
    """

    kind = "reranker"
    default_depth: ClassVar[int] = DEFAULT_RERANK_DEPTH
    default_fields: ClassVar[tuple[str, ...]] = ("title", "text")

    # ----------------------------------------------------------------- model hooks
    def score(self, query: str, texts: list[str]) -> list[float]:
        """The model: one relevance score per text (higher is better). Plugins implement this."""
        raise UsageError(f"reranker {self.name!r} implements neither score(query, texts) nor score_pairs(queries, texts)")

    def score_pairs(self, queries: Sequence[str], texts: Sequence[str]) -> list[float]:
        """Scores of ``(queries[i], texts[i])`` in input order: the ONE place model calls go through
        (an engine may distribute exactly this call). Default: :meth:`score` once per run of equal queries."""
        from evalkit.core.progress import progress

        scores: list[float] = [0.0] * len(texts)
        show = bool(getattr(self.options, "show_progress", True)) and len(texts) > 0
        with progress(total=len(texts), desc=f"{self.name} rerank", unit="pair", enabled=show) as bar:
            start = 0
            while start < len(queries):
                end = start
                while end < len(queries) and queries[end] == queries[start]:
                    end += 1
                values = list(self.score(queries[start], list(texts[start:end])))
                if len(values) != end - start:
                    raise UsageError(f"reranker {self.name!r}: score() returned {len(values)} scores for {end - start} texts")
                scores[start:end] = values
                bar.update(end - start)
                start = end
        return scores

    def score_lists(self, candidates: Candidates, engine: Engine = LOCAL) -> dict[str, dict[str, float]]:
        """``{query: {doc: new score}}`` for every candidate. Default: pointwise, all pairs in one
        :meth:`score_pairs` call on ``engine``. Listwise and composite rerankers override this."""
        keys = candidates.pairs()
        scores = engine.score_pairs(self, [candidates.queries[q] for q, _ in keys], [candidates.text(d) for _, d in keys])
        if len(scores) != len(keys):
            raise UsageError(f"reranker {self.name!r}: {len(scores)} scores for {len(keys)} pairs")
        reranked: dict[str, dict[str, float]] = {q: {} for q in candidates.docs}
        for (q, d), value in zip(keys, scores):
            reranked[q][d] = float(value) if isinstance(value, numbers.Real) else value  # anything else: refused by rerank
        return reranked

    # ----------------------------------------------------------------- engine hints
    def pair_order(self, queries: Sequence[str], texts: Sequence[str]) -> list[int]:
        """The order :meth:`score_pairs` processes pairs in (an engine keeps it; e.g. by length): default as given."""
        return list(range(len(texts)))

    def model_batch_size(self) -> int:
        """Pairs per model call; engines cut work at multiples of it so every batch is the local one."""
        return int(getattr(self.options, "eval_batch_size", None) or getattr(self.options, "batch_size", None) or 32)

    def fingerprint(self) -> str:
        """What besides the options decides the scores (trained weights): part of engine checkpoint keys."""
        return ""

    # ----------------------------------------------------------------- plumbing
    def text_fields(self) -> tuple[str, ...]:
        return tuple(getattr(self.options, "fields", None) or self.default_fields)

    def rerank_depth(self, depth: int | None = None) -> int:
        """``depth``, else the system's ``depth`` option, else :attr:`default_depth`."""
        return stage_depth(self, depth)

    def run_name(self, run: Run) -> str:
        """The name of the reranked run (default: the system's name)."""
        return self.name

    def rerank(self, corpus: Corpus, queries: Queries, run: Run, depth: int | None = None, *, engine: Engine = LOCAL) -> Run:
        """``run`` with each query's top ``depth`` re-scored by the model on ``engine``, the rest kept below in order."""
        depth = self.rerank_depth(depth)
        candidates = Candidates.of(corpus, queries, run, depth, self.text_fields(), self.name)
        reranked = call_stage(self.score_lists, candidates, engine=engine)
        for q, docs in candidates.docs.items():
            got = reranked.get(q, {})
            missing = next((d for d in docs if d not in got), None)
            if missing is not None or len(got) != len(docs):
                what = f"no score for document {missing!r}" if missing is not None else "scores for documents that are not candidates"
                raise UsageError(f"reranker {self.name!r}: {what} of query {q!r}")
            bad = next((d for d, value in got.items() if not (isinstance(value, numbers.Real) and math.isfinite(value))), None)
            if bad is not None:
                raise UsageError(f"reranker {self.name!r}: score {got[bad]!r} for query {q!r}, document {bad!r} is not a finite number")
        return merge_reranked(run, reranked, depth).with_name(self.run_name(run))


class Labeler(System):
    """A labeler implements the model, the base class the plumbing (:meth:`label`).

    A plugin implements :meth:`label_claim` (``label_claim(claim, texts) -> one
    label per text``), or :meth:`label_pairs` to batch across claims. Labels are
    Supports / Refutes / Not Enough Information (any spelling
    :func:`evalkit.data.labels.normalize_label` knows). :meth:`label` owns the fields
    check, each query's top ``depth`` by the ranking rule (default
    :attr:`default_depth`, 10), the texts, and writing the labels onto the run
    (the ranking unchanged).
    """

    kind = "labeler"
    default_depth: ClassVar[int] = DEFAULT_LABEL_DEPTH
    default_fields: ClassVar[tuple[str, ...]] = ("title", "text")

    def label_claim(self, claim: str, texts: list[str]) -> list[str]:
        """The model: one label per text (evidence about ``claim``). Plugins implement this."""
        raise UsageError(f"labeler {self.name!r} does not implement label_pairs(claims, texts, query_ids) or label_claim(claim, texts)")

    def label_pairs(self, claims: Sequence[str], texts: Sequence[str], query_ids: Sequence[str], engine: Engine = LOCAL) -> list[str]:
        """One label per (claim, text) pair, in input order (pairs come grouped by query, best first).
        Default: :meth:`label_claim` once per query, on ``engine`` (units of whole queries)."""
        work = Work(self.label_claims, (list(claims), list(texts), list(query_ids)), groups=list(query_ids),
                    batch_size=int(getattr(self.options, "batch_size", None) or 32))
        return list(engine.run(work))

    def label_claims(self, claims: Sequence[str], texts: Sequence[str], query_ids: Sequence[str]) -> list[str]:
        """:meth:`label_claim` once per run of equal query ids (the unit of work an engine distributes)."""
        from evalkit.core.progress import progress

        labels: list[str] = []
        with progress(total=len(texts), desc=f"{self.name} label", unit="pair", enabled=bool(texts)) as bar:
            start = 0
            while start < len(query_ids):
                end = start
                while end < len(query_ids) and query_ids[end] == query_ids[start]:
                    end += 1
                values = list(self.label_claim(claims[start], list(texts[start:end])))
                if len(values) != end - start:
                    raise UsageError(f"labeler {self.name!r}: label_claim() returned {len(values)} labels for {end - start} texts")
                labels.extend(values)
                bar.update(end - start)
                start = end
        return labels

    def text_fields(self) -> tuple[str, ...]:
        return tuple(getattr(self.options, "fields", None) or self.default_fields)

    def label(self, corpus: Corpus, queries: Queries, run: Run, depth: int | None = None, *, engine: Engine = LOCAL) -> Run:
        """``run`` with a label on each query's top ``depth`` documents (the ranking unchanged); model work on ``engine``."""
        from evalkit.data.labels import LABELS, normalize_label

        candidates = Candidates.of(corpus, queries, run, stage_depth(self, depth), self.text_fields(), self.name)
        keys = candidates.pairs()
        labels = call_stage(self.label_pairs, [candidates.queries[q] for q, _ in keys], [candidates.text(d) for _, d in keys],
                            [q for q, _ in keys], engine=engine)
        if len(labels) != len(keys):
            raise UsageError(f"labeler {self.name!r}: {len(labels)} labels for {len(keys)} pairs")
        canonical = [normalize_label(label) if isinstance(label, str) else None for label in labels]
        bad = next((i for i, label in enumerate(canonical) if label is None), None)
        if bad is not None:
            raise UsageError(f"labeler {self.name!r}: label {labels[bad]!r} for query {keys[bad][0]!r}, document {keys[bad][1]!r} "
                             f"is not one of {', '.join(LABELS)}")
        return labelled_run(run, candidates.docs, canonical, f"{run.name}+{self.name}")  # type: ignore[arg-type]


STAGE_KINDS = ("retriever", "reranker", "labeler")


def stage_depth(system: System, depth: int | None) -> int:
    """A reranker's or labeler's depth: the call's, else its ``depth`` option, else its class's ``default_depth``."""
    if depth is None:
        depth = getattr(system.options, "depth", None)
    if depth is None:
        depth = getattr(system, "default_depth", DEFAULT_RERANK_DEPTH)
    return int(depth)


def call_stage(method: Any, *args: Any, engine: Engine, **kwargs: Any) -> Any:
    """``method(*args, **kwargs)`` with the execution context ``engine`` passed on, as ``engine=``, when the method
    declares it (or takes ``**kwargs``): the one way stage calls hand over the engine, so plugins written
    before it was passed (``retrieve(corpus, queries, k)``, ``score_lists(candidates)``) keep working."""
    parameters: Iterable[inspect.Parameter]
    try:
        parameters = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        parameters = ()
    if any(p.name == "engine" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        kwargs["engine"] = engine
    return method(*args, **kwargs)
