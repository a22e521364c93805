"""Cross-encoder reranker: a BERT-style model reads (query, document) and emits one relevance logit.

``s(q, d) = w^T h_[CLS](q [SEP] d) + b`` -- the monoBERT design (Nogueira &
Cho, "Passage Re-ranking with BERT", 2019), as used by AIRwaves at CheckThat!
2025 Task 4b with SciBERT (``allenai/scibert_scivocab_uncased``). Fine-tuning
minimises binary cross-entropy over positives and negatives taken from a
first-stage run (its top candidates minus the positives) plus random ones::

    L = -[y log sigma(s) + (1 - y) log(1 - sigma(s))]

The model is a sentence-transformers ``CrossEncoder`` loaded by hub name or
local path; a plain BERT folder (or a sentence-transformers bi-encoder) gets a
fresh one-logit scoring head (option ``head_lr`` trains it faster than the
encoder: on a bi-encoder checkpoint, whose pooler output is near-silent, the
logits otherwise stay at the class prior for a few hundred steps).

The system implements the model only (:meth:`CrossEncoderReranker.score_pairs`,
all pairs batched by length); :meth:`evalkit.pipelines.stages.Reranker.rerank` owns
the rest: the top ``depth`` candidates (default 10, the class's
``default_depth``), texts, and the merge that keeps the rest of the run below.
The loading and scoring helpers (:func:`load_cross_encoder`, :func:`score_pairs`)
are used by the BGE reranker ensemble through this system class.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, ClassVar, Sequence

from evalkit.data.corpus import Corpus, Queries
from evalkit.data import Qrels, Run
from evalkit.core.errors import UsageError
from evalkit.systems._models.modelio import (
    autocast,
    autocast_dtype,
    device_option,
    inference_precision_option,
    model_load_error,
    pair_logits,
    pick_device,
    resolve_model,
)
from evalkit.systems._models.onnx_backend import autocast_precision, backend_option, check_backend
from evalkit.pipelines.registry import register_system
from evalkit.pipelines.stages import Reranker, check_fields, option

DEFAULT_MODEL = "allenai/scibert_scivocab_uncased"
MODEL_SUBFOLDER = "model"
PHASE_KEYS = ("epochs", "max_length", "lr", "head_lr", "warmup", "batch_size", "hard_negatives", "random_negatives", "seed")
DEFAULT_DEPTH = 10  # AIRwaves re-scored the first stage's top 10 (the class's default_depth and the depth option's default)


# --------------------------------------------------------------------- shared helpers
def load_cross_encoder(name_or_path: str | Path, max_length: int, device: str = "auto", backend: str = "torch",
                       precision: str = "auto") -> Any:
    """A sentence-transformers ``CrossEncoder`` with one output logit, on ``device``.

    A folder without a classification head (plain BERT, bi-encoder) gets a
    freshly initialised one-logit head. Failures become one-line UsageErrors.
    ``backend="onnx"``: scored by ONNX Runtime on the CPU at ``precision``
    fp32 or int8 (:mod:`evalkit.systems._models.onnx_backend`).
    """
    name_or_path = str(name_or_path)
    target = resolve_model(name_or_path, "cross-encoder model")
    import logging

    from sentence_transformers import CrossEncoder
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()  # the "newly initialised head" report is expected here
    logging.getLogger("sentence_transformers").setLevel(logging.WARNING)
    try:
        model = CrossEncoder(target, num_labels=1, max_length=max_length, device="cpu" if backend == "onnx" else pick_device(device))
    except UsageError:
        raise
    except Exception as exc:  # OSError (not a model / offline hub), ValueError (bad config), ...
        raise model_load_error(name_or_path, exc, "cross-encoder model") from None
    if model.num_labels != 1:
        raise UsageError(f"{name_or_path}: cross-encoder has {model.num_labels} outputs; a reranker needs 1")
    if backend == "onnx":
        from evalkit.systems._models.onnx_module import install_onnx

        install_onnx(model, "logits", precision)
    return model


def score_pairs(
    model: Any,
    pairs: Sequence[tuple[str, str]],
    *,
    max_length: int,
    batch_size: int = 32,
    precision: str = "auto",
    show_progress: bool = True,
    desc: str = "cross-encoder",
) -> list[float]:
    """Logits of ``(query, document)`` pairs, batched by length (less padding), in input order."""

    import torch

    from evalkit.core.progress import progress

    hf = model.transformers_model
    device = str(hf.device)
    dtype = autocast_dtype(device, precision)
    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
    scores = [0.0] * len(pairs)
    was_training = hf.training
    hf.eval()
    cast = autocast(device, dtype, hf)  # the head in fp32: bf16 logits would tie
    bar = progress(total=len(pairs), desc=desc, unit="pair", enabled=show_progress)
    with torch.inference_mode(), cast:
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            logits = pair_logits(model, [pairs[i][0] for i in chunk], [pairs[i][1] for i in chunk], max_length)
            for i, value in zip(chunk, logits.tolist()):
                scores[i] = float(value)
            bar.update(len(chunk))
    bar.close()
    hf.train(was_training)
    return scores


# --------------------------------------------------------------------- the system
@dataclasses.dataclass
class CrossEncoderOptions:
    model: str = option(DEFAULT_MODEL, "hub name or local folder of the backbone / trained cross-encoder")
    fields: list[str] = option(["title", "text"], "document fields joined as the document text")
    depth: int = option(DEFAULT_DEPTH, "rerank the top DEPTH documents of the input run (the rest stays below)")
    max_length: int = option(512, "maximum tokens of query + document (longest first truncated)")
    batch_size: int = option(16, "training batch size (pairs)")
    eval_batch_size: int = option(32, "scoring batch size (pairs)")
    epochs: int = option(3, "training epochs")
    lr: float = option(2e-5, "AdamW learning rate")
    head_lr: float = option(0.0, "learning rate of the scoring head (parameters outside the encoder); 0: same as LR")
    warmup: float = option(0.1, "fraction of training steps with linear learning-rate warm-up")
    weight_decay: float = option(0.01, "AdamW weight decay")
    hard_negatives: int = option(4, "negatives per positive sampled from the first-stage top NEGATIVE_DEPTH (minus positives)")
    negative_depth: int = option(30, "first-stage depth that hard negatives are drawn from")
    random_negatives: int = option(1, "negatives per positive drawn at random from the corpus")
    seed: int = option(42, "seed of sampling, head initialisation and shuffling")
    device: str = device_option()
    precision: str = inference_precision_option()
    backend: str = backend_option()
    show_progress: bool = option(True, "progress of scoring (a bar on a terminal, plain lines in a log); training always shows its own")
    phases: list[dict] = option([], "training phases run in order, each a table overriding some of " + ", ".join(PHASE_KEYS)
                                + " (a curriculum: short inputs first); [] = one phase of the options above")


@register_system
class CrossEncoderReranker(Reranker):
    """Cross-encoder reranker (monoBERT / AIRwaves SciBERT), trainable with binary cross-entropy."""

    name = "cross-encoder"
    description = "cross-encoder reranker (SciBERT by default), fine-tuned with BCE on mined negatives"
    Options = CrossEncoderOptions
    learnable = True
    default_depth: ClassVar[int] = DEFAULT_DEPTH

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        check_backend(self.options.backend, self.options.precision, self.options.device)
        self.phase_options()  # a bad phase is refused before any model loads
        self._model: Any = None
        self.trained = False

    # ----------------------------------------------------------------- model
    @property
    def model(self) -> Any:
        """The ``CrossEncoder`` (loaded from ``options.model`` on first use)."""
        if self._model is None:
            from evalkit.systems._models.modelio import seed_everything

            seed_everything(self.options.seed)  # a fresh scoring head is seeded
            o = self.options
            self._model = load_cross_encoder(o.model, o.max_length, o.device, o.backend, o.precision)
        return self._model

    # ----------------------------------------------------------------- learning
    def phase_options(self) -> list[CrossEncoderOptions]:
        """The options of each training phase: ``options`` with the phase's overrides (one phase without ``phases``)."""
        o = self.options
        if not isinstance(o.phases, list):
            raise UsageError(f"{self.name}: phases must be a list of tables, e.g. phases = [{{ epochs = 2, max_length = 64 }}]")
        out = []
        for number, phase in enumerate(o.phases or [{}], start=1):
            if not isinstance(phase, dict):
                raise UsageError(f"{self.name}: phase {number} must be a table, e.g. {{ epochs = 2, max_length = 64 }}")
            unknown = sorted(set(phase) - set(PHASE_KEYS))
            if unknown:
                raise UsageError(f"{self.name}: phase {number}: unknown key {unknown[0]!r} (known: {', '.join(PHASE_KEYS)})")
            for key, value in phase.items():
                default = getattr(o, key)
                if isinstance(value, bool) or not isinstance(value, (int, float)) or (isinstance(default, int) and not isinstance(value, int)):
                    kind = "whole number" if isinstance(default, int) else "number"
                    raise UsageError(f"{self.name}: phase {number}: {key} = {value!r} must be a {kind}")
            out.append(dataclasses.replace(o, **phase))
        return out

    def fit(self, corpus: Corpus, queries: Queries, qrels: Qrels, first_stage: Run | None = None) -> "CrossEncoderReranker":
        """Fine-tune with BCE on positives + first-stage hard negatives + random negatives.

        Without ``first_stage`` the candidates are mined with the registered
        ``bm25`` system (stemmed) to ``negative_depth``. With ``phases`` the
        model is trained once per phase, in order, each phase with its own
        negatives, warm-up and linear decay (a curriculum over input length).
        """
        from evalkit.systems.cross_encoder_training import bce_examples, check_training_data, mine_candidates, train_pairs

        o = self.options
        check_fields(corpus, o.fields)
        train_queries, positives = check_training_data(corpus, queries, qrels)
        if first_stage is None:
            first_stage = mine_candidates(corpus, train_queries, o.negative_depth)
        phases = self.phase_options()
        for number, phase in enumerate(phases, start=1):
            examples = bce_examples(corpus, positives, first_stage, phase.hard_negatives, phase.negative_depth, phase.random_negatives,
                                    phase.seed)
            train_pairs(self.model, examples, corpus, train_queries, phase,
                        desc=f"{self.name} fit" + (f", phase {number} of {len(phases)}" if len(phases) > 1 else ""))
        self.trained = True
        return self

    # ----------------------------------------------------------------- reranking
    def score_pairs(self, queries: Sequence[str], texts: Sequence[str]) -> list[float]:
        """All pairs through the model at once, batched by length (the base class owns the rest of rerank)."""
        o = self.options
        return score_pairs(self.model, list(zip(queries, texts)), max_length=o.max_length, batch_size=o.eval_batch_size,
                           precision=autocast_precision(o.backend, o.precision), show_progress=o.show_progress,
                           desc=f"{self.name} rerank")

    def score(self, query: str, texts: list[str]) -> list[float]:
        return self.score_pairs([query] * len(texts), texts)

    def pair_order(self, queries: Sequence[str], texts: Sequence[str]) -> list[int]:
        """:func:`score_pairs`' own order (by length, stable), so an engine's work units keep its batches."""
        return sorted(range(len(texts)), key=lambda i: len(queries[i]) + len(texts[i]))

    def model_batch_size(self) -> int:
        return int(self.options.eval_batch_size)

    def prepare_worker(self) -> None:
        """On an engine actor: a model loaded by the driver moves to the device its option picks there (bf16 on GPU
        follows from ``precision`` as locally)."""
        if self._model is not None:
            from evalkit.systems._models.modelio import pick_device

            self._model.to(pick_device(self.options.device))

    def fingerprint(self) -> str:
        """The trained weights' hash (an untrained model is named by its options)."""
        if not self.trained:
            return ""
        from evalkit.systems._models.modelio import weights_sha256

        return weights_sha256(self.model.transformers_model)

    # ----------------------------------------------------------------- persistence
    def config(self) -> dict[str, Any]:
        return {**super().config(), "trained": self.trained}

    def save(self, folder: str | Path) -> Path:
        """``folder/evalkit-system.json`` + ``folder/model/`` (the sentence-transformers CrossEncoder)."""
        folder = super().save(folder)
        self.model.save_pretrained(str(folder / MODEL_SUBFOLDER))
        return folder

    @classmethod
    def load(cls, folder: str | Path) -> "CrossEncoderReranker":
        system = super().load(folder)
        weights = Path(folder) / MODEL_SUBFOLDER
        if weights.exists():
            o = system.options
            system._model = load_cross_encoder(str(weights), o.max_length, o.device, o.backend, o.precision)
            system.trained = bool(cls.saved_config(folder).get("trained", False))
        return system  # type: ignore[return-value]
