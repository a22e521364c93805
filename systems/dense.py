"""E5-style dual-encoder dense retrieval (AIRwaves, CheckThat! 2025 Task 4b).

Queries and documents are embedded by one sentence-transformers encoder (hub
name or local folder; default ``intfloat/e5-large-v2``) with the E5 prefixes
``"query: "`` / ``"passage: "`` (set both to ``""`` for models trained
without them, e.g. all-MiniLM-L6-v2). A document is its chosen ``fields``
joined by the tokenizer's separator token.

Long documents (``chunking="chunks"``) are cut into windows of ``chunk_size``
tokens (prefix included, special tokens excluded: 510 = 512 - [CLS] - [SEP])
that overlap by ``chunk_overlap`` tokens; each window is embedded with the
model's own pooling and the document vector is

    d = (mean_c e_c + max_c e_c) / 2,    then  d / ||d||

(element-wise max over chunks). ``chunking="truncate"`` is plain truncation
at ``max_seq_length`` (as ``SentenceTransformer.encode``); queries are always
truncated. Relevance is the cosine ``q . d`` of L2-normalised vectors; search is
exact (batched matrix product, top k by ``argpartition``).

Training (:meth:`DenseRetriever.fit`, :mod:`evalkit.systems.dense_training`)
uses MultipleNegativesRankingLoss with in-batch negatives plus BM25-mined hard
negatives. Corpus embeddings are cached on disk
(:mod:`evalkit.systems.embedding_cache`).

Reference: Ashbaugh et al., "AIRwaves at CheckThat! 2025: Retrieving
Scientific Sources for Implicit Claims on Social Media with Dual Encoders and
Neural Re-Ranking", CLEF 2025 Working Notes (arXiv:2509.19509); Wang et al.,
"Text Embeddings by Weakly-Supervised Contrastive Pre-training" (E5), 2022.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from evalkit.data.corpus import Corpus, Queries
from evalkit.data import Qrels, Run
from evalkit.core.errors import UsageError
from evalkit.systems._models.modelio import (
    autocast, autocast_dtype, cache_dir, device_option, inference_precision_option, model_load_error, pick_device, resolve_model,
)
from evalkit.systems._models.onnx_backend import autocast_precision, backend_option, check_backend, inference_precision
from evalkit.pipelines.registry import register_system
from evalkit.pipelines.stages import LOCAL, Engine, Retriever, Work, option
from evalkit.systems import embedding_cache
from evalkit.io.transactions import atomic_write

CORPUS_FIELDS = ("title", "text", "authors", "journal", "source")
CHUNKING = ("chunks", "truncate")


@dataclasses.dataclass
class DenseOptions:
    model: str = option("intfloat/e5-large-v2", "sentence-transformers encoder: hub name or local folder")
    query_prefix: str = option("query: ", "prepended to every query (E5); '' for models without prefixes")
    passage_prefix: str = option("passage: ", "prepended to every document chunk (E5); '' for models without prefixes")
    fields: list[str] = option(["title", "text"], "document fields to embed: title, text, authors, journal, source")
    field_separator: str = option("[SEP]", "text between fields: [SEP] = the tokenizer's separator token, '' = a space (MTEB)")
    chunking: str = option("chunks", "chunks = overlapping windows, (mean + max)/2 pooled; truncate = cut at max_seq_length")
    chunk_size: int = option(510, "tokens per chunk, prefix included, special tokens excluded")
    chunk_overlap: int = option(50, "tokens shared by consecutive chunks")
    max_seq_length: int = option(0, "longest input in tokens incl. special tokens; 0 = the model's own setting")
    batch_size: int = option(32, "sequences per encoding batch")
    search_backend: str = option("auto", "exact search: auto (faiss IndexFlatIP if installed, else numpy), numpy, faiss")
    device: str = device_option()
    precision: str = inference_precision_option()
    backend: str = backend_option()
    embedding_cache: str = option("auto", "auto = evalkit cache folder, none = off, or a folder for this corpus")
    lr: float = option(7e-6, "training: AdamW learning rate (AIRwaves: 7e-6 for e5-large-v2)")
    epochs: int = option(1, "training: passes over the (query, positive) pairs")
    train_batch_size: int = option(16, "training: (query, positive) pairs per batch (in-batch negatives)")
    warmup_ratio: float = option(0.1, "training: share of steps with linear learning-rate warm-up")
    train_max_seq_length: int = option(0, "training: longest input in tokens; 0 = max_seq_length")
    scale: float = option(20.0, "training: MultipleNegativesRankingLoss cosine scale (1 / temperature)")
    n_hard_negatives: int = option(1, "training: mined hard negatives per query (0 = in-batch negatives only)")
    hard_negative_depth: int = option(50, "training: first-stage depth that hard negatives are mined from")
    remine_each_epoch: bool = option(False, "training: re-mine hard negatives with the current model between epochs")
    seed: int = option(42, "training: seed of shuffling and initialisation")


@register_system
class DenseRetriever(Retriever):
    """Dual encoder: cosine of prefixed, chunk-pooled sentence embeddings."""

    name = "dense"
    distributed = "document and query window embeddings, units of whole batches in length order"
    description = "E5 dual-encoder dense retrieval (chunked mean+max pooling, MNRL fine-tuning with BM25 hard negatives)"
    Options = DenseOptions
    learnable = True

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        o = self.options
        if o.search_backend not in ("auto", "numpy", "faiss"):
            raise UsageError(f"option search_backend={o.search_backend!r}: choose auto, numpy or faiss")
        if o.chunking not in CHUNKING:
            raise UsageError(f"option chunking={o.chunking!r}: choose chunks or truncate")
        unknown = [f for f in o.fields if f not in CORPUS_FIELDS]
        if not o.fields or unknown:
            raise UsageError(f"option fields={','.join(o.fields)!r}: choose among {', '.join(CORPUS_FIELDS)}")
        if o.chunk_size <= 0 or not 0 <= o.chunk_overlap < o.chunk_size:
            raise UsageError(f"chunk_size={o.chunk_size}, chunk_overlap={o.chunk_overlap}: need 0 <= overlap < size")
        if o.batch_size <= 0 or o.train_batch_size <= 0 or o.max_seq_length < 0 or o.train_max_seq_length < 0:
            raise UsageError("batch_size and train_batch_size must be positive, max_seq_length and train_max_seq_length >= 0")
        check_backend(o.backend, o.precision, o.device)
        self._model = None
        self._identity: str | None = None
        self.training_log: list[dict[str, float]] = []

    # ------------------------------------------------------------------ model
    @property
    def model(self):
        """The SentenceTransformer, loaded on first use (resolve_model checks local paths)."""
        if self._model is None:
            path = resolve_model(self.options.model, "sentence-transformers model")
            device = "cpu" if self.options.backend == "onnx" else pick_device(self.options.device)
            try:
                from sentence_transformers import SentenceTransformer

                model = SentenceTransformer(path, device=device)
                if model.tokenizer is None:
                    raise ValueError("no tokenizer")
            except UsageError:
                raise
            except Exception as exc:  # noqa: BLE001 - any loading failure is one line
                raise model_load_error(self.options.model, exc, "sentence-transformers model") from None
            if self.options.max_seq_length:
                model.max_seq_length = self.options.max_seq_length
            if self.options.backend == "onnx":  # token embeddings from ONNX Runtime (fp32 / int8), pooling as before
                from evalkit.systems._models.onnx_module import install_onnx

                install_onnx(model, "features", self.options.precision)
            self._model = model
        return self._model

    @property
    def device(self) -> str:
        return str(self.model.device)

    def model_identity(self) -> str:
        """sha256 over the weights and tokenizer vocabulary (the embedding-cache key of the model)."""
        if self._identity is None:
            from evalkit.systems._models.modelio import weights_sha256

            self._identity = weights_sha256(self.model, self.model.tokenizer)
        return self._identity

    # ------------------------------------------------------------- tokenising
    def _template(self) -> tuple[list[int], list[int], list[str]]:
        """Special tokens the tokenizer puts before / after a text, and the feature names it yields."""
        cached = self.__dict__.get("_template_cache")
        if cached is None:
            tok = self.model.tokenizer
            with_special = tok("a")
            bare = tok("a", add_special_tokens=False)["input_ids"]
            ids = list(with_special["input_ids"])
            cached = ([], [], list(with_special.keys()))  # exotic tokenizers: no special tokens added
            for start in range(len(ids) - len(bare) + 1):
                if ids[start : start + len(bare)] == bare:
                    cached = (ids[:start], ids[start + len(bare) :], list(with_special.keys()))
                    break
            probe = self.model.preprocess(["a"]) if hasattr(self.model, "preprocess") else self.model.tokenize(["a"])
            self._extra_features = {k: v for k, v in probe.items() if not hasattr(v, "shape")}  # e.g. modality="text"
            self._template_cache = cached
        return cached

    def window_sizes(self, prefix: str, chunked: bool = True) -> tuple[int, int, list[int]]:
        """``(body tokens per window, stride, prefix ids)``; without chunking a window is max_seq_length long."""
        tok = self.model.tokenizer
        head, tail, _ = self._template()
        prefix_ids = tok(prefix, add_special_tokens=False)["input_ids"] if prefix else []
        room = (self.model.max_seq_length or 512) - len(head) - len(tail)  # None: a model without a limit
        size = (min(self.options.chunk_size, room) if chunked else room) - len(prefix_ids)
        if size <= (self.options.chunk_overlap if chunked else 0):
            raise UsageError(
                f"chunk of {size} text tokens after the prefix cannot overlap by {self.options.chunk_overlap}; "
                "raise chunk_size/max_seq_length or lower chunk_overlap"
            )
        return size, size - self.options.chunk_overlap, list(prefix_ids)

    def token_windows(self, texts: Sequence[str], prefix: str, chunked: bool) -> list[list[list[int]]]:
        """Per text, its windows as full input ids: head + prefix + body[s : s + size] + tail.

        Starts are ``s = 0, stride, 2 * stride, ...`` until a window reaches the
        end of the text; ``chunked=False`` keeps one window of ``max_seq_length``
        tokens (truncation).
        """
        size, stride, prefix_ids = self.window_sizes(prefix, chunked)
        head, tail, _ = self._template()
        bodies = self.model.tokenizer(list(texts), add_special_tokens=False, verbose=False)["input_ids"] if texts else []
        out = []
        for body in bodies:
            windows, start = [], 0
            while True:
                windows.append(head + prefix_ids + list(body[start : start + size]) + tail)
                if not chunked or start + size >= len(body):
                    break
                start += stride
            out.append(windows)
        return out

    def features(self, sequences: Sequence[list[int]]) -> dict[str, Any]:
        """Padded model inputs for token-id sequences, on the model's device."""
        import torch

        _, _, keys = self._template()
        pad = self.model.tokenizer.pad_token_id or 0
        width = max((len(s) for s in sequences), default=0)
        ids = np.full((len(sequences), width), pad, dtype=np.int64)
        mask = np.zeros((len(sequences), width), dtype=np.int64)
        for row, seq in enumerate(sequences):  # right padding
            ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1
        features: dict[str, Any] = {"input_ids": torch.from_numpy(ids), "attention_mask": torch.from_numpy(mask)}
        if "token_type_ids" in keys:
            features["token_type_ids"] = torch.zeros_like(features["input_ids"])
        features = {k: v.to(self.model.device) for k, v in features.items()}
        features.update(self._extra_features)
        return features

    def embed_sequences(self, sequences: Sequence[list[int]], desc: str = "encoding") -> np.ndarray:
        """Model embeddings (its own pooling) of token-id sequences, float32, in input order."""
        import torch

        from evalkit.core.progress import progress

        model = self.model
        out: np.ndarray | None = None
        order = np.argsort([-len(s) for s in sequences], kind="stable")  # similar lengths share a batch
        dtype = autocast_dtype(self.device, autocast_precision(self.options.backend, self.options.precision))
        size = self.options.batch_size
        was_training = model.training
        model.eval()
        try:
            for begin in progress(range(0, len(order), size), desc=desc, unit="batch", enabled=len(order) > size):
                rows = order[begin : begin + size]
                feats = self.features([sequences[i] for i in rows])
                with torch.inference_mode(), autocast(self.device, dtype):
                    emb = model(feats)["sentence_embedding"].float().cpu().numpy()
                if out is None:
                    out = np.zeros((len(sequences), emb.shape[1]), dtype=np.float32)
                out[rows] = emb
        finally:
            model.train(was_training)
        return out if out is not None else np.zeros((0, 0), dtype=np.float32)

    def embed_work(self, sequences: list[list[int]], desc: str) -> Work:
        """:meth:`embed_sequences` as one :class:`Work` (units of whole batches in its length order)."""
        order = np.argsort([-len(s) for s in sequences], kind="stable")
        return Work(self.embed_sequences, (sequences,), order=order.tolist(), batch_size=self.options.batch_size, what="windows",
                    keywords={"desc": desc})

    def prepare_worker(self) -> None:
        """On an engine actor: a model loaded by the driver moves to the device its option picks there (bf16 on GPU
        follows from ``precision`` as locally)."""
        if self._model is not None:
            from evalkit.systems._models.modelio import pick_device

            self._model.to(pick_device(self.options.device))

    def fingerprint(self) -> str:
        """The weights (engine checkpoint keys)."""
        return self.model_identity()

    def encode(self, texts: Sequence[str], prefix: str, chunked: bool, desc: str = "encoding", *, engine: Engine = LOCAL) -> np.ndarray:
        """L2-normalised vectors: per text (mean + max)/2 over its window embeddings (the model work on ``engine``)."""
        windows = self.token_windows(texts, prefix, chunked)
        flat = [w for ws in windows for w in ws]
        emb = np.asarray(engine.run(self.embed_work(flat, desc)), dtype=np.float32) if flat else self.embed_sequences(flat, desc)
        owner = np.repeat(np.arange(len(windows)), [len(ws) for ws in windows])
        if len(flat) == len(windows):  # one window each: pooling is the identity
            vectors = emb
        else:
            counts = np.bincount(owner, minlength=len(windows)).astype(np.float32)
            mean = np.zeros((len(windows), emb.shape[1]), dtype=np.float32)
            np.add.at(mean, owner, emb)
            mean /= counts[:, None]
            peak = np.full((len(windows), emb.shape[1]), -np.inf, dtype=np.float32)
            np.maximum.at(peak, owner, emb)
            vectors = (mean + peak) / 2
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)

    # --------------------------------------------------------------- corpus
    def separator(self) -> str:
        sep = self.options.field_separator
        if sep == "[SEP]":
            sep = self.model.tokenizer.sep_token or self.model.tokenizer.eos_token or " "
        return " " if sep.strip() == "" else f" {sep} "  # '' (as --set leaves ' ') means a space

    def document_texts(self, corpus: Corpus) -> list[str]:
        present = [f for f in self.options.fields if f in corpus.fields]
        if not present:
            raise UsageError(
                f"corpus has none of the fields {', '.join(self.options.fields)} (it has: {', '.join(corpus.field_names)})"
            )
        return corpus.texts(present, self.separator())

    def cache_settings(self, corpus: Corpus) -> dict[str, Any]:
        o = self.options
        return {
            "format": 1, "model_sha256": self.model_identity(), "corpus_sha256": corpus.fingerprint(),
            "n_documents": len(corpus), "fields": list(o.fields), "field_separator": self.separator(),
            "passage_prefix": o.passage_prefix, "chunking": o.chunking, "chunk_size": o.chunk_size,
            "chunk_overlap": o.chunk_overlap, "max_seq_length": self.model.max_seq_length,
            # bf16 vectors never stand in for fp32 ones
            "precision": inference_precision(o.backend, self.device, o.precision),
        }

    def corpus_embeddings(self, corpus: Corpus, use_cache: bool = True, *, engine: Engine = LOCAL) -> np.ndarray:
        """Normalised document vectors (rows aligned with ``corpus.ids``), from the cache when possible."""
        where = self.options.embedding_cache
        folder = None
        if use_cache and where.lower() != "none":
            settings = self.cache_settings(corpus)
            folder = embedding_cache.entry_folder(cache_dir("dense"), settings) if where == "auto" else Path(where)
            cached = embedding_cache.load(folder, corpus.ids, settings)
            if cached is not None:
                return cached
        matrix = self.encode(self.document_texts(corpus), self.options.passage_prefix,
                             self.options.chunking == "chunks", desc="encoding corpus", engine=engine)
        if folder is not None:
            embedding_cache.store(folder, corpus.ids, settings, matrix)
        return matrix

    def encode_queries(self, queries: Queries, *, engine: Engine = LOCAL) -> np.ndarray:
        return self.encode(queries.texts, self.options.query_prefix, chunked=False, desc="encoding queries", engine=engine)

    # -------------------------------------------------------------- retrieve
    def retrieve(self, corpus: Corpus, queries: Queries, k: int = 1000, use_cache: bool = True, *, engine: Engine = LOCAL) -> Run:
        """Top ``k`` documents per query by cosine similarity (exact search); the encoding runs on ``engine``."""
        if k <= 0:
            raise UsageError(f"k={k}: must be positive")
        docs = self.corpus_embeddings(corpus, use_cache, engine=engine)
        scores = search(self.encode_queries(queries, engine=engine), docs, k, backend=self.options.search_backend)
        ids = corpus.ids
        return Run.from_scores(
            {q: {ids[j]: s for j, s in hits} for q, hits in zip(queries.ids, scores)}, name=self.name
        )

    # -------------------------------------------------------------- learning
    def fit(self, corpus: Corpus, queries: Queries, qrels: Qrels, first_stage: Run | None = None, *,
            engine: Engine = LOCAL) -> "DenseRetriever":
        """Fine-tune with MNRL on (query, positive, hard negatives); see :mod:`evalkit.systems.dense_training`
        (mining runs its retrieval on ``engine``)."""
        from evalkit.systems.dense_training import train

        self.training_log = train(self, corpus, queries, qrels, first_stage, engine=engine)
        self._identity = None
        return self

    def save(self, folder: str | Path) -> Path:
        """``evalkit-system.json`` + the (fine-tuned) model under ``folder/model``."""
        folder = super().save(folder)
        data = {**self.config(), "weights": "model", "training_log": self.training_log}
        self.model.save(str(folder / "model"))
        atomic_write(folder / "evalkit-system.json", json.dumps(data, indent=2, allow_nan=False) + "\n", force=True)
        return folder

    @classmethod
    def load(cls, folder: str | Path) -> "DenseRetriever":
        system = super().load(folder)
        data = cls.saved_config(folder)
        weights = data.get("weights")
        if weights:
            if not (Path(folder) / weights).is_dir():
                raise UsageError(f"{folder}: saved dense system lacks its model folder {weights!r}")
            system.options.model = str(Path(folder) / weights)
        system.training_log = list(data.get("training_log", []))
        return system


