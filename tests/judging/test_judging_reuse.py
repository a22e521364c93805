"""evalkit reuse: the leave-one-group-out test on a case worked out by hand, its outputs, and the real 4b test runs."""
from __future__ import annotations

import json

import numpy as np
import pytest

import evalkit
from evalkit.core.errors import UsageError
from evalkit.stats.rank_correlation import kendall_tau, tau_ap_b
from support.helpers import CT4B, GOLD_4B, run_cli, shared_or_skip

# q1: a and b relevant, c not; q2: d relevant, e not
GOLD = {"q1": {"a": 1, "b": 1, "c": 0}, "q2": {"d": 1, "e": 0}}
RUNS = {
    "A_1": {"q1": {"a": 3.0, "x": 2.0, "c": 1.0}, "q2": {"d": 2.0, "e": 1.0}},
    "A_2": {"q1": {"x": 3.0, "a": 2.0}, "q2": {"e": 2.0, "d": 1.0}},
    "B_1": {"q1": {"b": 3.0, "c": 2.0, "y": 1.0}, "q2": {"d": 3.0, "z": 2.0}},
}


def by_hand_test():
    return evalkit.reuse(GOLD, *RUNS.values(), names=list(RUNS), depth=2, group_by="^[A-Z]", metric="mrr")


def test_leave_one_group_out_by_hand():
    """Depth-2 pool: q1 a, x (A only), b, c (B only); q2 d (both), e (A only), z (B only).

    MRR with full judgments: A_1 1, A_2 (1/2 + 1/2)/2 = 0.5, B_1 1. Without A's unique a and e: A_1 (0 + 1)/2 = 0.5,
    A_2 (0 + 1/2)/2 = 0.25; without B's unique b and c: B_1 (0 + 1)/2 = 0.5.
    """
    result = by_hand_test()
    found = result.reuse
    assert found.metric == "MRR" and found.full_scores == {"A_1": 1.0, "A_2": 0.5, "B_1": 1.0}
    a, b = found.groups
    assert (a.group, a.unique_pairs, a.removed, a.removed_relevant) == ("A", 3, 2, 1)
    assert (b.group, b.unique_pairs, b.removed, b.removed_relevant) == ("B", 3, 2, 1)
    assert [(r.run, r.full, r.reduced, r.full_rank, r.reduced_rank) for r in a.runs] == [("A_1", 1.0, 0.5, 1, 2), ("A_2", 0.5, 0.25, 3, 3)]
    assert [(r.run, r.change, r.rank_change) for r in b.runs] == [("B_1", -0.5, 1)]
    assert a.reduced_scores == {"A_1": 0.5, "A_2": 0.25, "B_1": 1.0}
    # full [1, 0.5, 1] against reduced [0.5, 0.25, 1]: 2 concordant pairs, 1 tied in the full ranking only
    assert a.kendall_tau == pytest.approx(2 / np.sqrt(3 * 2))
    assert a.tau_ap_variant == "tau_AP,b" and a.tau_ap == pytest.approx(tau_ap_b([1, 0.5, 1], [0.5, 0.25, 1]))
    assert b.kendall_tau == pytest.approx(kendall_tau([1, 0.5, 1], [1, 0.5, 0.5]))
    assert found.summary() == {"largest_drop": -0.5, "most_places_lost": 1, "lowest_kendall_tau": pytest.approx(min(a.kendall_tau, b.kendall_tau)),
                               "lowest_tau_ap": pytest.approx(min(a.tau_ap, b.tau_ap))}
    frame = result.to_pandas()
    assert frame.loc["A_2", "reduced"] == 0.25 and frame.loc["B_1", "group"] == "B"
    assert result.groups_frame().loc["A", "removed_relevant"] == 1


