"""A scripted OpenAI-compatible server on 127.0.0.1, for tests and offline demos.

``with FakeChatServer(responder) as server:`` starts ``http.server`` on a free
port in a thread; ``server.base_url`` is what the ``openai`` backend needs.
``responder(messages, n)`` gets the request's messages and the 1-based number
of the request, and returns the answer text, or a :class:`Reply` for
anything else (an HTTP error, a body that is not JSON, a slow answer).
``server.requests`` lists every request body received.

Run as a script it serves until stopped, for demos and the reports:
``python tests/support/fake_llm_server.py --port 8011`` answers every judging prompt
of ``evalkit judge`` with a grade from word overlap (:func:`overlap_grade`:
the share of the query's words of 4+ letters found in the passage; 0.5 and
more -> 3, 0.3 -> 2, 0.15 -> 1, else 0): a deterministic stand-in for a model.
"""
from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Union


@dataclass
class Reply:
    """A scripted answer: ``status``, raw ``body`` (default: a chat completion of ``text``), ``delay`` seconds."""

    text: str = ""
    status: int = 200
    body: bytes | None = None
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


Responder = Callable[[list, int], Union[str, Reply]]


def completion(text: str, model: str = "fake") -> bytes:
    """A minimal chat-completions JSON body holding ``text``."""
    return json.dumps({"id": "fake", "object": "chat.completion", "model": model,
                       "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}).encode()


class FakeChatServer:
    """Context manager running the scripted server (see the module docstring)."""

    def __init__(self, responder: Responder, port: int = 0) -> None:
        self.responder = responder
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                length = int(self.headers.get("Content-Length", 0))
                request = json.loads(self.rfile.read(length) or b"{}")
                with outer._lock:
                    outer.requests.append(request)
                    number = len(outer.requests)
                reply = outer.responder(request.get("messages", []), number)
                if isinstance(reply, str):
                    reply = Reply(text=reply)
                if reply.delay:
                    time.sleep(reply.delay)
                body = reply.body if reply.body is not None else completion(reply.text, request.get("model", "fake"))
                try:
                    self.send_response(reply.status)
                    for key, value in {"Content-Type": "application/json", **reply.headers}.items():
                        self.send_header(key, value)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                    pass

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> "FakeChatServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()


WORD = re.compile(r"[a-z]{4,}")


def overlap_grade(messages: list, n: int = 0) -> str:
    """``##final score: G``, G from the word overlap of the prompt's query and passage (see the module docstring)."""
    text = messages[-1]["content"] if messages else ""
    found = re.findall(r"<<<(.*?)>>>", text, re.S)
    if len(found) < 2:
        return "I cannot find a query and a passage."
    query, passage = (set(WORD.findall(part.lower())) for part in found[:2])
    share = len(query & passage) / len(query) if query else 0.0
    grade = 3 if share >= 0.5 else 2 if share >= 0.3 else 1 if share >= 0.15 else 0
    return f"##final score: {grade}"


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="A scripted OpenAI-compatible server: word-overlap relevance grades.")
    parser.add_argument("--port", type=int, default=8011)
    chosen = parser.parse_args()
    with FakeChatServer(overlap_grade, port=chosen.port) as running:
        print(running.base_url, flush=True)
        try:
            threading.Event().wait()  # until interrupted (Ctrl-C) or terminated
        except KeyboardInterrupt:
            pass
