"""One convention for every command (docs/reference/conventions.md): runs positional, the gold in --gold/-g (the
documented positional forms still accepted), a swapped pair says which position wants what, --out follows --output
or its suffix, and an unknown command suggests the closest."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support.helpers import REPO

from evalkit.cli import main

GOLD = str(REPO / "gold" / "examples" / "tweets_gold.tsv")
RUN = str(REPO / "gold" / "examples" / "tweets_run.tsv")
FAST = ["--permutations", "100", "--bootstrap", "100"]


@pytest.fixture()
def other_run(tmp_path):
    lines = (REPO / "gold" / "examples" / "tweets_run.tsv").read_text().splitlines()
    a, b = lines[1].split("\t"), lines[2].split("\t")
    lines[1], lines[2] = f"{a[0]}\t{b[1]}", f"{b[0]}\t{a[1]}"
    path = tmp_path / "team_b.tsv"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def run(*args, capsys):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_score_forms_agree(capsys):
    legacy = run("score", RUN, GOLD, "-o", "json", capsys=capsys)
    option = run("score", RUN, "--gold", GOLD, "-o", "json", capsys=capsys)
    short = run("score", "-g", GOLD, RUN, "-o", "json", capsys=capsys)
    assert legacy[0] == option[0] == short[0] == 0
    assert json.loads(legacy[1])["metrics"] == json.loads(option[1])["metrics"] == json.loads(short[1])["metrics"]


def test_score_needs_exactly_one_gold(capsys):
    code, _, err = run("score", RUN, GOLD, "--gold", GOLD, capsys=capsys)
    assert code == 2 and "two golds" in err and len(err.strip().splitlines()) == 1
    code, _, err = run("score", RUN, capsys=capsys)
    assert code == 2 and "the gold goes second" in err


def test_swapped_pair_says_which_position_wants_what(capsys):
    code, _, err = run("score", GOLD, RUN, capsys=capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "GOLD looks like a run (checkthat-list); the gold goes second (evalkit score RUN GOLD)" in err
    code, _, err = run("compare", RUN, GOLD, RUN, *FAST, capsys=capsys)
    assert code == 2 and "GOLD looks like a run" in err and "--gold GOLD" in err
    code, _, err = run("compare", RUN, GOLD, "--gold", GOLD, *FAST, capsys=capsys)
    assert code == 2 and "RUN looks like a gold/qrels file (checkthat-gold); the runs go positional" in err


@pytest.mark.parametrize("command", ["compare", "report", "reuse"])
def test_gold_option_and_legacy_first_position_agree(command, other_run, tmp_path, capsys):
    extra = {"compare": [*FAST, "-o", "json"], "report": ["--json"], "reuse": ["--depth", "3", "--group-by", "^[^_]+|^.*", "-o", "json"]}[command]
    outputs = []
    for form, args in (("legacy", [GOLD, RUN, other_run]), ("option", [RUN, other_run, "--gold", GOLD])):
        tail = [*extra, str(tmp_path / f"{form}.json")] if command == "report" else extra
        code, out, err = run(command, *args, *tail, capsys=capsys)
        assert code == 0, err
        outputs.append(json.loads((tmp_path / f"{form}.json").read_text()) if command == "report" else json.loads(out))
    for found in outputs:  # the manifests differ only in time stamps: compare the results
        found.pop("manifest", None)
    if command == "report":
        assert outputs[0].keys() == outputs[1].keys()
    else:
        assert outputs[0] == outputs[1]


def test_leaderboard_takes_a_folder_or_files(other_run, tmp_path, capsys):
    code, out, err = run("leaderboard", RUN, other_run, "-g", GOLD, *FAST, "-o", "json", capsys=capsys)
    assert code == 0, err
    files = [row["file"] for row in json.loads(out)["ranking"]]
    assert files == [RUN, other_run]
    code, out, err = run("leaderboard", str(tmp_path), "--gold", GOLD, *FAST, "-o", "json", capsys=capsys)
    assert code == 0, err
    assert [row["file"] for row in json.loads(out)["ranking"]] == ["team_b.tsv"]


@pytest.mark.parametrize("command", ["score", "compare", "leaderboard", "reuse"])
def test_out_follows_output_or_its_suffix(command, other_run, tmp_path, capsys):
    args = {"score": [RUN, GOLD], "compare": [RUN, other_run, "-g", GOLD, *FAST], "leaderboard": [RUN, other_run, "-g", GOLD, *FAST],
            "reuse": [RUN, other_run, "-g", GOLD, "--depth", "3", "--group-by", "^[^_]+|^.*"]}[command]
    (tmp_path / "md").mkdir()
    target = tmp_path / "result.json"
    code, _, err = run(command, *args, "--out", target, capsys=capsys)
    assert code == 0, err
    assert isinstance(json.loads(target.read_text()), dict)  # JSON by the suffix, for every command
    code, _, err = run(command, *args, "--out", tmp_path / "table.json", "-o", "table", capsys=capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "names json by its suffix but --output is table" in err
    assert not (tmp_path / "table.json").exists()
    code, _, err = run(command, *args, "--out", tmp_path / "md" / "result.md", capsys=capsys)
    assert code == 0, err
    assert "|" in (tmp_path / "md" / "result.md").read_text()  # a Markdown table by the suffix


def test_report_out_is_markdown(other_run, tmp_path, capsys):
    code, _, err = run("report", RUN, other_run, "-g", GOLD, "--out", tmp_path / "r.json", capsys=capsys)
    assert code == 2 and "--json NAME.json" in err


def test_unknown_command_suggests_the_closest():
    done = subprocess.run([sys.executable, "-m", "evalkit", "scor", "a", "b"], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.strip() == "evalkit: No such command 'scor'. Did you mean 'score'? (see evalkit --help)"


def test_pool_takes_runs_positional_and_no_gold(other_run, tmp_path, capsys):
    code, _, err = run("pool", RUN, other_run, "--depth", "3", "--out", tmp_path / "sheet.tsv", capsys=capsys)
    assert code == 0, err
    assert (tmp_path / "sheet.tsv").read_text().splitlines()[0].startswith("query_id")
