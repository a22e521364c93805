"""Hostile uploads through a bundle: a clear failure or a correct score, within the time limit, nothing written outside output/."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.codabench_helpers import GOLD_4B, RUN_4B, unzip, write_zip, zip_of

import evalkit
from evalkit.competition import make_bundle, run_submission

LIMIT = 300  # the bundle's execution_time_limit (the default)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    path = tmp_path_factory.mktemp("hostile") / "ct.zip"
    make_bundle("checkthat2025-4b", [("test", str(GOLD_4B))], str(path), test=False, max_submission_size=1 << 20)
    return path


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """Every temporary folder of the worker (its layout) goes under one watched folder."""
    watched = tmp_path / "tmp"
    watched.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(watched))
    return watched


def submit(bundle, upload: Path, **kwargs):
    start = time.monotonic()
    done = run_submission(str(bundle), str(upload), **kwargs)
    assert time.monotonic() - start < LIMIT
    return done


def one_clear_line(done) -> str:
    """The scoring program's failure as the participant reads it: exactly one line, no traceback."""
    assert done.failure == "the scoring program exited with code 2", done.failure
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("invalid submission: ") and "Traceback" not in done.stderr, done.stderr
    assert "scores.json" not in done.output
    return lines[0]


EXPECTED = None


def expected_scores():
    global EXPECTED
    if EXPECTED is None:
        EXPECTED = evalkit.score(str(RUN_4B), str(GOLD_4B), task="checkthat2025-4b", missing=None).means
    return EXPECTED


def test_zip_bomb_is_refused_while_extracting(bundle, tmp_path, private_tmp, monkeypatch):
    monkeypatch.setenv("EVALKIT_MAX_INPUT_SIZE", "8M")  # the local worker's extraction limit
    upload = write_zip(tmp_path / "bomb.zip", {"predictions.tsv": b"\0" * (64 << 20)})
    assert upload.stat().st_size < 200_000
    done = submit(bundle, upload)
    assert done.failure.startswith("the upload cannot be extracted") and "expands beyond 8,388,608 bytes" in done.failure


def test_a_file_beyond_the_submission_limit_is_refused_by_the_scoring_program(bundle, tmp_path, private_tmp):
    upload = write_zip(tmp_path / "big.zip", {"predictions.tsv": b"post_id\tpreds\n" + b"1\t['a']\n" * 300_000})  # 2.4 MB > 1 MiB
    assert "larger than the input limit" in one_clear_line(submit(bundle, upload))


def test_a_nested_zip_bomb_is_refused(bundle, tmp_path, private_tmp):
    inner = zip_of({"predictions.tsv": b"\0" * (32 << 20)})
    line = one_clear_line(submit(bundle, write_zip(tmp_path / "nested.zip", {"predictions.zip": inner})))
    assert "larger than the input limit" in line


def test_path_traversal_member_stays_inside(bundle, tmp_path, private_tmp):
    upload = write_zip(tmp_path / "up.zip", {"../../predictions.tsv": RUN_4B.read_bytes()})
    done = submit(bundle, upload)
    assert done.failure is None and done.scores["MRR@5"] == expected_scores()["MRR@5"]  # extracted where extractall puts it
    assert not list(tmp_path.glob("**/predictions.tsv")) and not (tmp_path.parent / "predictions.tsv").exists()


def test_symlink_member_is_never_followed(bundle, tmp_path, private_tmp):
    upload = write_zip(tmp_path / "link.zip", {}, symlinks={"predictions.tsv": str(RUN_4B)})
    line = one_clear_line(submit(bundle, upload))  # a regular file holding the link's target, as extractall writes it
    assert "predictions.tsv" in line


@pytest.mark.parametrize("content", [b"%PDF-1.4\n\x00\x01\x02 binary", "post_id,preds\n1,x\n".encode(), b"\xff\xfe\x00 not text"])
def test_wrong_format_is_one_clear_line(bundle, tmp_path, private_tmp, content):
    one_clear_line(submit(bundle, write_zip(tmp_path / "w.zip", {"predictions.tsv": content})))


def test_empty_zip_and_not_a_zip(bundle, tmp_path, private_tmp):
    assert "empty zip" in submit(bundle, write_zip(tmp_path / "e.zip", {})).failure
    only_folder = one_clear_line(submit(bundle, write_zip(tmp_path / "f.zip", {"folder/": b""})))
    assert "holds no file" in only_folder
    plain = tmp_path / "predictions.tsv"
    plain.write_bytes(RUN_4B.read_bytes())
    assert submit(bundle, plain).failure.startswith("Bad or empty zip file")


def test_rezipped_root_folder_scores_correctly(bundle, tmp_path, private_tmp):
    done = submit(bundle, write_zip(tmp_path / "r.zip", {"team/predictions.tsv": RUN_4B.read_bytes(), "team/README.md": b"# us"}))
    assert done.failure is None and done.scores == {k: expected_scores()[k] for k in done.scores}


def test_ambiguous_files_and_code_submissions(bundle, tmp_path, private_tmp):
    line = one_clear_line(submit(bundle, write_zip(tmp_path / "two.zip", {"a.tsv": b"x", "b.tsv": b"y"})))
    assert "holds 2 files (a.tsv, b.tsv)" in line
    code = submit(bundle, write_zip(tmp_path / "code.zip", {"metadata.yaml": "command: python3 x.py", "x.py": "print(1)"}))
    assert "code submission" in code.failure


def test_the_worker_leaves_no_layout_behind(bundle, tmp_path, private_tmp):
    submit(bundle, write_zip(tmp_path / "ok.zip", {"predictions.tsv": RUN_4B.read_bytes()}))
    assert list(private_tmp.iterdir()) == []


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")}


@pytest.mark.parametrize("upload", ["good", "bad"])
def test_the_scoring_program_writes_only_in_output(bundle, tmp_path, upload):
    """The program run by hand in a worker's layout: only output/ changes, whatever the submission."""
    import zipfile

    root = tmp_path / "app"
    files = unzip(bundle)
    for folder, member in (("program", "scoring_program.zip"), ("input/ref", "reference_data_0_test.zip")):
        target = root / folder
        target.mkdir(parents=True)
        with zipfile.ZipFile(__import__("io").BytesIO(files[member])) as archive:
            archive.extractall(target)
    res = root / "input" / "res"
    res.mkdir()
    (res / "predictions.tsv").write_bytes(RUN_4B.read_bytes() if upload == "good" else b"post_id\tpreds\n1\t['a'\n")
    (res / "metadata").write_text("exitCode: null\n")
    (root / "output").mkdir()
    before = snapshot(root)
    done = subprocess.run([sys.executable, str(root / "program" / "score.py"), str(root / "input"), str(root / "output")],
                          cwd=root / "program", capture_output=True, text=True, timeout=LIMIT,
                          env={"PATH": os.environ["PATH"], "PYTHONUNBUFFERED": "1"})
    after = snapshot(root)
    changed = {name for name in set(before) | set(after) if before.get(name) != after.get(name)}
    assert all(name == "output" or name.startswith("output/") for name in changed), changed
    if upload == "good":
        assert done.returncode == 0 and {"output/scores.json", "output/detailed_results.html"} <= changed
        assert "output/metadata" not in changed
    else:
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and "predictions.tsv:2:" in done.stderr
        assert changed <= {"output"}
