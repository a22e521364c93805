""":class:`OnnxModel`: a Hugging Face model whose inference runs in ONNX Runtime (see :mod:`.onnx_backend`).

It stands where the sentence-transformers model keeps its Hugging Face model
and answers as that model does (``last_hidden_state`` or ``logits``), so the
systems' encode and score paths are unchanged. In training mode, or whenever
gradients are on, it runs the torch model it wraps (training works as
before); after training the next inference re-exports when the weights
changed (a new cache entry). Its ``state_dict`` holds the torch weights plus
a ``backend`` tag (``onnx-fp32`` / ``onnx-int8-per-text``), so model identities
(embedding-cache keys, engine checkpoints) differ between backends (and
from int8 embeddings cached before int8 ran one text at a time).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from evalkit.core.errors import UsageError
from evalkit.systems._models import onnx_backend


class OnnxModel(torch.nn.Module):
    """ONNX Runtime inference in place of ``torch_model`` (kind ``features`` or ``logits``, precision fp32/int8)."""

    def __init__(self, torch_model: torch.nn.Module, kind: str, precision: str) -> None:
        super().__init__()
        self.torch_model = torch_model
        self.kind = kind
        self.precision = precision
        tag = f"onnx-{precision}" + ("-per-text" if precision == "int8" else "")
        self.register_buffer("backend", torch.tensor(list(tag.encode("ascii")), dtype=torch.uint8))
        self._names = onnx_backend.input_names(torch_model)
        self._session: Any = None
        self._weights: str | None = None
        self._stale = True
        self.train(torch_model.training)
        self.refresh()  # export (or reuse the cached export) now: errors show at load time

    # ------------------------------------------------------------- ONNX side
    def refresh(self) -> None:
        """(Re)open the session when the weights changed since the last export (or none is open)."""
        weights = onnx_backend.export_key(self.torch_model, self.kind)
        if self._session is None or weights != self._weights:
            self._session = onnx_backend.cached_session(self.torch_model, self.kind, self.precision)
            self._weights = weights
        self._stale = False

    def run(self, **inputs: Any) -> torch.Tensor:
        """The ONNX output for token inputs (tensors), as a CPU float32 tensor.

        Each text runs on its own, without its padding (:func:`text_spans`). For int8 this is what makes an output
        depend on its text only (the same in any batch, any order, any subset): ONNX Runtime quantises activations
        over an operator's whole input, so in a batch a text's int8 output moved with the other texts and the padding.
        For both precisions the products skip the padding, which on CPU outweighs what a padded batch would share
        (``bench/dense_speed.py``, ``bench/rerank_speed.py`` time both).
        """
        if self._stale or self._session is None:
            self.refresh()
        ids = inputs["input_ids"]
        feeds = {}
        for name in self._names:
            value = inputs.get(name)
            if value is None:  # e.g. token_type_ids the caller leaves out: BERT's default is zeros
                value = torch.zeros_like(ids) if name == "token_type_ids" else torch.ones_like(ids)
            feeds[name] = np.ascontiguousarray(value.detach().to("cpu").numpy(), dtype=np.int64)
        if "attention_mask" not in feeds or len(ids) == 0:
            return torch.from_numpy(self._session.run(None, feeds)[0])
        return torch.from_numpy(self._run_per_text(feeds))

    def _run_per_text(self, feeds: dict[str, np.ndarray]) -> np.ndarray:
        """Each row of ``feeds`` through the session alone, cut to its tokens; outputs in place (padding positions zero)."""
        spans = text_spans(feeds["attention_mask"])
        rows = [self._session.run(None, {name: value[i:i + 1, span] for name, value in feeds.items()})[0]
                for i, span in enumerate(spans)]
        if self.kind != "features":  # logits: one row per text
            return np.concatenate(rows, axis=0)
        batch, length = feeds["attention_mask"].shape
        out = np.zeros((batch, length, rows[0].shape[-1]), dtype=np.float32)
        for i, (span, row) in enumerate(zip(spans, rows)):
            out[i, span] = row[0]
        return out

    # ------------------------------------------------------------- the HF model's face
    def forward(self, input_ids: Any = None, attention_mask: Any = None, token_type_ids: Any = None, **kwargs: Any) -> Any:
        if self.training or torch.is_grad_enabled():  # training and gradient paths: the torch model itself
            self._stale = True
            extra = {"token_type_ids": token_type_ids} if token_type_ids is not None else {}
            return self.torch_model(input_ids=input_ids, attention_mask=attention_mask, **extra, **kwargs)
        output = self.run(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
        from transformers.modeling_outputs import BaseModelOutput, SequenceClassifierOutput

        if self.kind == "features":
            return BaseModelOutput(last_hidden_state=output)
        return SequenceClassifierOutput(logits=output)

    def train(self, mode: bool = True) -> "OnnxModel":
        if mode:
            self._stale = True  # weights may change: re-check them before the next inference
        return super().train(mode)

    @property
    def device(self) -> torch.device:
        return torch.device("cpu")

    @property
    def config(self) -> Any:
        return self.torch_model.config

    def save_pretrained(self, *args: Any, **kwargs: Any) -> Any:
        """Saving writes the torch weights (a saved system loads with either backend)."""
        return self.torch_model.save_pretrained(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        """Anything else (``get_input_embeddings``, ``name_or_path``, ...) from the wrapped torch model."""
        try:
            return super().__getattr__(name)
        except AttributeError:
            modules = self.__dict__.get("_modules", {})
            if name.startswith("_") or "torch_model" not in modules:
                raise
            return getattr(modules["torch_model"], name)

    def __getstate__(self) -> dict[str, Any]:
        """Picklable (engines ship systems to their workers): the export is made here first, once, so every worker
        opens its session from the cache instead of exporting the same weights again."""
        if not self.training:
            onnx_backend.exported_model(self.torch_model, self.kind, self.precision)
        state = self.__dict__.copy()
        state["_session"] = None
        state["_stale"] = True
        return state


def text_spans(mask: np.ndarray) -> list[slice]:
    """Per row of an attention mask, the columns of its text: its ones when they are one block (right or left padding),
    else the whole row (an unusual mask is run as given)."""
    spans = []
    for row in mask:
        ones = np.flatnonzero(row)
        contiguous = len(ones) > 0 and ones[-1] - ones[0] + 1 == len(ones)
        spans.append(slice(int(ones[0]), int(ones[-1]) + 1) if contiguous else slice(0, len(row)))
    return spans


def install_onnx(st_model: Any, kind: str, precision: str) -> Any:
    """Put an :class:`OnnxModel` in place of ``st_model``'s Hugging Face model; returns ``st_model``.

    ``kind``: ``features`` (token embeddings, for the dense encoder's pooling)
    or ``logits`` (the cross-encoder's scoring head).
    """
    target = st_model.transformers_model
    if target is None:
        raise UsageError("backend=onnx: the model holds no Hugging Face transformer to export")
    if isinstance(target, OnnxModel):
        return st_model
    shim = OnnxModel(target, kind, onnx_backend.onnx_precision(precision))
    for parent in st_model.modules():
        for name, child in parent.named_children():
            if child is target:
                setattr(parent, name, shim)
                return st_model
    raise UsageError("backend=onnx: cannot find the transformer inside the sentence-transformers model")
