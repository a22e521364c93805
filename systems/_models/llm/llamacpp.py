"""A ``.gguf`` model through llama.cpp (``pip install llama-cpp-python``; optional).

``Llama(model_path, n_ctx, seed).create_chat_completion(messages, max_tokens,
temperature)``; the chat template is the one stored in the GGUF file. Faster
than transformers on CPU for quantised models, which transformers de-quantises.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any, Callable

from evalkit.core.errors import UsageError
from evalkit.systems._models.llm import LLMBackend, locate_model
from evalkit.systems._models.llm.cache import Messages

INSTALL_HINT = "the llamacpp backend needs llama-cpp-python: pip install llama-cpp-python (or use backend=transformers)"


class LlamaCppBackend(LLMBackend):
    """llama.cpp backend (model loaded on first use)."""

    name = "llamacpp"

    def __init__(self, model: str, *, n_ctx: int = 8192, **kwargs: Any) -> None:
        super().__init__(model, **kwargs)
        self.n_ctx = int(n_ctx)
        self._llama = None

    def load(self):
        if self._llama is None:
            if importlib.util.find_spec("llama_cpp") is None:
                raise UsageError(INSTALL_HINT)
            path = locate_model(self.model)
            if not path.endswith(".gguf") or not Path(path).is_file():
                raise UsageError(f"{self.model}: the llamacpp backend needs a .gguf file")
            from llama_cpp import Llama

            try:
                self._llama = Llama(model_path=path, n_ctx=self.n_ctx, seed=self.seed, verbose=False)
            except (ValueError, RuntimeError, OSError) as exc:
                raise UsageError(f"{path}: llama.cpp cannot load it: {exc}") from None
        return self._llama

    def _answer_all(self, prompts: list[Messages], max_new_tokens: int, done: Callable[[int, str], None]) -> None:
        llama = self.load()
        for i, messages in enumerate(prompts):
            result = llama.create_chat_completion(messages=[dict(m) for m in messages], max_tokens=max_new_tokens,
                                                  temperature=self.temperature, seed=self.seed)
            done(i, str(result["choices"][0]["message"].get("content") or "").strip())
