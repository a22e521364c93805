"""`evalkit submit`: run -> official submission -> validate -> score gives the source score."""
from __future__ import annotations

import json
import os
import random
import zipfile

import pytest

from support.helpers import CT4B, GOLD_4B, run_cli, shared_or_skip
from evalkit.cli import main
from evalkit.data import Run
from evalkit.io.reading import read_qrels, read_run
from evalkit.io.formats.trec_run import format_trec_run
from evalkit.tasks.submissions import expectations_for, validate_file, write_submission
from evalkit.submission.writer import InvalidSubmissionError
from evalkit.tasks import get_task
from evalkit.io.manifest import sha256_of

AIRWAVES = CT4B / "runs" / "airwaves"
OTHER = CT4B / "runs" / "other-teams"
TASK = get_task("checkthat2025-4b")


def official(run, split: str) -> float:
    return TASK.score(run, read_qrels(GOLD_4B[split])).official_value


@pytest.mark.realdata
@pytest.mark.parametrize(
    "path,split",
    [
        (AIRWAVES / "E5_base_setup_dev_TOP100.tsv", "dev"),  # list run, depth 100
        (AIRWAVES / "predictions_SciBERT_test_TOP10.tsv", "test"),
        (OTHER / "sourcesniffers_final_test.zip", "test"),  # already a submission
        (OTHER / "dajahn_traditional_dev.csv", "dev"),  # CSV in, TSV out
        (OTHER / "lucthiery_granite_top75_test.tsv", "test"),  # index column, other list column
    ],
    ids=lambda v: getattr(v, "name", v),
)
def test_round_trip_gives_the_source_score(tmp_path, path, split):
    gold = shared_or_skip(GOLD_4B[split])
    out = tmp_path / "submission.zip"
    result = run_cli("submit", path, "--task", "checkthat2025-4b", "--out", out)
    assert result.returncode == 0, result.stderr
    with zipfile.ZipFile(out) as archive:
        assert archive.namelist() == ["predictions.tsv"]  # no folder
        text = archive.read("predictions.tsv").decode()
    assert text.startswith("post_id\tpreds\n")
    assert all("['" in line and '"' not in line for line in text.splitlines()[1:])
    expectations = expectations_for("checkthat2025-4b", query_files=[gold], collection_files=[GOLD_4B["train"], GOLD_4B["dev"]])
    problems = validate_file(out, expectations)
    assert problems.valid and not problems.items, problems.lines()
    assert official(read_run(out), split) == official(read_run(path), split)
    manifest = json.loads((tmp_path / "submission.zip.manifest.json").read_text())
    assert manifest["task"] == "checkthat2025-4b" and manifest["evalkit_version"]
    assert manifest["inputs"][0]["sha256"] == sha256_of(path)
    assert manifest["options"]["depth"] == 5 and manifest["options"]["member"] == "predictions.tsv"


