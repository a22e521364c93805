"""RankGPT: window arithmetic, answer parsing, prompts, end-to-end reranking through a
scripted OpenAI-compatible server (cache, malformed answers), alpha fusion through
evalkit.fusion.alpha_fusion, and a tiny local causal LM. No network."""
from __future__ import annotations

import re

import pytest

from evalkit.data.corpus import Corpus, Queries
from evalkit.data import Run
from evalkit.core.errors import UsageError
from support.fake_llm_server import FakeChatServer
from evalkit.pipelines.registry import load_system
from evalkit.systems.rankgpt import window_spans
from evalkit.systems.rankgpt_prompts import parse_permutation, permutation_prompt, truncate_words


@pytest.fixture(autouse=True)
def _cache_in_tmp(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALKIT_CACHE", str(tmp_path / "cache"))


# ------------------------------------------------------------------ window arithmetic
def test_windows_bottom_to_top_window_20_step_10_on_35_docs():
    spans = window_spans(35, 20, 10)
    assert spans == [(15, 35), (5, 25), (0, 15)]
    assert [end for _, end in spans] == sorted((end for _, end in spans), reverse=True)
    assert set().union(*(range(a, b) for a, b in spans)) == set(range(35))


@pytest.mark.parametrize("n, expected", [(0, []), (1, [(0, 1)]), (20, [(0, 20)]), (21, [(1, 21), (0, 11)]),
                                         (100, [(80, 100), (70, 90), (60, 80), (50, 70), (40, 60), (30, 50), (20, 40), (10, 30), (0, 20)])])
def test_windows_edge_cases(n, expected):
    assert window_spans(n, 20, 10) == expected


def test_bad_window_settings_are_refused():
    with pytest.raises(UsageError, match="window >= 2"):
        window_spans(10, 1, 1)
    with pytest.raises(UsageError, match="step <= window"):
        load_system("rankgpt", model="m", window=5, step=6)


# ------------------------------------------------------------------ parsing
@pytest.mark.parametrize("answer, n, order, named", [
    ("[3] > [1] > [2]", 3, [2, 0, 1], 3),
    ("[2] > [2] > [9] > [0] > [1]", 3, [1, 0, 2], 2),  # repeat, out of range, zero dropped; [3] appended
    ("I cannot rank these passages.", 3, [0, 1, 2], 0),  # no numbers: previous order
    ("3, 1", 3, [2, 0, 1], 2),  # no brackets: every integer
    ("Passage [2] (published 2019) > [1]", 3, [1, 0, 2], 2),  # brackets preferred over other numbers
    ("[ 4 ]>[1]", 4, [3, 0, 1, 2], 2),
    ("", 0, [], 0),
])
def test_parse_permutation(answer, n, order, named):
    assert parse_permutation(answer, n) == (order, named)


def test_prompt_numbers_passages_and_asks_for_the_order():
    messages = permutation_prompt("does x cause y", ["alpha text", "beta text"])
    users = [m["content"] for m in messages if m["role"] == "user"]
    assert users[1] == "[1] alpha text" and users[2] == "[2] beta text"
    assert "[] > []" in users[-1] and "does x cause y" in users[-1] and "2 passages" in users[-1]
    assert messages[0]["role"] == "system"
    few = permutation_prompt("q", ["a"], few_shot=True)
    assert len(few) == len(permutation_prompt("q", ["a"])) + 2 and few[2]["content"] == "[2] > [3] > [1]"
    evid = " ".join(m["content"] for m in permutation_prompt("q", ["a"], evidentiary=True))
    assert "regardless of stance" in evid and "claim" in evid
    single = permutation_prompt("q", ["alpha", "beta"], single_turn=True)
    assert len(single) == 2 and "[1] alpha\n[2] beta" in single[1]["content"] and "[] > []" in single[1]["content"]
    assert truncate_words("one two  three four", 2) == "one two" and truncate_words("a b", 0) == "a b"


# ------------------------------------------------------------------ end to end
def corpus_queries_run(n_docs: int = 35):
    """Docs d00..d34 whose hidden relevance is their number; the input run ranks them backwards."""
    corpus = Corpus.from_records([{"_id": f"d{i:02d}", "title": f"doc{i:02d}", "text": "word " * 50} for i in range(n_docs)],
                                 id_field="_id")
    queries = Queries(["q1", "q2"], ["first query", "second query"])
    run = Run.from_scores({q: {f"d{i:02d}": float(n_docs - i) for i in range(n_docs)} for q in queries.ids}, name="bm25")
    return corpus, queries, run


def oracle(messages, n):
    """Orders the passages of the prompt by their doc number, descending (a perfect ranker)."""
    text = "\n".join(m["content"] for m in messages if m["role"] == "user")
    numbers = [int(number) for _, number in re.findall(r"\[(\d+)\] doc(\d+)", text)]
    best = sorted(range(len(numbers)), key=lambda i: -numbers[i])
    return " > ".join(f"[{i + 1}]" for i in best)


def rankgpt(server, **options):
    return load_system("rankgpt", backend="openai", model="fake", base_url=server.base_url, api_key="secret",
                       retry_wait=0.01, **options)


def test_sliding_window_brings_the_best_ten_to_the_top_and_caches(tmp_path):
    corpus, queries, run = corpus_queries_run(35)
    with FakeChatServer(oracle) as server:
        system = rankgpt(server, passage_words=3)
        out = system.rerank(corpus, queries, run, depth=35)
        assert len(server.requests) == 6  # 3 windows x 2 queries
        again = rankgpt(server, passage_words=3).rerank(corpus, queries, run, depth=35)
        assert len(server.requests) == 6  # all answers from the cache
    top = out.to_lists(10)
    assert top["q1"] == [f"d{i:02d}" for i in range(34, 24, -1)] == top["q2"]
    assert again.to_lists() == out.to_lists()
    assert sorted(out.to_lists()["q1"]) == sorted(run.to_lists()["q1"])
    assert system.stats == {"prompts": 6, "named": 110, "passages": 110, "unparsed": 0}
    assert "word word word word" not in server.requests[0]["messages"][3]["content"]  # passage_words=3
    assert system.config()["options"]["api_key"] == ""  # the key is never saved


@pytest.mark.parametrize("single_turn", [False, True])
def test_depth_keeps_the_rest_below_in_order(single_turn):
    corpus, queries, run = corpus_queries_run(12)
    with FakeChatServer(oracle) as server:
        out = rankgpt(server, single_turn=single_turn).rerank(corpus, queries, run, depth=5)
    ranked = out.to_lists()["q1"]
    assert ranked[:5] == ["d04", "d03", "d02", "d01", "d00"] and ranked[5:] == [f"d{i:02d}" for i in range(5, 12)]


def test_malformed_answers_keep_the_input_order(capsys):
    corpus, queries, run = corpus_queries_run(8)
    with FakeChatServer(lambda m, n: "Sorry, I cannot help with ranking." if n % 2 else "[9] > [9] > banana") as server:
        system = rankgpt(server)
        out = system.rerank(corpus, queries, run, depth=8)
    assert out.to_lists() == run.to_lists()
    assert system.stats["unparsed"] == 2
    assert "2 of 2 answers named no passage" in capsys.readouterr().err


def test_fuse_alpha_goes_through_evalkit_fusion(monkeypatch):
    import evalkit.fusion

    corpus, queries, run = corpus_queries_run(3)  # CE scores 3, 2, 1 for d00, d01, d02
    calls = []
    real = evalkit.fusion.alpha_fusion

    def spy(ce, llm, alpha, **kwargs):
        calls.append((alpha, llm.to_lists()))
        return real(ce, llm, alpha, **kwargs)

    monkeypatch.setattr(evalkit.fusion, "alpha_fusion", spy)
    with FakeChatServer(oracle) as server:  # LLM order d02, d01, d00
        out = rankgpt(server, fuse_alpha=0.4).rerank(corpus, queries, run, depth=3)
    assert calls and calls[0][0] == 0.4 and calls[0][1]["q1"] == ["d02", "d01", "d00"]
    # by hand: CE_norm = 1, .5, 0; LLM_norm = 0, .5, 1 -> .4, .5, .6
    assert out.to_scores()["q1"] == pytest.approx({"d00": 0.4, "d01": 0.5, "d02": 0.6})
    with FakeChatServer(oracle) as server:
        pure = rankgpt(server, fuse_alpha=1.0).rerank(corpus, queries, run, depth=3)
    assert pure.to_lists()["q1"] == ["d00", "d01", "d02"]  # alpha 1: the cross-encoder order


def test_bad_options_and_unknown_documents():
    corpus, queries, run = corpus_queries_run(3)
    with pytest.raises(UsageError, match="prompt must be one of"):
        load_system("rankgpt", model="m", prompt="two-shot")
    with pytest.raises(UsageError, match=r"fuse_alpha must lie in \[0, 1\]"):
        load_system("rankgpt", model="m", fuse_alpha=1.5)
    stranger = Run.from_scores({"q1": {"zz": 1.0}})
    with pytest.raises(UsageError, match="document 'zz' of run run is not in the corpus"):
        load_system("rankgpt", model="m").rerank(corpus, queries.subset(["q1"]), stranger, depth=5)


@pytest.mark.neural
def test_tiny_causal_lm_through_the_transformers_backend(tmp_path):
    from support.tiny_models import tiny_causal_lm

    model = tiny_causal_lm(tmp_path / "lm")
    corpus, queries, run = corpus_queries_run(6)
    system = load_system("rankgpt", model=model, window=4, step=2, passage_words=5, max_new_tokens=12, prompt="few-shot")
    out = system.rerank(corpus, queries, run, depth=6)
    assert system.stats["prompts"] == 2 * len(window_spans(6, 4, 2))
    for q in queries.ids:
        assert sorted(out.to_lists()[q]) == sorted(run.to_lists()[q])
