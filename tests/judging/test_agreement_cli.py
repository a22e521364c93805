"""evalkit agreement GOLD_A GOLD_B [RUNS...] and evalkit leaderboard --previous: the figures equal their references on the
same pairs and scores, flipped pairs are every pair ordered both ways, outputs are JSON / Markdown / a figure."""
from __future__ import annotations

import json
import random

import numpy as np
import pytest

from evalkit.cli import main

QUERIES = [f"q{i:02d}" for i in range(12)]
DOCS = [f"d{i:02d}" for i in range(15)]


def cli(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Two golds that disagree on a third of their pairs, and four seeded runs in a folder."""
    folder = tmp_path_factory.mktemp("agree")
    draw = random.Random(7)
    a, b = {}, {}
    for q in QUERIES:
        for d in draw.sample(DOCS, 8):
            grade = draw.choice([0, 0, 1, 2, 3])
            a[(q, d)] = grade
            if draw.random() < 0.9:  # B judges most of A's pairs, a third of them differently
                b[(q, d)] = grade if draw.random() < 0.67 else draw.choice([0, 1, 2, 3])
        b[(q, "extra")] = 1  # and one pair A never judged
    (folder / "a.qrels").write_text("".join(f"{q} 0 {d} {g}\n" for (q, d), g in a.items()))
    (folder / "b.qrels").write_text("".join(f"{q} 0 {d} {g}\n" for (q, d), g in b.items()))
    runs = folder / "runs"
    runs.mkdir()
    for name in ("r1", "r2", "r3", "r4"):
        pick = random.Random(name)
        (runs / f"{name}.trec").write_text("".join(f"{q} Q0 {d} {i + 1} {20 - i} {name}\n"
                                                   for q in QUERIES for i, d in enumerate(pick.sample(DOCS + ["extra"], 10))))
    return folder, a, b


def test_agreement_json_equals_references(files, capsys):
    from scipy.stats import kendalltau
    from sklearn.metrics import cohen_kappa_score

    krippendorff = pytest.importorskip("krippendorff")
    folder, a, b = files
    runs = sorted((folder / "runs").glob("*.trec"))
    code, out, err = cli(capsys, "agreement", folder / "a.qrels", folder / "b.qrels", *runs, "-o", "json", "--permutations", "2000")
    assert code == 0, err
    data = json.loads(out)
    both = sorted(set(a) & set(b))
    x, y = np.array([a[p] for p in both]), np.array([b[p] for p in both])
    assert data["pairs"] == len(both) and data["only_b"] == len(set(b) - set(a)) and data["only_a"] == len(set(a) - set(b))
    assert data["cohen_kappa"] == pytest.approx(cohen_kappa_score(x >= 1, y >= 1))
    assert data["weighted_kappa"] == pytest.approx(cohen_kappa_score(x, y, weights="linear"))
    assert data["krippendorff_alpha"] == pytest.approx(krippendorff.alpha(reliability_data=np.stack([x, y]).astype(float),
                                                                          level_of_measurement="ordinal"))
    assert sum(map(sum, data["confusion_matrix"]["counts"])) == len(both)
    assert sum(q["pairs"] for q in data["per_query"]) == len(both)
    # the leaderboards: nDCG@10 (TREC qrels) of each run under each gold, as evalkit score gives it
    scores = {}
    for side in ("a", "b"):
        for run in runs:
            code, text, _ = cli(capsys, "score", run, folder / f"{side}.qrels", "-o", "json")
            scores[(side, run.stem)] = json.loads(text)["official"]["value"]
    by_run = {r["run"]: r for r in data["runs"]}
    assert data["metric"] == "nDCG@10"
    for name, row in by_run.items():
        assert row["score_a"] == pytest.approx(scores[("a", name)]) and row["score_b"] == pytest.approx(scores[("b", name)])
    names = sorted(by_run)
    sa, sb = [scores[("a", n)] for n in names], [scores[("b", n)] for n in names]
    assert data["kendall_tau"] == pytest.approx(kendalltau(sa, sb).statistic)
    assert all(isinstance(pair, list) and len(pair) == 2 for pair in data["flipped_pairs"])  # a list of run pairs
    flips = {tuple(pair) for pair in data["flipped_pairs"]}
    assert flips == {(f["above_under_a"], f["above_under_b"]) for f in data["flips"]}
    expected = {(i, j) for i in names for j in names if scores[("a", i)] > scores[("a", j)] and scores[("b", i)] < scores[("b", j)]}
    assert flips == expected
    assert all(isinstance(f["significant_a"], bool) and isinstance(f["significant_b"], bool) for f in data["flips"])
    assert {"tau_ap", "rbo"} <= set(data) and -1 <= data["tau_ap"] <= 1 and 0 <= data["rbo"] <= 1
    assert data["manifest"]["command"] == "agreement"


def test_agreement_markdown_and_figure(files, tmp_path, capsys):
    folder, _, _ = files
    runs = sorted((folder / "runs").glob("*.trec"))
    out = tmp_path / "agreement.md"
    code, _, err = cli(capsys, "agreement", folder / "a.qrels", folder / "b.qrels", *runs, "--out", out, "--all-pairs", "tukey")
    assert code == 0, err
    text = out.read_text()
    assert "Cohen's kappa" in text and "Krippendorff's alpha" in text and "Flipped pairs" in text and "agreement.agreement.png" in text
    assert (tmp_path / "agreement.agreement.png").read_bytes()[:4] == b"\x89PNG"
    code, _, err = cli(capsys, "agreement", folder / "a.qrels", folder / "b.qrels", *runs, "--out", out)
    assert code == 2 and "exists" in err  # never overwritten without --force


def test_agreement_without_runs_and_complete(files, tmp_path, capsys):
    folder, a, b = files
    relevant = tmp_path / "relevant.qrels"  # a gold that lists only relevant documents (as BEIR's)
    relevant.write_text("".join(f"{q} 0 {d} 1\n" for (q, d), g in a.items() if g >= 1))
    code, out, err = cli(capsys, "agreement", relevant, folder / "b.qrels", "-o", "json")
    assert code == 0, err
    plain = json.loads(out)
    code, out, err = cli(capsys, "agreement", relevant, folder / "b.qrels", "-o", "json", "--complete", "a")
    complete = json.loads(out)
    assert complete["pairs"] == len(b) > plain["pairs"]  # every pair B judges, the others of A counted 0
    assert "kendall_tau" not in plain and plain["cohen_kappa"] is not None


def test_agreement_bad_input_one_line(files, tmp_path, capsys):
    folder, _, _ = files
    other = tmp_path / "other.qrels"
    other.write_text("z1 0 zz 1\nz2 0 zz 0\n")
    code, _, err = cli(capsys, "agreement", folder / "a.qrels", other)
    assert code == 2 and "in common" in err and len(err.strip().splitlines()) == 1


def test_leaderboard_previous(files, tmp_path, capsys):
    from scipy.stats import kendalltau

    folder, _, _ = files
    old = tmp_path / "old.json"
    code, _, err = cli(capsys, "leaderboard", folder / "runs", "--gold", folder / "a.qrels", "--out", old, "--all-pairs", "none")
    assert code == 0, err
    code, out, err = cli(capsys, "leaderboard", folder / "runs", "--gold", folder / "b.qrels", "--previous", old, "-o", "json",
                         "--all-pairs", "none")
    assert code == 0, err
    new, before = json.loads(out), json.loads(old.read_text())
    was = {r["run"]: r for r in before["ranking"]}
    for entry in new["ranking"]:
        assert entry["previous_rank"] == was[entry["run"]]["rank"]
        assert entry["move"] == entry["previous_rank"] - entry["rank"]
    names = sorted(was)
    now = {r["run"]: r["official"]["value"] for r in new["ranking"]}
    expected = kendalltau([was[n]["official"]["value"] for n in names], [now[n] for n in names]).statistic
    assert new["kendall_tau"] == pytest.approx(expected) and new["previous"]["kendall_tau"] == pytest.approx(expected)
    flips = {tuple(pair) for pair in new["previous"]["flipped_pairs"]}
    assert flips == {(i, j) for i in names for j in names
                     if was[i]["official"]["value"] > was[j]["official"]["value"] and now[i] < now[j]}
    code, out, _ = cli(capsys, "leaderboard", folder / "runs", "--gold", folder / "b.qrels", "--previous", old, "-o", "markdown",
                       "--all-pairs", "none")
    assert "## Changes since old.json" in out and "previous rank" in out
    page = tmp_path / "board.html"
    code, _, err = cli(capsys, "leaderboard", folder / "runs", "--gold", folder / "b.qrels", "--previous", old, "--html", page,
                       "--all-pairs", "none")
    assert code == 0, err and 'id="previous-table"' in page.read_text()
    assert 'id="previous-table"' in page.read_text()


def test_leaderboard_previous_refuses_what_is_no_leaderboard(files, tmp_path, capsys):
    folder, _, _ = files
    bad = tmp_path / "bad.json"
    for content in ("not json", '{"ranking": [{"run": "r1"}]}', "[1, 2]"):
        bad.write_text(content)
        code, out, err = cli(capsys, "leaderboard", folder / "runs", "--gold", folder / "b.qrels", "--previous", bad, "--all-pairs", "none")
        assert code == 2 and "bad.json" in err and len(err.strip().splitlines()) == 1 and out == ""