def search(queries: np.ndarray, docs: np.ndarray, k: int, block: int = 256, backend: str = "numpy") -> list[list[tuple[int, float]]]:
    """Exact inner-product top ``k``: ``[(doc row, score), ...]`` per query, best first.

    numpy: ``queries @ docs.T`` in blocks of ``block`` queries, top k by
    ``argpartition`` then a sort of those k. faiss (optional): ``IndexFlatIP``,
    the same exact search.
    """
    k = min(k, docs.shape[0])
    if k == 0:
        return [[] for _ in range(len(queries))]
    if backend in ("auto", "faiss"):
        try:
            import faiss  # type: ignore[import-not-found]
        except ImportError:
            if backend == "faiss":
                raise UsageError("search_backend=faiss needs the faiss package (pip install faiss-cpu)") from None
        else:
            index = faiss.IndexFlatIP(docs.shape[1])
            index.add(np.ascontiguousarray(docs, dtype=np.float32))
            values, rows = index.search(np.ascontiguousarray(queries, dtype=np.float32), k)
            return [list(zip(r.tolist(), v.astype(np.float64).tolist())) for r, v in zip(rows, values)]
    out: list[list[tuple[int, float]]] = []
    for begin in range(0, len(queries), block):
        sims = queries[begin : begin + block] @ docs.T
        top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        top_scores = np.take_along_axis(sims, top, axis=1)
        order = np.argsort(-top_scores, axis=1, kind="stable")
        for rows, values in zip(np.take_along_axis(top, order, axis=1), np.take_along_axis(top_scores, order, axis=1)):
            out.append(list(zip(rows.tolist(), values.astype(np.float64).tolist())))
    return out