@pytest.mark.realdata
def test_scored_trec_run_round_trip_keeps_the_ranking_rule(tmp_path):
    """A shuffled TREC run with tied scores: submit ranks by score, ties by doc id descending, as score does."""
    shared_or_skip(GOLD_4B["dev"])
    source = read_run(AIRWAVES / "predictions_SciBERT_dev_TOP10.tsv")
    lines = format_trec_run(source).splitlines()
    tied = [" ".join(parts[:4] + [str(float(int(float(parts[4])) // 3)), parts[5]]) for parts in (line.split() for line in lines)]
    random.Random(4).shuffle(tied)
    trec = tmp_path / "run.trec"
    trec.write_text("\n".join(tied) + "\n")
    out = write_submission(trec, "checkthat2025-4b", tmp_path / "sub.tsv")
    assert out == tmp_path / "sub.tsv" and out.read_text().startswith("post_id\tpreds\n")
    assert official(read_run(out), "dev") == official(read_run(trec), "dev")
    assert official(read_run(trec), "dev") != official(source, "dev")  # the ties really changed the ranking


def test_queries_file_fixes_rows_and_order(tmp_path):
    run = Run.from_lists({"b": list("vwxyz"), "a": list("abcde"), "extra": list("abcde")})
    queries = tmp_path / "queries.tsv"
    queries.write_text("post_id\ttweet_text\na\tfirst\nb\tsecond\n")
    out = write_submission(run, "checkthat2025-4b", tmp_path / "s.tsv", queries=queries)
    assert out.read_text() == "post_id\tpreds\na\t['a', 'b', 'c', 'd', 'e']\nb\t['v', 'w', 'x', 'y', 'z']\n"
    with pytest.raises(InvalidSubmissionError, match=r"1 problem \(missing query: 1\)"):
        write_submission(run, "checkthat2025-4b", tmp_path / "t.tsv", queries=["a", "b", "c"])
    assert not (tmp_path / "t.tsv").exists()


def test_dedupe(tmp_path):
    run = Run.from_lists({"q": ["a", "a", "b", "c", "d", "e"]})
    with pytest.raises(InvalidSubmissionError, match="--dedupe would drop the repeats and fix it"):
        write_submission(run, "checkthat2025-4b", tmp_path / "s.tsv")
    out = write_submission(run, "checkthat2025-4b", tmp_path / "s.tsv", dedupe=True)
    assert out.read_text().splitlines()[1] == "q\t['a', 'b', 'c', 'd', 'e']"


def test_climatecheck_submission(tmp_path):
    rows = [(c, f"{c}-abs{i}", label) for c in ("10", "2") for i in range(12) for label in ["Supports"]]
    run = Run.from_rows([r[0] for r in rows], [r[1] for r in rows], scores=[-i for i in range(len(rows))], labels=[r[2] for r in rows])
    out = write_submission(run, "climatecheck2025-verification", tmp_path / "cc.csv")
    lines = out.read_text().splitlines()
    assert lines[0] == "claim_id,abstract_id,rank,label" and len(lines) == 21
    assert lines[1] == "2,2-abs0,1,Supports" and lines[11] == "10,10-abs0,1,Supports"  # sorted by claim (numerically), rank
    assert validate_file(out, expectations_for("climatecheck2025-verification")).valid
    unlabelled = Run.from_rows([r[0] for r in rows], [r[1] for r in rows])
    with pytest.raises(InvalidSubmissionError, match="no 'label' column"):
        write_submission(unlabelled, "climatecheck2025-verification", tmp_path / "v.csv")
    zipped = write_submission(unlabelled, "climatecheck2025-retrieval", tmp_path / "r.zip")
    assert zipfile.ZipFile(zipped).namelist() == ["predictions.csv"]


def assert_refused(result, expected: str, *unwritten):
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0], result.stderr
    for path in unwritten:
        assert not os.path.exists(path) and not os.path.exists(f"{path}.manifest.json")


@pytest.mark.realdata
def test_bad_input_is_refused_with_one_line(tmp_path):
    run = shared_or_skip(OTHER / "paperquest_bm25_dev.tsv")
    out = tmp_path / "s.zip"
    assert_refused(run_cli("submit", tmp_path / "nope.tsv", "--task", "checkthat2025-4b", "--out", out), "nope.tsv: no such file", out)
    unreadable = tmp_path / "bad.tsv"
    unreadable.write_text("post_id\tpreds\n1\tnot a list\n")
    assert_refused(run_cli("submit", unreadable, "--task", "checkthat2025-4b", "--out", out), f"{unreadable}:2: column 'preds' is not a list literal", out)
    assert_refused(run_cli("submit", run, "--task", "nope", "--out", out), "unknown task 'nope'", out)
    assert_refused(run_cli("submit", run, "--task", "trec", "--out", out), "task 'trec' has no official submission format", out)
    assert_refused(run_cli("submit", run, "--task", "checkthat2025-4b", "--out", tmp_path / "s.json"), "written as .zip, .tsv", tmp_path / "s.json")
    missing = tmp_path / "no" / "s.zip"
    assert_refused(run_cli("submit", run, "--task", "checkthat2025-4b", "--out", missing), "output folder", missing)
    assert_refused(
        run_cli("submit", OTHER / "ysong_colbertv2_dev.tsv", "--task", "checkthat2025-4b", "--out", out),
        "cannot make a valid checkthat2025-4b submission, nothing written: 710 problems (repeated id: 710) (--dedupe would not help",
        out,
    )
    assert run_cli("submit", run, "--task", "checkthat2025-4b", "--out", out).returncode == 0
    before = out.read_bytes()
    assert_refused(run_cli("submit", AIRWAVES / "predictions_BM25_dev_TOP10.tsv", "--task", "checkthat2025-4b", "--out", out), "exists; pass --force")
    assert out.read_bytes() == before
    forced = run_cli("submit", AIRWAVES / "predictions_BM25_dev_TOP10.tsv", "--task", "checkthat2025-4b", "--out", out, "--force")
    assert forced.returncode == 0 and out.read_bytes() != before
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.realdata
def test_read_only_folder_is_refused(tmp_path, capsys, monkeypatch):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    if os.geteuid() == 0:  # root ignores folder permissions: make the check see what a user would
        real_access = os.access
        monkeypatch.setattr(os, "access", lambda p, mode: False if str(p) == str(folder) else real_access(p, mode))
    try:
        code = main(["submit", str(shared_or_skip(OTHER / "paperquest_bm25_dev.tsv")), "--task", "checkthat2025-4b", "--out", str(folder / "s.zip")])
        err = capsys.readouterr().err.strip()
        assert code == 2 and err == f"--out {folder / 's.zip'}: output folder {folder} is not writable"
        assert not list(folder.iterdir())
    finally:
        folder.chmod(0o755)
