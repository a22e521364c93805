"""DocT5Query: document expansion by predicted queries, then BM25.

Nogueira & Lin (2019), "From doc2query to docTTTTTquery": a T5 model trained
to map a document ``d`` to a query ``q`` it is relevant to generates ``n``
sampled queries per document (top-k 50, top-p 0.95 in the published
setting); they are appended to the document as a new field ``expansions``
and the expanded corpus is indexed with BM25 -- here the registered ``bm25``
system, with ``fields + ["expansions"]``.

The default model is ``castorini/doc2query-t5-base-msmarco``, the published
docTTTTTquery checkpoint (T5-base trained on MS MARCO), so the system works
without :meth:`DocT5Query.fit` (its tokenizer is a ``spiece.model``: loading
it needs ``pip install sentencepiece protobuf``); ``fit`` fine-tunes it on the task's own
(document -> training query) pairs taken from the qrels, with the input
``prefix + title + abstract`` (default prefix ``"Generate tweet: "``).

Expansions are written to a JSONL file (``{"id": ..., "expansions": [...]}``
per line), appended and flushed per batch, keyed by the model's identity
(name + sha256 of its weights + fit state), the generation settings, the seed
and the corpus fingerprint. A restarted run skips documents already expanded;
a truncated last line (a run killed mid-write) is dropped and regenerated.
"""
from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any, Iterator, Sequence

from evalkit.data.corpus import Corpus, Queries
from evalkit.data import Qrels, Run
from evalkit.core.errors import InputError, UsageError
from evalkit.systems._models.modelio import (
    cache_dir, check_torch_precision, device_option, pick_device, precision_option, precision_tag, settings_key, weights_sha256,
)
from evalkit.pipelines.registry import load_system, register_system
from evalkit.pipelines.stages import LOCAL, Engine, Retriever, Work, option
from evalkit.io.transactions import atomic_write

DEFAULT_MODEL = "castorini/doc2query-t5-base-msmarco"
MODEL_FOLDER = "model"


