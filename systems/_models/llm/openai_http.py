"""Any OpenAI-compatible chat-completions endpoint, over plain HTTP (stdlib ``urllib``).

``POST {base_url}/chat/completions`` with ``{"model", "messages", "max_tokens",
"temperature", "seed"}``; the answer is ``choices[0].message.content``. Works
with OpenAI, vLLM, llama.cpp's server, Ollama, LM Studio, TGI and the like.

Connection errors, timeouts, HTTP 429 and 5xx and unreadable answers are
retried ``retries`` times, waiting ``retry_wait * 2**attempt`` seconds (at
most 30; a numeric ``Retry-After`` of a 429 is honoured up to that cap);
then, or at once for other HTTP errors (401 bad key, 404 unknown model), the
call fails with one :class:`~evalkit.systems._models.llm.LLMError` line. Up to
``concurrency`` requests are in flight at once (a thread pool); answers that
arrived before a failure are cached. The cache key does not include the URL:
the same model name on two endpoints shares its answers.
"""
from __future__ import annotations

import json
import os
import socket
import time
import urllib.error
import urllib.request
from concurrent.futures import CancelledError, ThreadPoolExecutor, as_completed
from typing import Any, Callable

from evalkit.systems._models.llm import LLMBackend, LLMError
from evalkit.systems._models.llm.cache import Messages

DEFAULT_URL = "https://api.openai.com/v1"
MAX_WAIT = 30.0


class RetryableError(Exception):
    """A failure worth another try (connection, timeout, 429, 5xx, unreadable answer)."""

    def __init__(self, message: str, wait: float | None = None) -> None:
        super().__init__(message)
        self.wait = wait


def _short(text: str, limit: int = 200) -> str:
    return " ".join(text.split())[:limit]


def parse_answer(raw: bytes) -> str:
    """``choices[0].message.content`` of a chat-completions answer (RetryableError if unreadable)."""
    try:
        data = json.loads(raw.decode("utf-8"))
        content = data["choices"][0]["message"].get("content")
    except (ValueError, UnicodeDecodeError):
        raise RetryableError(f"answer is not JSON: {_short(raw.decode('utf-8', 'replace'), 80)!r}") from None
    except (KeyError, IndexError, TypeError, AttributeError):
        raise RetryableError("answer has no choices[0].message") from None
    return "" if content is None else str(content)


class OpenAIBackend(LLMBackend):
    """OpenAI-compatible HTTP backend; base URL / key default to ``$OPENAI_BASE_URL`` / ``$OPENAI_API_KEY``."""

    name = "openai"

    def __init__(self, model: str, *, base_url: str = "", api_key: str = "", timeout: float = 60.0, retries: int = 4,
                 retry_wait: float = 1.0, concurrency: int = 4, **kwargs: Any) -> None:
        super().__init__(model or os.environ.get("OPENAI_MODEL", ""), **kwargs)
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_URL).rstrip("/")
        self.api_key = api_key or os.environ.get("OPENAI_API_KEY", "")
        self.timeout = float(timeout)
        self.retries = max(0, int(retries))
        self.retry_wait = max(0.0, float(retry_wait))
        self.concurrency = max(1, int(concurrency))

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def _post_once(self, body: bytes) -> str:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            detail = _short(exc.read().decode("utf-8", "replace") if exc.fp else "") or exc.reason
            if exc.code == 429 or exc.code >= 500:
                after = exc.headers.get("Retry-After") if exc.headers else None
                wait = float(after) if after and after.strip().replace(".", "", 1).isdigit() else None
                raise RetryableError(f"HTTP {exc.code}: {detail}", wait) from None
            raise LLMError(f"{self.url}: HTTP {exc.code}: {detail}") from None
        except (TimeoutError, socket.timeout):
            raise RetryableError(f"no answer within {self.timeout:g} s (timeout option)") from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, (TimeoutError, socket.timeout)):
                raise RetryableError(f"no answer within {self.timeout:g} s (timeout option)") from None
            raise RetryableError(f"cannot connect: {getattr(reason, 'strerror', None) or reason}") from None
        except (ConnectionError, OSError) as exc:
            raise RetryableError(f"connection failed: {exc}") from None
        return parse_answer(raw)

    def complete(self, messages: Messages, max_new_tokens: int) -> str:
        """One answer, with retries and exponential backoff."""
        payload = {"model": self.model, "messages": [dict(m) for m in messages], "max_tokens": max_new_tokens,
                   "temperature": self.temperature, "seed": self.seed}
        body = json.dumps(payload, allow_nan=False).encode("utf-8")
        problem = ""
        for attempt in range(self.retries + 1):
            try:
                return self._post_once(body)
            except RetryableError as exc:
                problem = str(exc)
                if attempt < self.retries:
                    wait = min(self.retry_wait * 2**attempt, MAX_WAIT)
                    time.sleep(min(exc.wait, MAX_WAIT) if exc.wait is not None else wait)
        tries = self.retries + 1
        raise LLMError(f"{self.url}: {problem} (after {tries} tr{'y' if tries == 1 else 'ies'})")

    def _answer_all(self, prompts: list[Messages], max_new_tokens: int, done: Callable[[int, str], None]) -> None:
        if self.concurrency == 1 or len(prompts) == 1:
            for i, messages in enumerate(prompts):
                done(i, self.complete(messages, max_new_tokens))
            return
        failure: LLMError | None = None
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            futures = {pool.submit(self.complete, messages, max_new_tokens): i for i, messages in enumerate(prompts)}
            for future in as_completed(futures):
                try:
                    answer = future.result()
                except LLMError as exc:
                    if failure is None:
                        failure = exc
                        for other in futures:  # stop what has not started; running ones finish and are kept
                            other.cancel()
                    continue
                except CancelledError:
                    continue
                done(futures[future], answer)
        if failure is not None:
            raise failure
