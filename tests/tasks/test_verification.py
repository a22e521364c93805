"""Claim verification: NLI verifier (tiny BERT, label mapping), LLM verifier strategies
through a scripted OpenAI-compatible server (bad labels retried / mapped / reported),
NEI calibration, and the ClimateCheck Subtask II submission written and scored. No network."""
from __future__ import annotations

import re

import pytest

from evalkit.data.corpus import Corpus, Queries
from evalkit.data import Run
from evalkit.core.errors import UsageError
from evalkit.data.labels import LABELS, NEI, REFUTES, SUPPORTS
from support.fake_llm_server import FakeChatServer
from evalkit.pipelines.registry import load_system
from evalkit.systems.verify_llm import read_batched, read_label, read_yes_no
from evalkit.systems.verify_nli import enforce_nei_share, parse_label_map

TRUTH = {"alpha": SUPPORTS, "beta": REFUTES, "gamma": NEI}  # the word in an abstract decides its label


@pytest.fixture(autouse=True)
def _cache_in_tmp(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALKIT_CACHE", str(tmp_path / "cache"))


def data(n_claims: int = 2, n_docs: int = 10):
    words = list(TRUTH)
    corpus = Corpus.from_records([{"_id": f"a{i}", "title": f"title {i}", "text": f"finding {words[i % 3]} here"}
                                  for i in range(n_docs)], id_field="_id")
    queries = Queries([f"c{j}" for j in range(1, n_claims + 1)], [f"claim number {j}" for j in range(1, n_claims + 1)])
    run = Run.from_scores({q: {f"a{i}": float(n_docs - i) for i in range(n_docs)} for q in queries.ids}, name="ce")
    gold = {(q, f"a{i}"): TRUTH[words[i % 3]] for q in queries.ids for i in range(n_docs)}
    return corpus, queries, run, gold


def truth_of(text: str) -> str:
    return next(label for word, label in TRUTH.items() if word in text)


def oracle(messages, n):
    """Answers every verification prompt kind correctly."""
    prompt = next(m["content"] for m in messages if m["role"] == "user")  # the question, also after a reminder
    if "Abstracts:\n" in prompt:
        return "\n".join(f"[{k}] {truth_of(line)}" for k, line in enumerate(re.findall(r"^\[\d+\] .*$", prompt, re.M), 1))
    label = truth_of(prompt)
    if "yes or no" in prompt:
        return "Yes." if label != NEI else "No."
    return label


# ------------------------------------------------------------------ parsing and calibration
@pytest.mark.parametrize("answer, expected", [
    ("Supports", SUPPORTS), ("refutes.", REFUTES), ("Not Enough Information", NEI), ("NEI", NEI),
    ("The abstract contradicts the claim.", REFUTES), ("Label: SUPPORTS", SUPPORTS), ("neutral", NEI),
    ("The claim is not supported by the abstract.", NEI), ("The abstract doesn't refute it", NEI),
    ("Supports. The claim is not new.", SUPPORTS), ("It does not give enough detail to support it", NEI),
    ("banana", None), ("", None),
])
def test_read_label(answer, expected):
    assert read_label(answer) == expected


def test_read_yes_no_and_batched_lines():
    assert read_yes_no("Yes, it does.") is True and read_yes_no(" no") is False and read_yes_no("maybe") is None
    answer = "[2] Refutes\n1: supports\n[2] Supports\n[7] Refutes\nnoise"
    assert read_batched(answer, 3) == [SUPPORTS, REFUTES, None]  # first answer for [2] kept; [7] out of range


def test_enforce_nei_share_relabels_least_evidence_first():
    labels = [SUPPORTS, REFUTES, NEI, SUPPORTS]
    assert enforce_nei_share(labels, [0.9, 0.2, 0.0, 0.5], 0.5) == [SUPPORTS, NEI, NEI, SUPPORTS]
    assert enforce_nei_share(labels, [0.9, 0.2, 0.0, 0.5], 0.25) == labels  # already reached
    assert enforce_nei_share(labels, [0.9, 0.2, 0.0, 0.5], 1.0) == [NEI] * 4
    with pytest.raises(UsageError, match=r"min_nei_share must lie in \[0, 1\]"):
        enforce_nei_share(labels, [0] * 4, 1.5)


def test_label_map_by_name_number_and_its_errors():
    id2label = {0: "ENTAILMENT", 1: "neutral", 2: "Contradiction"}
    assert parse_label_map(["entailment=Supports", "1=NEI", "contradiction=refutes"], id2label) == {0: SUPPORTS, 1: NEI, 2: REFUTES}
    with pytest.raises(UsageError, match="no class 'maybe'.*0=ENTAILMENT"):
        parse_label_map(["maybe=Supports"], id2label)
    with pytest.raises(UsageError, match="leaves model class.*2=Contradiction"):
        parse_label_map(["0=Supports", "1=NEI"], id2label)
    with pytest.raises(UsageError, match="write MODEL_LABEL=LABEL"):
        parse_label_map(["0=Probably"], id2label)


# ------------------------------------------------------------------ NLI verifier
@pytest.mark.neural
def test_nli_verifier_with_tiny_bert_and_label_mapping(tmp_path):
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from support.tiny_models import tiny_bert

    model = tiny_bert(tmp_path / "nli", num_labels=3)
    corpus, queries, run, _ = data(2, 4)
    mapping = ["LABEL_0=Supports", "2=Refutes", "label_1=Not Enough Information"]
    out = load_system("nli-verifier", model=model, label_map=mapping, batch_size=3).label(corpus, queries, run, depth=3)
    assert out.n_rows == 6 and set(out.labels.tolist()) <= set(LABELS)
    assert out.to_lists() == run.to_lists(3) and out.to_scores()["c1"] == run.to_scores(3)["c1"]
    # the label is the arg-max class of the model on (abstract, claim), mapped
    tokenizer, clf = AutoTokenizer.from_pretrained(model), AutoModelForSequenceClassification.from_pretrained(model).eval()
    text = corpus.text(0)
    with torch.no_grad():
        best = int(clf(**tokenizer(text, "claim number 1", return_tensors="pt")).logits.argmax())
    assert labels_of(out)[("c1", "a0")] == [SUPPORTS, NEI, REFUTES][best]
    all_nei = load_system("nli-verifier", model=model, label_map=mapping, min_nei_share=1.0).label(corpus, queries, run, depth=3)
    assert set(all_nei.labels.tolist()) == {NEI}
    with pytest.raises(UsageError, match="label_map leaves model class"):
        load_system("nli-verifier", model=model, label_map=["0=Supports"]).label(corpus, queries, run, depth=3)


# ------------------------------------------------------------------ LLM verifier
def verifier(server, **options):
    settings = dict(backend="openai", model="fake", base_url=server.base_url, retry_wait=0.01)
    return load_system("llm-verifier", **{**settings, **options})


def labels_of(run: Run) -> dict[tuple[str, str], str]:
    return {(run.query_ids[q], run.doc_ids[d]): lab for q, d, lab in zip(run.qidx.tolist(), run.didx.tolist(), run.labels.tolist())}


@pytest.mark.parametrize("strategy", ["one-step", "two-step", "hybrid", "batched"])
def test_llm_verifier_strategies_with_a_scripted_server(strategy):
    corpus, queries, run, gold = data(2, 7)
    with FakeChatServer(oracle) as server:
        system = verifier(server, strategy=strategy, batch_pairs=3)
        out = system.label(corpus, queries, run, depth=7)
    assert labels_of(out) == gold
    expected_requests = {"one-step": 14, "two-step": 14 + 10, "hybrid": 14 + 10, "batched": 2 * 3}[strategy]
    assert len(server.requests) == expected_requests
    assert system.stats.get("bad_labels", 0) == 0


def test_batched_prompt_carries_the_nei_target_and_fills_missing_lines():
    corpus, queries, run, gold = data(1, 4)

    def lazy(messages, n):  # the batched answer names only [1]; the rest are asked one by one
        prompt = messages[-1]["content"]
        return "[1] " + truth_of(prompt.split("[1]")[1]) if "Abstracts:" in prompt else oracle(messages, n)

    with FakeChatServer(lazy) as server:
        system = verifier(server, strategy="batched", batch_pairs=4, min_nei_share=0.25)
        out = system.label(corpus, queries, run, depth=4)
    assert "at least 25% of your labels should be Not Enough Information" in server.requests[0]["messages"][-1]["content"]
    assert system.stats["batched_missing"] == 3 and labels_of(out) == {k: v for k, v in gold.items()}


def test_bad_labels_are_retried_then_mapped_or_refused(capsys):
    corpus, queries, run, gold = data(1, 3)
    with FakeChatServer(lambda m, n: oracle(m, n) if len(m) > 2 else "I think so!") as server:  # fixed on the reminder
        out = verifier(server).label(corpus, queries, run, depth=3)
    assert labels_of(out) == gold and len(server.requests) == 6
    assert server.requests[3]["messages"][-1]["content"].startswith("Answer with exactly one of")
    with FakeChatServer(lambda m, n: "banana") as server:
        out = verifier(server, label_retries=2, model="fake-banana").label(corpus, queries, run, depth=3)
    assert set(out.labels.tolist()) == {NEI} and len(server.requests) == 9
    assert "3 answer(s) held no label after 2 retries" in capsys.readouterr().err
    with FakeChatServer(lambda m, n: "banana") as server:
        with pytest.raises(UsageError, match="held no label"):
            verifier(server, on_bad_label="error", cache=False).label(corpus, queries, run, depth=3)


def test_nei_calibration_relabels_lowest_ranked_pairs():
    corpus, queries, run, _ = data(1, 6)
    with FakeChatServer(lambda m, n: "Supports") as server:
        out = verifier(server, min_nei_share=0.5).label(corpus, queries, run, depth=6)
    assert [labels_of(out)[("c1", f"a{i}")] for i in range(6)] == [SUPPORTS] * 3 + [NEI] * 3


def test_bad_verifier_options():
    with pytest.raises(UsageError, match="strategy must be one of"):
        load_system("llm-verifier", model="m", strategy="three-step")
    with pytest.raises(UsageError, match="on_bad_label must be nei or error"):
        load_system("llm-verifier", model="m", on_bad_label="drop")


# ------------------------------------------------------------------ submission and score
def test_submission_written_validated_and_scored(tmp_path):
    from evalkit.io.reading import read_qrels, read_run
    from evalkit.tasks.submissions import write_submission
    from evalkit.tasks import get_task

    corpus, queries, run, gold = data(3, 12)
    with FakeChatServer(oracle) as server:
        labelled = verifier(server, strategy="two-step").label(corpus, queries, run, depth=10)
    out = write_submission(labelled, "climatecheck2025-verification", tmp_path / "predictions.csv")
    lines = out.read_text().splitlines()
    assert lines[0] == "claim_id,abstract_id,rank,label" and len(lines) == 31 and lines[1] == "c1,a0,1,Supports"
    gold_csv = tmp_path / "gold.csv"
    # gold: judged pairs a0..a5 of each claim; one gold label flipped so that F1 < 1
    rows = [(q, d, label) for (q, d), label in gold.items() if int(d[1:]) < 6]
    rows[0] = (rows[0][0], rows[0][1], REFUTES)
    gold_csv.write_text("claim_id,abstract_id,annotation\n" + "".join(f"{q},{d},{label}\n" for q, d, label in rows))
    score = get_task("climatecheck2025-verification").score(read_run(str(out)), read_qrels(str(gold_csv)))
    f1 = score.values["F1 (weighted)"]
    assert score.official == "Subtask II score (F1 + Recall@10)" and 0.85 < f1 < 1.0
    assert score.official_value == pytest.approx(f1 + score.values["Recall@10"])
    assert score.values["Accuracy"] == pytest.approx(17 / 18)


def test_cli_pipeline_bm25_rankgpt_llm_verifier_to_a_verification_submission(tmp_path, cli):
    """`evalkit run` on a TOML config chaining bm25 -> rankgpt -> llm-verifier, both LLM stages on the scripted server."""
    import json

    words = list(TRUTH)
    (tmp_path / "corpus.jsonl").write_text("".join(
        json.dumps({"_id": f"a{i}", "title": f"claim study {i}", "text": f"finding {words[i % 3]} here"}) + "\n" for i in range(12)))
    (tmp_path / "claims.jsonl").write_text("".join(json.dumps({"_id": f"c{j}", "text": f"claim study {j}"}) + "\n" for j in (1, 2)))

    def answer(messages, n):
        prompt = next(m["content"] for m in messages if m["role"] == "user")
        return "[2] > [1]" if "passages" in prompt else oracle(messages, n)

    with FakeChatServer(answer) as server:
        llm = f'backend = "openai", model = "fake", base_url = "{server.base_url}", retry_wait = 0.01'
        (tmp_path / "p.toml").write_text(
            'name = "llm-pipeline"\n\n[[stages]]\nname = "bm25"\nsystem = "bm25"\nk = 12\n\n'
            f'[[stages]]\nname = "rankgpt"\nsystem = "rankgpt"\ndepth = 12\noptions = {{ {llm}, window = 4, step = 2 }}\n\n'
            f'[[stages]]\nname = "verify"\nsystem = "llm-verifier"\ndepth = 10\noptions = {{ {llm}, strategy = "two-step" }}\n')
        result = cli("run", tmp_path / "p.toml", "--corpus", tmp_path / "corpus.jsonl", "--queries", tmp_path / "claims.jsonl",
                     "--out", tmp_path / "run.trec", "--submit", "climatecheck2025-verification",
                     "--submission", tmp_path / "predictions.csv", env={"EVALKIT_CACHE": str(tmp_path / "cache")})
    assert result.returncode == 0, result.stderr
    rows = (tmp_path / "predictions.csv").read_text().splitlines()
    assert rows[0] == "claim_id,abstract_id,rank,label" and len(rows) == 21
    for row in rows[1:]:
        claim, abstract, rank, label = row.split(",")
        assert label == TRUTH[words[int(abstract[1:]) % 3]]
    assert any(r["messages"][-1]["content"].endswith("do not say any word or explain.") for r in server.requests)