def test_reuse_without_ties_reports_tau_ap_and_unchanged_ranks():
    """Depth 2: q1 a (A, B), x (A), b (B, C), z (C); q2 y (A), c (A, B), w and v (C): no group alone pooled a judged pair."""
    gold = {"q1": {"a": 1, "b": 1}, "q2": {"c": 1}}
    runs = {"A_1": {"q1": ["a", "x"], "q2": ["y", "c"]}, "B_1": {"q1": ["b", "a"], "q2": ["c"]}, "C_1": {"q1": ["z", "b"], "q2": ["w", "v"]}}
    found = evalkit.reuse(gold, *runs.values(), names=list(runs), depth=2, group_by="^[A-Z]", metric="mrr").reuse
    assert found.full_scores == {"A_1": 0.75, "B_1": 1.0, "C_1": 0.25}
    assert [(g.group, g.unique_pairs, g.removed) for g in found.groups] == [("A", 2, 0), ("B", 0, 0), ("C", 3, 0)]
    assert all(g.tau_ap_variant == "tau_AP" and g.tau_ap == 1.0 and g.kendall_tau == 1.0 for g in found.groups)
    assert all(r.change == 0 and r.rank_change == 0 for g in found.groups for r in g.runs)
    official = evalkit.reuse(gold, *runs.values(), names=list(runs), depth=2, group_by="^[A-Z]").reuse
    assert official.metric == "nDCG@10"  # without --metric: the task's official score (trec: the first default metric)


def test_reuse_refuses_what_it_cannot_test():
    with pytest.raises(UsageError, match="at least two groups"):
        evalkit.reuse(GOLD, *RUNS.values(), names=list(RUNS), depth=2, group_by="_")
    with pytest.raises(UsageError, match="at least two runs"):
        evalkit.reuse(GOLD, RUNS["A_1"], depth=2)
    with pytest.raises(UsageError, match="depth"):
        evalkit.reuse(GOLD, *RUNS.values(), depth=0)


