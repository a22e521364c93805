"""Judged@k and the bounds with unjudged documents as relevant in every leaderboard output (table, Markdown, JSON),
equal to scoring each run directly."""
from __future__ import annotations

import json

import pytest

import evalkit
from evalkit.metrics.judgments import bounds
from support.helpers import run_cli

QRELS = {"q1": {"a": 1, "b": 0, "c": -1}, "q2": {"d": 1, "e": 0}, "q3": {"f": 1}}
RUNS = {
    "alpha": {"q1": {"a": 3, "x": 2, "b": 1}, "q2": {"y": 2, "d": 1}, "q3": {"f": 1}},
    "beta": {"q1": {"x": 3, "c": 2, "a": 1}, "q2": {"e": 2, "z": 1}, "q3": {"w": 2, "v": 1}},
}
CC_GOLD = """claim_id,claim,abstract_id,annotation
c1,Sea levels rise,a1,Supports
c1,Sea levels rise,a2,Refutes
c1,Sea levels rise,a3,Not Enough Information
c2,CO2 is plant food,b1,Supports
c2,CO2 is plant food,b2,Not Enough Information
"""


@pytest.fixture()
def board(tmp_path):
    gold = tmp_path / "qrels.txt"
    gold.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items()))
    runs = tmp_path / "runs"
    runs.mkdir()
    for name, run in RUNS.items():
        (runs / f"{name}.trec").write_text("".join(f"{q} Q0 {d} 0 {s} {name}\n" for q, docs in run.items() for d, s in docs.items()))
    return gold, runs


def test_json_leaderboard_has_judged_at_k_and_bounds(board, tmp_path):
    gold, runs = board
    out = tmp_path / "board.json"
    done = run_cli("leaderboard", runs, "--gold", gold, "--metrics", "map p@2", "--out", out, "--top-docs", "2")
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text())
    assert data["manifest"]["options"]["judged_k"] == 2
    for entry in data["ranking"]:
        run = evalkit.read_run(runs / f"{entry['run']}.trec")
        direct = evalkit.score(run, gold, metrics="map p@2 judged@2")
        assert entry["judged"] == {"metric": "Judged@2", "value": pytest.approx(direct.means["Judged@2"])}
        expected = bounds(run, evalkit.read_qrels(gold), direct.task_score.evaluation).means()
        assert set(entry["bounds"]) == set(direct.means)
        for label, (low, high) in expected.items():
            assert entry["bounds"][label] == {"unjudged_nonrelevant": pytest.approx(low), "unjudged_relevant": pytest.approx(high)}
    alpha = next(e for e in data["ranking"] if e["run"] == "alpha")
    assert alpha["unjudged_added"] == 2  # q1 x, q2 y
    assert alpha["judged"]["value"] == pytest.approx((1 / 2 + 1 / 2 + 1) / 3)  # q1 a of a x; q2 d of y d; q3 f alone


def test_markdown_and_table_leaderboards_show_judged_at_k(board, tmp_path):
    gold, runs = board
    out = tmp_path / "board.md"
    assert run_cli("leaderboard", runs, "--gold", gold, "--out", out).returncode == 0
    text = out.read_text()
    assert "| Judged@10 | vs next rank |" in text and "## Judgments" in text
    assert "| nDCG@10 (unjudged non-relevant) | (unjudged relevant) | unjudged retrieved |" in text
    table = run_cli("leaderboard", runs, "--gold", gold)
    assert table.returncode == 0 and "Judged@10" in table.stdout.splitlines()[2]


def test_composite_official_score_gets_the_mean_of_its_components_bounds(tmp_path):
    """ClimateCheck Subtask I: the official score is the mean of Recall@2/5/10 and CC-Bpref, so is its bound."""
    gold = tmp_path / "gold.csv"
    gold.write_text(CC_GOLD)
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "team.csv").write_text("claim_id,abstract_id,rank\nc1,a3,1\nc1,zz,2\nc1,a1,3\nc2,b1,1\nc2,yy,2\n")
    out = tmp_path / "board.json"
    done = run_cli("leaderboard", runs, "--gold", gold, "--out", out)
    assert done.returncode == 0, done.stderr
    entry = json.loads(out.read_text())["ranking"][0]
    official = entry["official"]["metric"]
    parts = ["Recall@2", "Recall@5", "Recall@10", "CC-Bpref"]
    assert entry["bounds"][official]["unjudged_relevant"] == pytest.approx(
        sum(entry["bounds"][p]["unjudged_relevant"] for p in parts) / 4)


