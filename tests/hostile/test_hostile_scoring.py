"""Hostile inputs against the scoring core (issue 22, part A): no file chooses its own task, no plugin replaces a
task, the CI gate reads only well-typed baselines, every field is parsed in linear time, error lines are bounded,
JSON is strict, and options are checked at the boundary. The harness of :mod:`test_hostile` (the real CLI in a
subprocess under a memory limit: exit code 2, one line, no traceback, the folder unchanged) runs every case."""
from __future__ import annotations

import json
import os
import time
import zipfile
from pathlib import Path
from typing import Callable

import pytest
from test_hostile import RUN, base_files, baseline, evalkit, snapshot, write

BIG = 1 << 20  # every field of a stranger's file is read in linear time at 1 MB
CC_GOLD = "claim_id,abstract_id,annotation\nc1,a1,Supports\nc1,a2,Not Enough Information\nc2,b1,Refutes\nc2,b2,Not Enough Information\n"
CC_HONEST = "claim_id,abstract_id,rank\nc1,a1,1\nc1,a2,2\nc2,b1,1\nc2,b2,2\n"
CC_ATTACKER = "claim_id,abstract_id,rank,label\nc1,zz,1,Supports\nc2,zz,1,Refutes\n"  # nothing relevant retrieved, labels
CC_LABELLED = "claim_id,abstract_id,rank,label\nc1,a1,1,Refutes\nc2,zz,1,Refutes\n"  # Subtask II defined: one judged pair, wrong label
ENTRY = {"name": "r", "task": "trec", "gold": "gold.qrels", "run": "run.trec", "metric": "nDCG@10", "expected": 0.5}


def raw_baseline(folder: Path, text: str) -> Path:
    return write(folder, "base.json", text)


def many_member_zip(folder: Path, members: int = 20_000) -> Path:
    path = folder / "many.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for i in range(members):
            archive.writestr(f"m{i:06d}.trec", "")
    return path