def test_reuse_command_writes_markdown_json_and_the_figure(tmp_path):
    gold = tmp_path / "qrels.txt"
    gold.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in GOLD.items() for d, g in docs.items()))
    paths = []
    for name, run in RUNS.items():
        path = tmp_path / f"{name}.trec"
        path.write_text("".join(f"{q} Q0 {d} 0 {s} {name}\n" for q, docs in run.items() for d, s in docs.items()))
        paths.append(path)
    out = tmp_path / "reuse.md"
    done = run_cli("reuse", gold, *paths, "--depth", "2", "--group-by", "^[A-Z]", "--metric", "mrr", "--out", out)
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert "| A_1 | A | 1.0000 | 0.5000 | -0.5000 | 1 -> 2 (+1) |" in text and "![MRR of each run" in text and "reuse.reuse.png" in text
    assert (tmp_path / "reuse.reuse.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    again = run_cli("reuse", gold, *paths, "--depth", "2", "--group-by", "^[A-Z]", "--out", out)
    assert again.returncode == 2 and "exists" in again.stderr
    as_json = tmp_path / "reuse-data.json"  # its figure: reuse-data.reuse.png (reuse.reuse.png is the Markdown one's)
    done = run_cli("reuse", gold, *paths, "--depth", "2", "--group-by", "^[A-Z]", "--metric", "mrr", "--out", as_json)
    assert done.returncode == 0, done.stderr
    data = json.loads(as_json.read_text())
    assert data["metric"] == "MRR" and data["groups"][0]["runs"][0]["reduced"] == 0.5 and data["manifest"]["command"] == "reuse"
    assert data["manifest"]["options"]["groups"] == {"A_1": "A", "A_2": "A", "B_1": "B"}
    table = run_cli("reuse", gold, *paths, "--depth", "2", "--group-by", "^[A-Z]", "--metric", "mrr")
    assert table.returncode == 0 and "leave one group out" in table.stdout and "1 -> 2 (+1)" in table.stdout
    onto_gold = run_cli("reuse", gold, *paths, "--depth", "2", "--group-by", "^[A-Z]", "--out", gold, "--force")
    assert onto_gold.returncode == 2 and "is also an input" in onto_gold.stderr


# ----------------------------------------------------------------- the real CheckThat! 4b test runs
def test_runs_4b() -> list:
    runs = CT4B / "runs"
    return [runs / "other-teams" / "sourcesniffers_final_test.zip", runs / "other-teams" / "sourcesniffers_bm25_test.tsv",
            runs / "airwaves" / "predictions_SciBERT_test_TOP10.tsv", runs / "airwaves" / "E5_base_setup_test_TOP100.tsv",
            runs / "other-teams" / "maustrian3_neural_reranking_test.zip"]


test_runs_4b.__test__ = False  # a helper, not a test


@pytest.mark.realdata
def test_reuse_on_real_4b_test_runs():
    gold = shared_or_skip(GOLD_4B["test"])
    paths = test_runs_4b()
    result = evalkit.reuse(gold, *paths, depth=5, group_by=r"airwaves|(?<=other-teams/)[a-z]+[0-9]*", group_on="path")
    found = result.reuse
    assert found.task == "checkthat2025-4b" and found.metric == "MRR@5"
    assert [g.group for g in found.groups] == ["airwaves", "maustrian3", "sourcesniffers"]
    # the pool, computed plainly from each run's top 5 lists
    lists = [evalkit.read_run(p).to_lists(5) for p in paths]
    groups = ["sourcesniffers", "sourcesniffers", "airwaves", "airwaves", "maustrian3"]
    holders: dict = {}
    for group, run in zip(groups, lists):
        for query, docs in run.items():
            for doc in docs:
                holders.setdefault((query, doc), set()).add(group)
    assert found.pool.size == len(holders)
    qrels = evalkit.read_qrels(gold).to_dict()
    for g in found.groups:
        unique = {k for k, h in holders.items() if h == {g.group}}
        assert g.unique_pairs == len(unique)
        assert g.removed == g.removed_relevant == sum(1 for q, d in unique if d in qrels.get(q, {}))  # 4b: every judgment relevant
        for change in g.runs:  # fewer relevant documents can only lower MRR@5
            assert change.reduced <= change.full and change.full == pytest.approx(found.full_scores[change.run])
    assert found.full_scores["sourcesniffers_final_test"] == pytest.approx(0.6835, abs=5e-5)


def test_an_undefined_official_score_is_refused_in_one_line(tmp_path):
    """ClimateCheck Subtask II without labels: the official score is undefined (the organisers' scorer's 404), so there is
    no leaderboard to test; said in one line, nothing written."""
    gold = tmp_path / "gold.csv"
    gold.write_text("claim_id,claim,abstract_id,annotation\nc1,x,a1,Supports\nc1,x,a2,Not Enough Information\nc2,y,b1,Refutes\n")
    (tmp_path / "A_1.csv").write_text("claim_id,abstract_id,rank\nc1,a1,1\nc2,b1,1\n")
    (tmp_path / "B_1.csv").write_text("claim_id,abstract_id,rank\nc1,a2,1\nc2,zz,1\n")
    done = run_cli("reuse", gold, tmp_path / "A_1.csv", tmp_path / "B_1.csv", "--depth", "1", "--group-by", "^[A-Z]",
                   "--task", "climatecheck2025-verification", "--out", tmp_path / "r.md")
    assert done.returncode == 2 and done.stderr.strip().endswith("is undefined for A_1, B_1: no leaderboard to test (compare another --metric)")
    assert not (tmp_path / "r.md").exists() and not (tmp_path / "r.reuse.png").exists()
    retrieval = evalkit.reuse(gold, tmp_path / "A_1.csv", tmp_path / "B_1.csv", depth=1, group_by="^[A-Z]").reuse
    assert retrieval.task == "climatecheck2025-retrieval" and retrieval.full_scores["A_1"] == 1.0


def test_a_gold_whose_task_keeps_no_query_scores_without_a_traceback(tmp_path):
    """Leaving a group out can remove every relevant judgment of a ClimateCheck claim, and ClimateCheck scores only claims
    with one: a gold (here from the start) whose task keeps no claim used to fail inside evaluation.judge."""
    gold = tmp_path / "gold.csv"
    gold.write_text("claim_id,claim,abstract_id,annotation\nc1,x,a2,Not Enough Information\n")
    result = evalkit.score({"c1": ["a1"]}, gold)
    assert result.task_score.evaluation.n_gold == 0 and result.task_score.evaluation.excluded == ["c1"]
