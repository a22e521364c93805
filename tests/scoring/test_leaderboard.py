"""`evalkit leaderboard`: the real CheckThat! 4b test submissions, all-pairs rank intervals, adjacent-rank tests, files set apart."""
from __future__ import annotations

import io
import json
import shutil
import zipfile

import pytest
from scipy import stats

from support.helpers import CT4B, GOLD_4B, run_cli, shared_or_skip
from oracles.official_4b import per_query, read_gold, read_preds

from evalkit.cli import main

RUNS = CT4B / "runs"


def cli(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def test_board():
    gold = shared_or_skip(GOLD_4B["test"])
    result = run_cli("leaderboard", RUNS, "--gold", gold, "--glob", "*_test*", "-o", "json")
    assert result.returncode == 0, result.stderr
    return gold, json.loads(result.stdout)


@pytest.mark.realdata
def test_real_test_submissions_first_place_first(test_board, tmp_path):
    from statsmodels.stats.multitest import multipletests

    gold_path, board = test_board
    ranking = board["ranking"]
    assert board["task"] == "checkthat2025-4b" and board["metric_tested"] == "MRR@5" and board["test"] == "wilcoxon"
    assert ranking[0]["file"] == "other-teams/sourcesniffers_final_test.zip"
    assert ranking[1]["file"] == "airwaves/predictions_SciBERT_test_TOP10.tsv"
    assert [r["rank"] for r in ranking] == list(range(1, len(ranking) + 1))
    assert len(ranking) == 19 and ranking[-1]["vs_next"] is None
    scores = [r["official"]["value"] for r in ranking]
    assert scores == sorted(scores, reverse=True)

    # first vs second: Wilcoxon on independently computed per-query MRR@5, Holm over the 18 adjacent pairs
    gold = read_gold(gold_path)
    with zipfile.ZipFile(RUNS / "other-teams" / "sourcesniffers_final_test.zip") as archive:
        (tmp_path / "first.tsv").write_bytes(archive.read("predictions.tsv"))
    first = per_query(gold, read_preds(tmp_path / "first.tsv"))
    second = per_query(gold, read_preds(RUNS / "airwaves" / "predictions_SciBERT_test_TOP10.tsv"))
    assert ranking[0]["official"]["value"] == pytest.approx(first.mean())
    assert ranking[1]["official"]["value"] == pytest.approx(second.mean())
    top = ranking[0]["vs_next"]
    assert top["next"] == "predictions_SciBERT_test_TOP10"
    assert top["p_value"] == pytest.approx(stats.wilcoxon(first, second).pvalue, rel=1e-9)
    assert top["significant"] is False  # 1st and 2nd place are statistically tied
    raw = [r["vs_next"]["p_value"] for r in ranking[:-1]]
    assert [r["vs_next"]["p_adjusted"] for r in ranking[:-1]] == pytest.approx(list(multipletests(raw, method="holm")[1]))
    assert ranking[1]["vs_next"]["significant"] is True  # SciBERT is clearly above the 3rd place

    # every pair by the default all-pairs procedure: 1st and 2nd tied with #1, nobody else; every run a rank interval
    pairs = board["all_pairs"]
    assert pairs["procedure"] == "randomised-tukey" and pairs["permutations"] == 10_000 and pairs["seed"] == 42
    assert pairs["alpha"] == 0.05 and pairs["correction"] is None and pairs["metric"] == "MRR@5" and len(pairs["pairs"]) == 171
    assert pairs["top_group"] == [r["run"] for r in ranking[:2]]
    assert [r["tied_with_top"] for r in ranking] == [True, True] + [False] * 17
    for entry, run in zip(ranking, pairs["runs"]):
        assert entry["run"] == run["run"] and entry["rank_interval"] == run["rank_interval"]
        low, high = entry["rank_interval"]
        assert low <= entry["rank"] <= high and entry["letters"]
    assert ranking[0]["rank_interval"] == [1, 2] and ranking[-1]["rank_interval"][1] == 19
    first_pair = pairs["pairs"][0]
    assert (first_pair["run_a"], first_pair["run_b"]) == (ranking[0]["run"], ranking[1]["run"])
    assert first_pair["interval"][0] < 0 < first_pair["interval"][1] and first_pair["significant"] is False
    assert first_pair["p_value"] <= first_pair["p_adjusted"] and first_pair["es_e"] > 0


@pytest.mark.realdata
def test_other_split_file_is_set_apart(test_board):
    _, board = test_board
    rejected = {r["file"]: r for r in board["not_ranked"]}
    assert set(rejected) == {"airwaves/E5_HN_All__test_TOP100.tsv"}  # named test, holds the dev queries
    entry = rejected["airwaves/E5_HN_All__test_TOP100.tsv"]
    assert entry["problem"] == "other split" and "answers only 151 of 1446 queries" in entry["reason"]


@pytest.mark.realdata
def test_markdown_leaderboard(tmp_path, capsys):
    gold = shared_or_skip(GOLD_4B["test"])
    out = tmp_path / "leaderboard.md"
    code, _, err = cli(capsys, "leaderboard", RUNS / "other-teams", "--gold", gold, "--glob", "sourcesniffers*",
                       "--glob", "maustrian3_neural*", "--out", out)
    assert code == 0, err
    text = out.read_text()
    assert "## Ranking" in text and "## Not ranked" in text and "Every file was ranked." in text
    assert "| 1 | 1 | 1 | a | **yes** | sourcesniffers_final_test.zip | **0.6835** |" in text
    assert "## All pairs: randomised Tukey HSD, alpha 0.05" in text and "10,000 permutations, seed 42" in text
    assert "| maustrian3_neural_reranking_test | maustrian3_neural_nlp_test | +0.0183 |" in text
    assert "Holm-corrected over the 3 adjacent pairs" in text and "<summary>Manifest</summary>" in text
    again = cli(capsys, "leaderboard", RUNS / "other-teams", "--gold", gold, "--out", out)
    assert again[0] == 2 and "exists; pass --force" in again[2]


GOLD = "post_id\ttweet_text\tcord_uid\n" + "".join(f"{i}\ttweet {i}\tdoc{i}\n" for i in range(1, 11))


def run_text(hits: range, queries=range(1, 11)) -> str:
    return "post_id\tpreds\n" + "".join(
        f"{q}\t['doc{q}', 'x']\n" if q in hits else f"{q}\t['x', 'y']\n" for q in queries
    )


def zip_bytes(members: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in members.items():
            archive.writestr(name, text)
    return buffer.getvalue()


def test_invalid_and_other_split_files_never_crash(tmp_path, capsys):
    folder = tmp_path / "subs"
    (folder / "team").mkdir(parents=True)
    gold = tmp_path / "gold.tsv"
    gold.write_text(GOLD)
    (folder / "good.tsv").write_text(run_text(range(1, 9)))
    (folder / "team" / "tied_a.tsv").write_text(run_text(range(1, 6)))
    (folder / "team" / "tied_b.tsv").write_text(run_text(range(6, 11)))
    (folder / "team" / "zipped.zip").write_bytes(zip_bytes({"predictions.tsv": run_text(range(1, 4))}))
    (folder / "broken.tsv").write_text("post_id\tpreds\n1\tdoc1 doc2\n")
    (folder / "two_files.zip").write_bytes(zip_bytes({"a.tsv": run_text(range(1, 3)), "b.tsv": run_text(range(1, 3))}))
    (folder / "gold_copy.tsv").write_text(GOLD)
    (folder / "few.tsv").write_text(run_text(range(1, 3), queries=range(1, 5)))
    (folder / "foreign.tsv").write_text(run_text(range(1, 11), queries=range(1, 41)))
    (folder / "README.md").write_text("notes")
    (folder / ".hidden.tsv").write_text("junk")
    code, out, err = cli(capsys, "leaderboard", folder, "--gold", gold, "-o", "json")
    assert code == 0, err
    board = json.loads(out)
    ranked = [(r["rank"], r["file"]) for r in board["ranking"]]
    assert ranked == [(1, "good.tsv"), (2, "team/tied_a.tsv"), (2, "team/tied_b.tsv"), (4, "team/zipped.zip")]
    problems = {r["file"]: (r["problem"], r["reason"]) for r in board["not_ranked"]}
    assert problems["broken.tsv"][0] == "invalid"
    assert problems["broken.tsv"][1].startswith("line 2: column 'preds' is not a list literal")
    assert problems["two_files.zip"][0] == "invalid" and "exactly one predictions file" in problems["two_files.zip"][1]
    assert problems["gold_copy.tsv"][0] == "invalid" and "looks like a gold/qrels file" in problems["gold_copy.tsv"][1]
    assert problems["few.tsv"][0] == "other split" and "answers only 4 of 10 queries" in problems["few.tsv"][1]
    assert problems["foreign.tsv"] == ("other split", "30 of its 40 queries are not in the gold (the gold has 10); another split?")
    assert set(problems) == {"broken.tsv", "two_files.zip", "gold_copy.tsv", "few.tsv", "foreign.tsv"}
    assert board["skipped"] == ["README.md"]
    tied = board["ranking"][1]["vs_next"]
    assert tied["p_value"] == 1.0 and tied["difference"] == 0.0 and tied["significant"] is False

    flat = cli(capsys, "leaderboard", folder, "--gold", gold, "--no-recursive", "-o", "json")
    assert [r["file"] for r in json.loads(flat[1])["ranking"]] == ["good.tsv"]


def test_identical_files_and_single_file(tmp_path, capsys):
    folder = tmp_path / "subs"
    folder.mkdir()
    gold = tmp_path / "gold.tsv"
    gold.write_text(GOLD)
    (folder / "a.tsv").write_text(run_text(range(1, 6)))
    shutil.copy(folder / "a.tsv", folder / "b.tsv")
    code, out, err = cli(capsys, "leaderboard", folder, "--gold", gold)
    assert code == 0, err
    assert "≈ p 1.0000" in out and "identical content: a.tsv, b.tsv" in out
    (folder / "b.tsv").unlink()
    code, out, err = cli(capsys, "leaderboard", folder, "--gold", gold)
    assert code == 0 and "1 ranked, 0 not ranked" in out


def test_bad_leaderboard_arguments(tmp_path, capsys):
    gold = tmp_path / "gold.tsv"
    gold.write_text(GOLD)
    empty = tmp_path / "empty"
    empty.mkdir()
    for args, expected in (
        ((empty, "--gold", gold), "no run files found"),
        ((tmp_path / "nowhere", "--gold", gold), "not a folder"),
        ((empty, "--gold", tmp_path / "missing.tsv"), "no such file"),
    ):
        code, _, err = cli(capsys, "leaderboard", *args)
        assert code == 2 and len(err.strip().splitlines()) == 1 and expected in err, err


def test_all_pairs_on_the_command_line(tmp_path, capsys):
    """--all-pairs and --correction choose the procedure; every result says procedure, correction, alpha, B and seed."""
    folder = tmp_path / "subs"
    folder.mkdir()
    gold = tmp_path / "gold.tsv"
    gold.write_text("post_id\ttweet_text\tcord_uid\n" + "".join(f"{i}\ttweet {i}\tdoc{i}\n" for i in range(1, 41)))
    for name, hits in (("strong", range(1, 37)), ("middle", range(1, 25)), ("close", range(3, 26)), ("weak", range(1, 6))):
        (folder / f"{name}.tsv").write_text(run_text(hits, queries=range(1, 41)))
    code, out, err = cli(capsys, "leaderboard", folder, "--gold", gold, "-o", "json", "--permutations", "999", "--seed", "7")
    assert code == 0, err
    board = json.loads(out)
    pairs = board["all_pairs"]
    assert pairs["procedure"] == "randomised-tukey" and pairs["permutations"] == 999 and pairs["seed"] == 7
    assert [r["run"] for r in board["ranking"]] == ["strong", "middle", "close", "weak"]
    assert [r["rank_interval"] for r in board["ranking"]] == [[1, 1], [2, 3], [2, 3], [4, 4]]
    assert [r["letters"] for r in board["ranking"]] == ["a", "b", "b", "c"]
    assert board["manifest"]["options"]["all_pairs"] == "randomised-tukey" and board["manifest"]["seed"] == 7
    assert any("999 permutations, seed 7" in line for line in pairs["notes"])
    again = cli(capsys, "leaderboard", folder, "--gold", gold, "-o", "json", "--permutations", "999", "--seed", "7")
    assert json.loads(again[1])["all_pairs"]["pairs"] == pairs["pairs"]  # seeded: the same figures

    code, out, err = cli(capsys, "leaderboard", folder, "--gold", gold, "--all-pairs", "wilcoxon", "--correction", "bh", "-o", "json")
    pairs = json.loads(out)["all_pairs"]
    assert code == 0 and pairs["procedure"] == "wilcoxon" and pairs["correction"] == "bh" and pairs["familywise"] is False
    assert any("not simultaneous" in line for line in pairs["notes"])

    code, out, err = cli(capsys, "leaderboard", folder, "--gold", gold, "--all-pairs", "tukey")
    assert code == 0 and "rank interval  bootstrap  letters  tied with #1" in out
    assert "# all pairs: paired Tukey HSD" in out and "alpha = 0.05" in out and "1 of 4 runs" not in out

    code, out, err = cli(capsys, "leaderboard", folder, "--gold", gold, "--all-pairs", "mcnemar", "--binary", "success@1", "-o", "json")
    assert code == 0 and json.loads(out)["all_pairs"]["metric"] == "Success@1"

    code, out, err = cli(capsys, "leaderboard", folder, "--gold", gold, "--all-pairs", "none", "-o", "json")
    board = json.loads(out)
    assert code == 0 and board["all_pairs"] is None and "rank_interval" not in board["ranking"][0]

    for args, expected in ((("--all-pairs", "mcnemar", "--binary", "mrr@5"), "not a 0/1 outcome"),
                           (("--permutations", "0"), "--permutations must be from 1")):
        code, _, err = cli(capsys, "leaderboard", folder, "--gold", gold, *args)
        assert code == 2 and len(err.strip().splitlines()) == 1 and expected in err, err


def test_all_pairs_that_cannot_run_leave_a_note(tmp_path, capsys):
    folder = tmp_path / "subs"
    folder.mkdir()
    gold = tmp_path / "gold.tsv"
    gold.write_text("post_id\ttweet_text\tcord_uid\n1\ttweet\tdoc1\n2\ttweet\tdoc2\n")
    (folder / "a.tsv").write_text(run_text(range(1, 2), queries=range(1, 3)))
    (folder / "b.tsv").write_text(run_text(range(2, 3), queries=range(1, 3)))
    code, out, err = cli(capsys, "leaderboard", folder, "--gold", gold, "--all-pairs", "tukey")
    assert code == 0, err
    assert "all pairs not compared: Tukey HSD needs at least 2 residual degrees of freedom" in out
