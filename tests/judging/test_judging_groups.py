"""Groups of runs from a regular expression on their file names: capturing groups, paths, and hostile patterns and names."""
from __future__ import annotations

import time

import pytest

import evalkit
from evalkit.core.errors import UsageError
from evalkit.judging.groups import MAX_PATTERN, compile_group_pattern, group_of, groups_of
from support.helpers import run_cli


def test_group_is_the_first_match_or_its_first_capturing_group():
    names = ["teamA_bm25.trec", "teamA_dense.trec", "teamB-x_run.tsv"]
    assert groups_of(names, names, "^[^_]+") == ["teamA", "teamA", "teamB-x"]
    assert groups_of(names, names, r"^team(\w)") == ["A", "A", "B"]
    assert groups_of(names, names, r"(?P<team>team[A-Z])") == ["teamA", "teamA", "teamB"]
    # alternatives: the first capturing group that took part names it, else the whole match
    paths = ["runs/airwaves/E5_test.tsv", "runs/other-teams/frricter_submission_test.tsv"]
    assert groups_of(paths, ["a", "b"], r"airwaves|(?<=other-teams/)([a-z]+)", on="path") == ["airwaves", "frricter"]
    assert groups_of(paths, ["a", "b"], r"^[A-Za-z0-9]+") == ["E5", "frricter"]  # on the file name only


@pytest.mark.parametrize("pattern, message", [
    ("(", "is not a valid regular expression"),
    ("[a-", "is not a valid regular expression"),
    ("*a", "is not a valid regular expression"),
    ("a)", "is not a valid regular expression"),
    ("a{99999999999}", "is not a valid regular expression"),
    ("", "give a regular expression"),
    ("x" * (MAX_PATTERN + 1), "characters long"),
    ("a\x00", "NUL"),
])
def test_bad_patterns_are_refused_in_one_line(pattern, message):
    with pytest.raises(UsageError, match=message):
        compile_group_pattern(pattern)


def test_catastrophic_pattern_is_stopped_not_run_forever():
    compiled = compile_group_pattern("(a|aa)+$")
    start = time.monotonic()
    with pytest.raises(UsageError, match="catastrophic backtracking"):
        group_of(compiled, "a" * 80 + "b.trec", "run")
    assert time.monotonic() - start < 15  # a time limit of 1 s per name, checked by the regex engine


def test_unmatched_and_empty_matches_are_refused_naming_the_run():
    with pytest.raises(UsageError, match="my_run: --group-by 'zzz' does not match 'my_run.trec'; every run needs a group"):
        groups_of(["dir/my_run.trec"], ["my_run"], "zzz")
    with pytest.raises(UsageError, match="with an empty string"):
        groups_of(["my_run.trec"], ["my_run"], "x*")
    assert groups_of(["my_run.trec", "t_1"], ["a", "b"], "^t(?=_)|^.*") == ["my_run.trec", "t"]  # the documented fallback


def test_hostile_names_reach_the_outputs_inert(tmp_path):
    """File names with a tab, a newline, a terminal escape and a formula: grouped, pooled, shown escaped, never obeyed."""
    names = ["=cmd|calc_1.trec", "team\tA_1.trec", "team\nB_1.trec", "\x1b[31mred_1.trec"]
    paths = []
    for i, name in enumerate(names):
        path = tmp_path / name
        path.write_text(f"q1 Q0 d{i} 0 1 t\nq1 Q0 shared 0 2 t\n")
        paths.append(path)
    out = tmp_path / "pool.tsv"
    done = run_cli("pool", *paths, "--depth", "2", "--group-by", "^[^_]+", "--out", out)
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\\x1b[31mred" in done.stdout and "team\\tA" in done.stdout
    sheet = out.read_text()
    assert "'=cmd|calc" in sheet  # a formula start is neutralised in the names columns
    qrels_text = "\n".join(line.replace("\t\t", "\t1\t", 1) if i else line for i, line in enumerate(sheet.splitlines())) + "\n"
    out.write_text(qrels_text)
    assert evalkit.read_qrels(out).to_dict() == {"q1": {"shared": 1, "d0": 1, "d1": 1, "d2": 1, "d3": 1}}


def test_pool_command_refuses_bad_patterns_before_reading_runs(tmp_path):
    run = tmp_path / "a_1.trec"
    run.write_text("q1 Q0 d 0 1 t\n")
    for pattern in ("(", "(a|aa)+$"):
        name = tmp_path / ("a" * 60 + "b.trec")
        name.write_text("q1 Q0 d 0 1 t\n")
        done = run_cli("pool", run, name, "--depth", "1", "--group-by", pattern, "--out", tmp_path / "p.tsv")
        assert done.returncode == 2 and "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert not (tmp_path / "p.tsv").exists()