def read_expansions(path: Path) -> tuple[dict[str, list[str]], int]:
    """``({doc id: expansions}, bytes of complete lines)`` of a JSONL expansions file.

    Only newline-terminated lines count: a partial last line (a process killed
    mid-write) is ignored. A malformed complete line is an :class:`InputError`.
    """
    if not path.exists():
        return {}, 0
    data = path.read_bytes()
    complete = data.rfind(b"\n") + 1
    found: dict[str, list[str]] = {}
    for number, line in enumerate(data[:complete].split(b"\n")[:-1], start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            raise InputError(str(path), "not a JSON line (expected {\"id\": ..., \"expansions\": [...]})", number) from None
        if (not isinstance(record, dict) or not isinstance(record.get("id"), str)
                or not isinstance(record.get("expansions"), list)
                or not all(isinstance(e, str) for e in record["expansions"])):
            raise InputError(str(path), "expected {\"id\": \"...\", \"expansions\": [\"...\", ...]}", number)
        found[record["id"]] = record["expansions"]
    return found, complete


def expanded_corpus(corpus: Corpus, expansions: dict[str, list[str]]) -> Corpus:
    """``corpus`` plus a field ``expansions`` (each document's expansions joined by spaces)."""
    joined = [" ".join(e for e in expansions.get(d, []) if e) for d in corpus.ids]
    return Corpus(ids=corpus.ids, fields={**corpus.fields, "expansions": joined},
                  source=corpus.source, metadata=corpus.metadata)


@register_system
class DocT5Query(Retriever):
    """Documents expanded with T5-generated queries, retrieved with BM25 (Nogueira & Lin 2019)."""

    name = "doct5query"
    distributed = "expansion generation, units of whole generation batches; then BM25 query shards"
    description = "doc2query/docTTTTTquery: T5 query generation appended to documents, then BM25"
    learnable = True

    @dataclasses.dataclass
    class Options:
        model: str = option(DEFAULT_MODEL, "seq2seq model: hub name or local folder (T5 family)")
        prefix: str = option("Generate tweet: ", "text put before each document's text on input")
        fields: list[str] = option(["title", "text"], "document fields given to the model and indexed by BM25")
        num_expansions: int = option(5, "queries generated per document")
        top_k: int = option(50, "sampling: keep the k most likely tokens (0 = off)")
        top_p: float = option(0.95, "sampling: nucleus probability mass (1 = off)")
        no_repeat_ngram_size: int = option(2, "never repeat an n-gram of this size within an expansion (0 = off)")
        max_new_tokens: int = option(64, "longest expansion, in tokens (also the training target length)")
        max_input_length: int = option(512, "document tokens given to the model")
        generation_batch_size: int = option(8, "documents per generation batch")
        expansions_path: str = option("", "JSONL file of expansions (default: a file keyed by model, settings and corpus in the cache)")
        epochs: int = option(3, "fine-tuning epochs")
        batch_size: int = option(8, "fine-tuning batch size")
        lr: float = option(1e-4, "AdamW learning rate")
        seed: int = option(42, "seed of training and of sampling")
        device: str = device_option()
        precision: str = precision_option()
        analyzer: str | None = option(None, "BM25 analyzer (None: the bm25 system's default)")
        k1: float | None = option(None, "BM25 k1 (None: the bm25 system's default)")
        b: float | None = option(None, "BM25 b (None: the bm25 system's default)")

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        o = self.options
        check_torch_precision(self.name, o.precision)
        if o.num_expansions < 1 or o.max_new_tokens < 1 or o.generation_batch_size < 1 or o.batch_size < 1:
            raise UsageError("doct5query: num_expansions, max_new_tokens and batch sizes must be >= 1")
        if o.epochs < 0 or o.lr <= 0 or not 0 < o.top_p <= 1 or o.top_k < 0:
            raise UsageError("doct5query: need epochs >= 0, lr > 0, 0 < top_p <= 1, top_k >= 0")
        self._model: Any = None
        self._tokenizer: Any = None
        self._model_source = o.model  # where the weights come from: the option, or a saved folder
        self._state: dict[str, Any] = {"fitted": False}
        self.losses: list[float] = []

    # ---------------------------------------------------------------- model
    def _load_model(self) -> tuple[Any, Any]:
        from evalkit.systems import doc2query_model

        if self._model is None:
            self._model, self._tokenizer = doc2query_model.load_seq2seq(self._model_source)
        return self._model, self._tokenizer

    def model_identity(self) -> dict[str, Any]:
        """Name, weights sha256 and fit state: what the expansions depend on besides settings."""
        if "weights_sha256" not in self._state:
            self._state["weights_sha256"] = weights_sha256(*self._load_model())
        return {"model": self.options.model, "weights_sha256": self._state["weights_sha256"],
                "fitted": self._state["fitted"]}

    def _source_text(self, corpus: Corpus, index: int) -> str:
        return self.options.prefix + corpus.text(index, self.options.fields)

    # ------------------------------------------------------------- learning
    def training_pairs(self, corpus: Corpus, queries: Queries, qrels: Qrels) -> list[tuple[str, str]]:
        """``(prefix + document text, query text)`` for every relevant (query, document) of ``qrels``."""
        position, texts = corpus.position(), queries.as_dict()
        pairs = []
        for query, docs in qrels.relevant_docs().items():
            for doc in docs:
                if query in texts and doc in position:
                    pairs.append((self._source_text(corpus, position[doc]), texts[query]))
        if not pairs:
            raise UsageError("doct5query fit: no relevant (query, document) pair of the qrels is in the queries and corpus")
        return pairs

    def fit(self, corpus: Corpus, queries: Queries, qrels: Qrels, first_stage: Run | None = None) -> "DocT5Query":
        """Fine-tune the model to generate each relevant document's training queries (``first_stage`` unused)."""
        from evalkit.systems import doc2query_model

        o = self.options
        pairs = self.training_pairs(corpus, queries, qrels)
        model, tokenizer = self._load_model()
        self.losses = doc2query_model.fine_tune(
            model, tokenizer, pairs, epochs=o.epochs, batch_size=o.batch_size, lr=o.lr, seed=o.seed,
            device=pick_device(o.device), precision=o.precision, max_input_length=o.max_input_length,
            max_target_length=o.max_new_tokens,
        )
        self._state = {"fitted": True, "weights_sha256": weights_sha256(model, tokenizer),
                       "training_pairs": len(pairs), "epoch_losses": self.losses}
        return self

    def config(self) -> dict[str, Any]:
        """Name, options and fit state (an unfitted model's weights are re-hashed when loaded)."""
        return {**super().config(), "state": self._state if self._state["fitted"] else {"fitted": False}}

    def save(self, folder: str | Path) -> Path:
        """Options and fit state in ``evalkit-system.json``; a fitted model + tokenizer in ``folder/model``."""
        folder = Path(folder)
        if self._state["fitted"]:
            model, tokenizer = self._load_model()
            model.save_pretrained(folder / MODEL_FOLDER)
            tokenizer.save_pretrained(folder / MODEL_FOLDER)
        folder = super().save(folder)
        atomic_write(folder / "evalkit-system.json", json.dumps(self.config(), indent=2, allow_nan=False) + "\n", force=True)
        return folder

    @classmethod
    def load(cls, folder: str | Path) -> "DocT5Query":
        system = super().load(folder)
        assert isinstance(system, DocT5Query)
        state = cls.saved_config(folder).get("state") or {"fitted": False}
        if state.get("fitted"):
            if not (Path(folder) / MODEL_FOLDER).is_dir():
                raise UsageError(f"{folder}: saved doct5query is fitted but has no {MODEL_FOLDER}/ folder")
            system._model_source = str(Path(folder) / MODEL_FOLDER)
        system._state = state
        system.losses = list(state.get("epoch_losses", []))
        return system

    # ------------------------------------------------------------ expansion
    def cache_settings(self, corpus: Corpus) -> dict[str, Any]:
        """Everything the expansions of ``corpus`` depend on (the cache key)."""
        return {**self.cache_settings_without_corpus(), "fields": list(self.options.fields), "corpus": corpus.fingerprint()}

    def expansions_file(self, corpus: Corpus) -> Path:
        """The JSONL file of ``corpus``: ``expansions_path`` or ``<cache>/doct5query/<key>.jsonl``.

        A given path may hold expansions made elsewhere (no ``.settings.json``
        beside it); if it has one, it must match the current settings.
        """
        if self.options.expansions_path:
            path = Path(self.options.expansions_path)
            sidecar = path.with_name(path.name + ".settings.json")
            if sidecar.exists():
                stored = json.loads(sidecar.read_text())
                wanted = json.loads(json.dumps(self.cache_settings(corpus), allow_nan=False))
                if stored != wanted:
                    differing = sorted(k for k in set(stored) | set(wanted) if stored.get(k) != wanted.get(k))
                    raise UsageError(f"{path}: expansions made with other settings ({', '.join(differing)}); "
                                     "delete it or choose another expansions_path")
            return path
        settings = self.cache_settings(corpus)
        key = settings_key(settings)
        return cache_dir("doct5query") / f"{key[:24]}.jsonl"

    def generation_batches(self, doc_ids: Sequence[str], texts: Sequence[str]) -> Iterator[tuple[list[str], list[list[str]]]]:
        """``(doc ids, n expansions each)`` one generation batch at a time."""
        from evalkit.systems import doc2query_model

        o = self.options
        model, tokenizer = self._load_model()
        return doc2query_model.generate_expansions(
            model, tokenizer, doc_ids, texts, n=o.num_expansions, seed=o.seed, device=pick_device(o.device),
            precision=o.precision, batch_size=o.generation_batch_size, top_k=o.top_k, top_p=o.top_p,
            no_repeat_ngram_size=o.no_repeat_ngram_size, max_new_tokens=o.max_new_tokens, max_input_length=o.max_input_length,
        )

    def generate(self, doc_ids: Sequence[str], texts: Sequence[str]) -> list[list[str]]:
        """``n`` expansions per document (the model call an engine distributes; per-row seeds, so any unit of whole
        batches gives the local expansions)."""
        return [expansions for _, batch in self.generation_batches(doc_ids, texts) for expansions in batch]

    def fingerprint(self) -> str:
        return json.dumps(self.cache_settings_without_corpus(), sort_keys=True, allow_nan=False)

    def cache_settings_without_corpus(self) -> dict[str, Any]:
        o = self.options
        return {**self.model_identity(), "prefix": o.prefix, "num_expansions": o.num_expansions, "top_k": o.top_k, "top_p": o.top_p,
                "no_repeat_ngram_size": o.no_repeat_ngram_size, "max_new_tokens": o.max_new_tokens,
                "max_input_length": o.max_input_length, "seed": o.seed, "precision": precision_tag(pick_device(o.device), o.precision)}

    def expand(self, corpus: Corpus, *, engine: Engine = LOCAL) -> dict[str, list[str]]:
        """``{doc id: n expansions}`` for every document, generating only those not in the expansions file.

        Locally the expansions are appended batch by batch as they come (an interrupted run resumes); a
        distributed ``engine`` generates in units of whole batches, checkpointed by the engine."""

        o = self.options
        path = self.expansions_file(corpus)
        done, complete = read_expansions(path)
        missing = [i for i, d in enumerate(corpus.ids) if d not in done]
        if missing:
            path.parent.mkdir(parents=True, exist_ok=True)
            sidecar = path.with_name(path.name + ".settings.json")
            if complete == 0 and not sidecar.exists():
                atomic_write(sidecar, json.dumps(self.cache_settings(corpus), indent=1, allow_nan=False) + "\n", force=True)
            ids, texts = [corpus.ids[i] for i in missing], [self._source_text(corpus, i) for i in missing]
            if engine.distributed:
                work = Work(self.generate, (ids, texts), batch_size=o.generation_batch_size, what="documents")
                batches: Any = [(ids, [list(map(str, row)) for row in engine.run(work)])]
            else:
                batches = self.generation_batches(ids, texts)
            with open(path, "r+b" if path.exists() else "wb") as handle:
                handle.truncate(complete)  # drop a partial last line
                handle.seek(complete)
                for ids, expansions in batches:
                    lines = "".join(json.dumps({"id": d, "expansions": e}, ensure_ascii=False, allow_nan=False) + "\n"
                                    for d, e in zip(ids, expansions))
                    handle.write(lines.encode("utf-8"))
                    handle.flush()
                    os.fsync(handle.fileno())
                    done.update(zip(ids, expansions))
        return {d: done[d] for d in corpus.ids}

    # ------------------------------------------------------------ retrieval
    def bm25(self) -> Any:
        """The registered ``bm25`` system over ``fields + ["expansions"]`` with the pass-through options."""
        o = self.options
        passed = {k: v for k, v in (("analyzer", o.analyzer), ("k1", o.k1), ("b", o.b)) if v is not None}
        return load_system("bm25", fields=[*o.fields, "expansions"], **passed)

    def retrieve(self, corpus: Corpus, queries: Queries, k: int = 1000, *, engine: Engine = LOCAL) -> Run:
        """BM25 over the documents with their expansions (generation and search on ``engine``)."""
        expanded = expanded_corpus(corpus, self.expand(corpus, engine=engine))
        return self.bm25().retrieve(expanded, queries, k=k, engine=engine).with_name(self.name)
