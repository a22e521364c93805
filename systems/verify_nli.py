"""Claim verification with an NLI sequence classifier (ClimateCheck 2025 Subtask II).

Each (claim, abstract) pair in the top ``depth`` of a run is read by a
three-way NLI model -- premise = abstract, hypothesis = claim, the MNLI
convention (``claim_first`` swaps them) -- and its classes are mapped to
Supports / Refutes / Not Enough Information by ``label_map`` (default
``entailment=Supports, contradiction=Refutes, neutral=Not Enough Information``;
keys are the model's ``id2label`` names, case-insensitive, or class numbers).
The label is the arg-max of the mapped probabilities (classes mapped to the same
label add up). ``min_nei_share`` calibrates (:func:`enforce_nei_share`): the
pairs with the least evidence probability ``P(Supports) + P(Refutes)`` become
NEI until at least that share of labels is NEI.

The system implements the model (:meth:`NLIVerifier.label_pairs`, all pairs
batched by length); the base class :class:`evalkit.pipelines.stages.Labeler` owns the
top ``depth`` (default 10), the texts and writing the labels onto the run.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Sequence

import numpy as np

from evalkit.core.errors import UsageError
from evalkit.data.labels import LABELS, NEI, enforce_nei_share, normalize_label  # noqa: F401 (enforce_nei_share re-exported)
from evalkit.systems._models.modelio import device_option, precision_option
from evalkit.pipelines.registry import register_system
from evalkit.pipelines.stages import LOCAL, Engine, Labeler, Work, option


DEFAULT_MODEL = "MoritzLaurer/DeBERTa-v3-base-mnli-fever-anli"
DEFAULT_MAP = ["entailment=Supports", "contradiction=Refutes", "neutral=Not Enough Information"]


def parse_label_map(pairs: Sequence[str], id2label: Mapping[int, str]) -> dict[int, str]:
    """``{class index: canonical label}`` from ``["entailment=Supports", "2=Refutes", ...]``; every class must be mapped."""
    names = {str(name).strip().lower(): int(index) for index, name in id2label.items()}
    mapping: dict[int, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip().lower()
        label = normalize_label(value)
        if not sep or label is None:
            raise UsageError(f"label_map entry {pair!r}: write MODEL_LABEL=LABEL with LABEL one of {', '.join(LABELS)}")
        index = names.get(key, int(key) if key.isdigit() else None)
        if index is None or index not in id2label:
            known = ", ".join(f"{i}={n}" for i, n in sorted(id2label.items()))
            raise UsageError(f"label_map entry {pair!r}: the model has no class {key!r} (its classes: {known})")
        mapping[index] = label
    unmapped = [f"{i}={id2label[i]}" for i in sorted(id2label) if i not in mapping]
    if unmapped:
        raise UsageError(f"label_map leaves model class(es) {', '.join(unmapped)} unmapped; give every class a label")
    return mapping


@dataclasses.dataclass
class NLIOptions:
    model: str = option(DEFAULT_MODEL, "hub name or local folder of a 3-way NLI sequence classifier")
    label_map: list[str] = option(DEFAULT_MAP, "model class (name or number) = Supports / Refutes / Not Enough Information")
    fields: list[str] = option(["title", "text"], "document fields joined as the premise")
    claim_first: bool = option(False, "feed (claim, abstract) instead of (abstract, claim)")
    max_length: int = option(512, "maximum tokens of the pair (longest first truncated)")
    batch_size: int = option(16, "pairs per batch")
    min_nei_share: float = option(0.0, "calibrate: at least this share of labels is NEI (least evidence first)")
    device: str = device_option()
    precision: str = precision_option()


@register_system
class NLIVerifier(Labeler):
    """Supports / Refutes / NEI from an NLI classifier with a configurable label mapping."""

    name = "nli-verifier"
    distributed = "class probabilities, units of whole batches in length order"
    description = "claim verification with an NLI sequence classifier (entailment/contradiction/neutral mapped to labels)"
    Options = NLIOptions

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        from evalkit.systems._models.modelio import check_torch_precision

        check_torch_precision(self.name, self.options.precision)

    def load(self) -> tuple[Any, Any, dict[int, str], str]:
        """(tokenizer, model, class -> label, device), loaded once."""
        if "_loaded" not in self.__dict__:
            from evalkit.systems._models.modelio import model_load_error, pick_device, resolve_model

            target = resolve_model(self.options.model, "NLI model")
            try:
                from transformers import AutoModelForSequenceClassification, AutoTokenizer

                tokenizer = AutoTokenizer.from_pretrained(target)
                model = AutoModelForSequenceClassification.from_pretrained(target)
            except (OSError, ValueError, KeyError) as exc:
                raise model_load_error(self.options.model, exc, "NLI model") from None
            mapping = parse_label_map(self.options.label_map, model.config.id2label)
            device = pick_device(self.options.device)
            self.__dict__["_loaded"] = (tokenizer, model.to(device).eval(), mapping, device)
        return self.__dict__["_loaded"]

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> list[dict[str, float]]:
        """``{label: probability}`` per (claim, abstract) pair."""
        import torch

        from evalkit.core.progress import progress
        from evalkit.systems._models.modelio import autocast, autocast_dtype

        tokenizer, model, mapping, device = self.load()
        o = self.options
        dtype = autocast_dtype(device, o.precision)
        cast = autocast(device, dtype, model)  # the head in fp32
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
        out: list[dict[str, float]] = [{} for _ in pairs]
        with torch.inference_mode(), cast:
            for start in progress(range(0, len(order), o.batch_size), desc="NLI", unit="batch", enabled=len(order) > o.batch_size):
                chunk = order[start:start + o.batch_size]
                first = [pairs[i][0] if o.claim_first else pairs[i][1] for i in chunk]
                second = [pairs[i][1] if o.claim_first else pairs[i][0] for i in chunk]
                encoded = tokenizer(first, second, padding=True, truncation="longest_first", max_length=o.max_length,
                                    return_tensors="pt").to(device)
                probs = torch.softmax(model(**encoded).logits.float(), dim=-1).tolist()
                for i, row in zip(chunk, probs):
                    for index, p in enumerate(row):
                        out[i][mapping[index]] = out[i].get(mapping[index], 0.0) + p
        return out

    def probability_matrix(self, claims: Sequence[str], texts: Sequence[str]) -> np.ndarray:
        """``P(label)`` per pair, one column per label of ``LABELS`` (the model call an engine distributes)."""
        probs = self.probabilities(list(zip(claims, texts)))
        return np.array([[p.get(label, 0.0) for label in LABELS] for p in probs], dtype=np.float64).reshape(len(probs), len(LABELS))

    def label_pairs(self, claims: Sequence[str], texts: Sequence[str], query_ids: Sequence[str], engine: Engine = LOCAL) -> list[str]:
        """The most probable label per pair (the model work on ``engine``), then at least ``min_nei_share`` NEI (least evidence first)."""
        order = sorted(range(len(texts)), key=lambda i: len(claims[i]) + len(texts[i]))  # probabilities' own batching order
        work = Work(self.probability_matrix, (list(claims), list(texts)), order=order, batch_size=self.options.batch_size)
        matrix = np.asarray(engine.run(work), dtype=np.float64)
        probs = [dict(zip(LABELS, row.tolist())) for row in matrix.reshape(len(texts), len(LABELS))]
        labels = [max(LABELS, key=lambda label: p.get(label, 0.0)) for p in probs]
        evidence = [1.0 - p.get(NEI, 0.0) for p in probs]
        return enforce_nei_share(labels, evidence, self.options.min_nei_share)