@pytest.mark.skipif(not hasattr(__import__("evalkit.core.options", fromlist=["x"]).ScoringOptions, "judged_only"),
                    reason="--judged-only (trec_eval -J) is not in this build's scoring options")
def test_judged_only_leaderboard_gives_full_list_judged_at_k_and_no_bound(board, tmp_path):
    gold, runs = board
    out = tmp_path / "board.json"
    done = run_cli("leaderboard", runs, "--gold", gold, "--metrics", "map", "--judged-only", "--out", out)
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text())
    assert any(note.startswith("judged only:") for note in data["notes"]) and data["manifest"]["options"]["judged_only"] is True
    alpha = next(e for e in data["ranking"] if e["run"] == "alpha")
    assert alpha["metrics"]["MAP"] == 1.0  # condensed: q1 a (b judged non-relevant after it), q2 d, q3 f all at rank 1
    assert alpha["judged"]["value"] == pytest.approx((2 / 3 + 1 / 2 + 1) / 3)  # of the whole rankings, not the condensed ones
    assert all(b["unjudged_relevant"] is None for b in alpha["bounds"].values())
    md = tmp_path / "board.md"
    assert run_cli("leaderboard", runs, "--gold", gold, "--judged-only", "--out", md).returncode == 0
    assert "no bound with them counted relevant applies" in md.read_text()


def test_llm_at_k_beside_judged_at_k_where_the_gold_says_who_judged(board, tmp_path):
    """A qrels with a judges sidecar (evalkit judge's output): each run's LLM@k in the table, Markdown and JSON, equal to
    judge_shares; the sidecar is an input of the manifest. Without a sidecar nothing changes."""
    from evalkit.judging.provenance import judge_shares, judges_sidecar, read_judges

    gold, runs = board
    plain = run_cli("leaderboard", runs, "--gold", gold, "--metrics", "map", "--top-docs", "2", "-o", "json")
    assert plain.returncode == 0 and "LLM@" not in plain.stdout and "llm_judged" not in plain.stdout
    judged_by = {("q1", "a"): "human:ann", ("q1", "b"): "llm:qwen@1f2e", ("q2", "d"): "llm:qwen@1f2e", ("q2", "e"): "human:ann",
                 ("q3", "f"): "llm:qwen@1f2e"}
    with open(judges_sidecar(gold), "w") as sidecar:
        sidecar.write("query_id\tdoc_id\tjudge\n" + "".join(f"{q}\t{d}\t{j}\n" for (q, d), j in judged_by.items()))
    done = run_cli("leaderboard", runs, "--gold", gold, "--metrics", "map", "--top-docs", "2", "-o", "json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    qrels, judges = evalkit.read_qrels(gold), read_judges(gold)
    for entry in data["ranking"]:
        expected = judge_shares(evalkit.read_run(runs / f"{entry['run']}.trec"), qrels, judges, 2)["llm"]
        assert entry["llm_judged"] == {"metric": "LLM@2", "value": pytest.approx(expected)}
    alpha = next(e for e in data["ranking"] if e["run"] == "alpha")
    assert alpha["llm_judged"]["value"] == pytest.approx((0 + 1 / 2 + 1) / 3)  # q1 a (human) x; q2 y d (llm); q3 f (llm)
    assert any(i["role"] == "judges" and i["path"].endswith(".judges.tsv") for i in data["manifest"]["inputs"])
    table = run_cli("leaderboard", runs, "--gold", gold, "--metrics", "map", "--top-docs", "2")
    assert "Judged@2" in table.stdout and "LLM@2" in table.stdout, table.stdout
    markdown = run_cli("leaderboard", runs, "--gold", gold, "--metrics", "map", "--top-docs", "2", "-o", "markdown")
    assert "| LLM@2 |" in markdown.stdout and "- LLM@2: the share of each run's top 2 whose judgment an LLM gave" in markdown.stdout