CASES: dict[str, tuple[Callable[[Path], tuple], str]] = {
    # --- the CI gate: a baseline is checked against its schema, one line naming the field
    "baseline allow_partial 'false'": (lambda f: ("check", "--baseline", baseline(f, entry={"allow_partial": "false"})), "'allow_partial'"),
    "baseline expected '1_0'": (lambda f: ("check", "--baseline", baseline(f, entry={"expected": "1_0"})), "field 'expected' is text"),
    "baseline expected '0.5'": (lambda f: ("check", "--baseline", baseline(f, entry={"expected": "0.5"})), "field 'expected' is text"),
    "baseline missing 0": (lambda f: ("check", "--baseline", baseline(f, entry={"missing": 0})), "field 'missing' must be one of"),
    "baseline missing 'none'": (lambda f: ("check", "--baseline", baseline(f, entry={"missing": "none"})), "field 'missing'"),
    "baseline expected negative": (lambda f: ("check", "--baseline", baseline(f, entry={"expected": -0.1})), "negative"),
    "baseline expected null": (lambda f: ("check", "--baseline", baseline(f, entry={"expected": None})), "not a number"),
    "baseline task 7": (lambda f: ("check", "--baseline", baseline(f, entry={"task": 7})), "field 'task' must be non-empty text"),
    "baseline run []": (lambda f: ("check", "--baseline", baseline(f, entry={"run": []})), "field 'run'"),
    "baseline empty name": (lambda f: ("check", "--baseline", baseline(f, entry={"name": ""})), "field 'name'"),
    "baseline unknown entry field": (lambda f: ("check", "--baseline", baseline(f, entry={"tolerance": 1})), "unknown field 'tolerance'"),
    "baseline unknown top field": (lambda f: ("check", "--baseline", baseline(f, allow_partial=True)), "unknown field 'allow_partial'"),
    "baseline version '1'": (lambda f: ("check", "--baseline", baseline(f, evalkit_baseline="1")), "'evalkit_baseline'"),
    "baseline version 2": (lambda f: ("check", "--baseline", baseline(f, evalkit_baseline=2)), "'evalkit_baseline'"),
    "baseline description 3": (lambda f: ("check", "--baseline", baseline(f, description=3)), "'description'"),
    "baseline tolerance true": (lambda f: ("check", "--baseline", baseline(f, tolerance=True)), "not a number"),
    "baseline key twice": (lambda f: ("check", "--baseline", raw_baseline(f, json.dumps({"entries": [ENTRY]}).replace(
        '"expected": 0.5', '"expected": 0.1, "expected": 0.5'))), "'expected' appears twice"),
    "baseline entry twice": (lambda f: ("check", "--baseline", raw_baseline(f, json.dumps({"entries": [ENTRY, ENTRY]}))), "repeats entry 1"),
    "baseline entry not an object": (lambda f: ("check", "--baseline", raw_baseline(f, '{"entries": [3]}')), "entry 1 lacks"),
    # --- linear parsing: a 1 MB field of a stranger's file (each once took minutes to hours)
    "1 MB TREC score token": (lambda f: ("score", write(f, "r.trec", f"q1 Q0 d1 1 {'1' * BIG}x r\n"), "gold.qrels"), "(1,048,577 characters)"),
    "1 MB TREC score token, line 2": (lambda f: ("score", write(f, "r.trec", RUN + f"q1 Q0 d9 1 {'1' * BIG}x r\n"), "gold.qrels"), "r.trec:5:"),
    "1 MB TREC qrels grade": (lambda f: ("score", "run.trec", write(f, "g.qrels", f"q1 0 d1 {'1' * BIG}x\n")), "not a number"),
    "1 MB BEIR grade": (lambda f: ("score", "run.trec", write(f, "g.tsv", f"query-id\tcorpus-id\tscore\nq1\td1\t{'1' * BIG}x\n")), "g.tsv:2:"),
    "1 MB 4b list literal (score)": (lambda f: ("score", write(f, "s.tsv", f"post_id\tpreds\n1\t['a'{' ' * BIG}\n"), "gold.qrels"), "s.tsv:2:"),
    "1 MB metric name in a baseline": (lambda f: ("check", "--baseline", baseline(f, entry={"metric": "a" + " " * BIG + "x"})),
                                       "does not report"),
    # --- error lines cut and counted
    "zip of 20,000 members": (lambda f: ("score", many_member_zip(f), "gold.qrels"), "and 19,995 more"),
    "30 KB bad token echoed": (lambda f: ("score", write(f, "r.trec", f"q1 Q0 d1 1 {'7' * 30_000}z r\n"), "gold.qrels"), "(30,001 characters)"),
    # --- options checked where they are given: never a traceback, never blamed on a participant's file
    "score --depth 10**20": (lambda f: ("score", "run.trec", "gold.qrels", "--depth", "99999999999999999999"), "depth must be from 1"),
    "compare --depth 10**20": (lambda f: ("compare", "gold.qrels", "run.trec", write(f, "run2.trec", RUN), "--depth", "99999999999999999999"),
                               "depth must be from 1"),
    "report --depth 10**20": (lambda f: ("report", "gold.qrels", "run.trec", "--out", "r.md", "--depth", "99999999999999999999"),
                              "depth must be from 1"),
    "leaderboard --depth 10**20": (lambda f: ("leaderboard", (f / "runs").mkdir() or write(f, "runs/a.trec", RUN).parent, "--gold", "gold.qrels",
                                              "--depth", "99999999999999999999"), "depth must be from 1"),
    "fuse --depth 10**20": (lambda f: ("fuse", "run.trec", write(f, "run2.trec", RUN), "--out", "f.trec", "--depth", "99999999999999999999"),
                            "depth must be from 1"),
    "submit --depth 10**20": (lambda f: ("submit", "run.trec", "--task", "trec", "--out", "s.tsv", "--depth", "99999999999999999999"),
                              "depth must be from 1"),
    "score --depth 1_0": (lambda f: ("score", "run.trec", "gold.qrels", "--depth", "1_0"), "not a whole number"),
    "compare --seed 10**20": (lambda f: ("compare", "gold.qrels", "run.trec", write(f, "run2.trec", RUN), "--seed", str(10**20)),
                              "seed must be from 0"),
    "report --seed 10**20": (lambda f: ("report", "gold.qrels", "run.trec", "--out", "r.md", "--seed", str(10**20)), "seed must be from 0"),
    "leaderboard --seed 10**20": (lambda f: ("leaderboard", (f / "runs").mkdir() or write(f, "runs/a.trec", RUN).parent, "--gold", "gold.qrels",
                                             "--seed", str(10**20)), "seed must be from 0"),
    "run --seed 10**20": (lambda f: ("run", "bm25", "--corpus", "corpus.jsonl", "--queries", "queries.tsv", "--out", "o.trec", "--seed",
                                     str(10**20)), "seed must be from 0"),
    "run --seed -1": (lambda f: ("run", "bm25", "--corpus", "corpus.jsonl", "--queries", "queries.tsv", "--out", "o.trec", "--seed", "-1"),
                      "seed must be from 0"),
    "train --seed 10**20": (lambda f: ("train", "bm25", "--corpus", "corpus.jsonl", "--train-queries", "queries.tsv", "--train-qrels",
                                       "gold.qrels", "--out", "m", "--seed", str(10**20)), "seed must be from 0"),
    "leaderboard --metrics unknown": (lambda f: ("leaderboard", (f / "runs").mkdir() or write(f, "runs/a.trec", RUN).parent, "--gold",
                                                 "gold.qrels", "--metrics", "nonsense@x"), "unknown metric 'nonsense'"),
    "compare --metrics two metrics": (lambda f: ("compare", "gold.qrels", "run.trec", write(f, "run2.trec", RUN), "--metrics", "map ndcg"),
                                      "cannot read metric"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_hostile_scoring_input_is_one_line_exit_2_nothing_written(case, tmp_path):
    setup, expected = CASES[case]
    base_files(tmp_path)
    args = setup(tmp_path)
    before = snapshot(tmp_path)
    started = time.monotonic()
    done = evalkit(*args, cwd=tmp_path)
    elapsed = time.monotonic() - started
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, (case, done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    assert len(lines) == 1 and len(lines[0]) < 1300, (case, done.stderr[-2000:])  # one bounded line
    assert expected in lines[0], (case, lines[0][:2000])
    assert snapshot(tmp_path) == before, case
    assert elapsed < 20, (case, elapsed)  # start-up included: quadratic parsing took minutes to hours


# --- legitimate inputs read as their readers read them (one rule for detection and reading)
def test_trec_run_with_a_long_first_line_or_an_odd_rank_is_read(tmp_path):
    write(tmp_path, "gold.qrels", "q1 0 d1 1\nq1 0 d2 0\n")
    lines = ["q1 Q0 d1 x 2.0 r\n", "q1 Q0 d2 1 1.0 r\n"]  # a rank column nothing reads
    long_line = f"q1 Q0 {'d' * 70_000} 1 0.5 r\n"  # the first line is over 64 KiB
    for name, content in {"rank.trec": "".join(lines), "long.trec": long_line + "".join(lines),
                          "rank-later.trec": "".join(lines[::-1])}.items():
        write(tmp_path, name, content)
        done = evalkit("score", name, "gold.qrels", "-o", "json", cwd=tmp_path)
        assert done.returncode == 0, (name, done.stderr[-500:])
        assert json.loads(done.stdout)["official"]["value"] == 1.0, name


def test_validate_reads_a_1_mb_list_literal_in_time(tmp_path):
    write(tmp_path, "s.tsv", f"post_id\tpreds\n1\t['a'{' ' * BIG}\n")
    started = time.monotonic()
    done = evalkit("validate", "s.tsv", "--task", "checkthat2025-4b", cwd=tmp_path)
    assert done.returncode == 1 and time.monotonic() - started < 20 and "Traceback" not in done.stderr, done.stderr[-1000:]
    problem = next(line for line in done.stdout.splitlines() if "s.tsv:2:" in line)
    assert len(problem) < 1300 and "not a valid list literal" in problem, problem[:2000]


def test_climatecheck_rank_field_of_1_mb_is_read_in_time(tmp_path):
    write(tmp_path, "gold.csv", CC_GOLD)
    write(tmp_path, "pred.csv", f"claim_id,abstract_id,rank\nc1,a1,{'1' * BIG}\nc1,a2,{'0' * BIG}2\nc2,b1,1\n")
    started = time.monotonic()
    done = evalkit("score", "pred.csv", "gold.csv", cwd=tmp_path)
    assert done.returncode == 0 and time.monotonic() - started < 20, done.stderr[-1000:]
    warning = next(line for line in done.stderr.splitlines() if "not integers" in line)
    assert len(warning) < 1300 and "characters)" in warning


def test_parsers_are_linear_at_1_mb():
    """Each pattern applied to a stranger's field, in process: a 1 MB field in well under a second."""
    from evalkit.io.formats.tables import parse_score
    from evalkit.core.listparse import ListLiteralError, parse_id_list
    from evalkit.metrics import parse_metrics
    from evalkit.tasks.climatecheck2025.official import column_kind
    from evalkit.io.textio import parse_size
    from evalkit.core.errors import EvalkitError

    digits, blanks = "1" * BIG, " " * BIG
    attempts = [(parse_score, digits + "x", "f", 1), (parse_id_list, "['a'" + blanks, ), (parse_id_list, "['a'," + blanks),
                (column_kind, [digits + "x"]), (column_kind, [digits]), (column_kind, [" " * BIG + "1x"]),
                (parse_size, "1" + blanks + "x"), (parse_metrics, "a" + " " * 15_000 + "x")]
    for function, *args in attempts:
        started = time.monotonic()
        try:
            function(*args)
        except (EvalkitError, ListLiteralError):
            pass
        assert time.monotonic() - started < 1.0, function.__name__


# --- the task comes from the gold (or --task), never from a participant's file
def test_a_labelled_file_cannot_turn_a_retrieval_leaderboard_into_subtask_2(tmp_path):
    write(tmp_path, "gold.csv", CC_GOLD)
    write(tmp_path, "runs/a_attacker.csv", CC_ATTACKER)
    write(tmp_path, "runs/honest.csv", CC_HONEST)
    done = evalkit("leaderboard", "runs", "--gold", "gold.csv", "-o", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    board = json.loads(done.stdout)
    assert board["task"] == "climatecheck2025-retrieval"
    assert [row["run"] for row in board["ranking"]] == ["honest", "a_attacker"]
    assert board["ranking"][0]["official"]["value"] == 1.0 and board["ranking"][1]["official"]["value"] == 0.0
    single = evalkit("score", "runs/a_attacker.csv", "gold.csv", "-o", "json", cwd=tmp_path)
    scored = json.loads(single.stdout)
    assert scored["task"] == "climatecheck2025-retrieval" and scored["official"]["value"] == 0.0
    assert "Subtask I does not score" in single.stderr and "--task climatecheck2025-verification" in single.stderr


def test_an_undefined_official_score_never_ranks_above_a_defined_one(tmp_path):
    write(tmp_path, "gold.csv", CC_GOLD)
    write(tmp_path, "runs/a_unlabelled.csv", CC_HONEST)  # Subtask II undefined: no label column
    write(tmp_path, "runs/z_labelled.csv", CC_LABELLED)  # defined, low: F1 0 + Recall@10 0.5
    done = evalkit("leaderboard", "runs", "--gold", "gold.csv", "--task", "climatecheck2025-verification", "-o", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    json.loads(done.stdout, parse_constant=lambda name: pytest.fail(f"bare {name} in JSON"))
    board = json.loads(done.stdout)
    assert [row["run"] for row in board["ranking"]] == ["z_labelled", "a_unlabelled"]
    assert board["ranking"][1]["official"]["value"] is None
    assert "no label column" in board["undefined"]["ranking[1].official.value"]
    page = evalkit("leaderboard", "runs", "--gold", "gold.csv", "--task", "climatecheck2025-verification", "--json", "page.json",
                   cwd=tmp_path)
    assert page.returncode == 0, page.stderr
    data = json.loads((tmp_path / "page.json").read_text(), parse_constant=lambda name: pytest.fail(f"bare {name} in JSON"))
    assert [row["name"] for row in data["board"]["rows"]] == ["z_labelled", "a_unlabelled"] and data["undefined"]


def test_json_outputs_have_no_bare_nan(tmp_path):
    write(tmp_path, "gold.csv", CC_GOLD)
    write(tmp_path, "pred.csv", CC_HONEST)
    strict = {"parse_constant": lambda name: pytest.fail(f"bare {name} in JSON")}
    done = evalkit("score", "pred.csv", "gold.csv", "--task", "climatecheck2025-verification", "-o", "json", cwd=tmp_path)
    scored = json.loads(done.stdout, **strict)
    assert scored["metrics"]["F1 (weighted)"] is None and "no label column" in scored["undefined"]["metrics.F1 (weighted)"]
    write(tmp_path, "gold.qrels", "q1 0 d1 1\nq2 0 d2 1\n")
    write(tmp_path, "a.trec", "q1 Q0 d1 1 1.0 a\nq2 Q0 d2 1 1.0 a\n")
    write(tmp_path, "b.trec", "q1 Q0 d1 1 1.0 b\nq2 Q0 d2 1 1.0 b\n")  # identical: every difference 0, some tests NaN
    compared = evalkit("compare", "gold.qrels", "a.trec", "b.trec", "-o", "json", "--permutations", "100", "--bootstrap", "100",
                       cwd=tmp_path)
    assert compared.returncode == 0, compared.stderr
    json.loads(compared.stdout, **strict)
    manifest = evalkit("score", "a.trec", "gold.qrels", "--out", "s.txt", cwd=tmp_path)
    assert manifest.returncode == 0
    json.loads((tmp_path / "s.txt.manifest.json").read_text(), **strict)


# --- task plugins: no name clash, no broken detection
def plugin_site(folder: Path, dist: str, module: str, source: str, entries: str) -> Path:
    site = folder / "site"
    (site / module).mkdir(parents=True)
    (site / module / "__init__.py").write_text(source)
    info = site / f"{dist}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[evalkit.tasks]\n{entries}\n")
    return site


SHADOW = """from evalkit.tasks.trec import TrecTask
class Fake(TrecTask):
    name = "checkthat2025-4b"
"""
RAISING = """from evalkit.tasks.trec import TrecTask
class Raising(TrecTask):
    name = "raising-task"
    def detects(self, gold_format, run=None):
        raise RuntimeError("boom " * 10000)
"""


@pytest.mark.parametrize("shadowed", ["checkthat2025-4b", "other-plugin-task"])
def test_a_plugin_never_replaces_a_task(tmp_path, shadowed):
    source = SHADOW.replace("checkthat2025-4b", shadowed)
    site = plugin_site(tmp_path, "evil-tasks", "evil", source, f"{shadowed} = evil:Fake")
    if shadowed == "other-plugin-task":  # a second plugin that took the name first
        (site / "first").mkdir()
        (site / "first" / "__init__.py").write_text(source.replace("Fake", "First"))
        info = site / "first-tasks-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: first-tasks\nVersion: 0.1\n")
        (info / "entry_points.txt").write_text(f"[evalkit.tasks]\n{shadowed} = first:First\n")
    repo = Path(__file__).resolve().parents[2] / "gold" / "examples"
    env = {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    before = snapshot(tmp_path)
    done = evalkit("score", repo / "tweets_run.tsv", repo / "tweets_gold.tsv", cwd=tmp_path, env=env)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert f"task {shadowed!r} is declared twice" in lines[0] and "evil-tasks" in lines[0], lines[0]
    assert ("evalkit" if shadowed == "checkthat2025-4b" else "first-tasks") in lines[0].split("declared twice")[1]
    assert snapshot(tmp_path) == before


def test_a_plugin_whose_detection_fails_stops_auto_detection_with_one_line(tmp_path):
    site = plugin_site(tmp_path, "raising-tasks", "raising", RAISING, "raising-task = raising:Raising")
    env = {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    base_files(tmp_path)
    done = evalkit("score", "run.trec", "gold.qrels", cwd=tmp_path, env=env)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert "'raising-task' of raising-tasks" in lines[0] and "RuntimeError" in lines[0] and "--task" in lines[0] and len(lines[0]) < 1300
    named = evalkit("score", "run.trec", "gold.qrels", "--task", "trec", cwd=tmp_path, env=env)  # naming the task needs no detection
    assert named.returncode == 0, named.stderr


def test_catalogue_size():
    assert len(CASES) >= 40
