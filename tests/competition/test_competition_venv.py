"""The scoring program with nothing but what the bundle declares: a fresh virtual environment holding only the
program's requirements.txt (numpy, at the version of Codabench's codalab-legacy:py312 image), no evalkit installed."""
from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile

import pytest
from support.codabench_helpers import GOLD_4B, RUN_4B, climatecheck_gold, climatecheck_submission, unzip, write_zip

import evalkit
from evalkit.competition import make_bundle, run_submission

IMAGE_NUMPY = "numpy==1.26.4"  # what codalab/codalab-legacy:py312 installs (codalab-dockers, Dockerfiles/Dockerfile-py312)


def image_like_python() -> str:
    """A Python 3.12 (the image's) when this machine has one (on PATH or under pyenv), else this interpreter."""
    from pathlib import Path
    import shutil

    candidates = [shutil.which("python3.12"), *sorted(str(p) for p in (Path.home() / ".pyenv" / "versions").glob("3.12*/bin/python3.12"))]
    for candidate in filter(None, candidates):
        if subprocess.run([candidate, "-c", "import venv"], capture_output=True).returncode == 0:
            return candidate
    return sys.executable


@pytest.fixture(scope="module")
def fresh_python(tmp_path_factory):
    folder = tmp_path_factory.mktemp("venv")
    bundle = folder / "b.zip"
    make_bundle("checkthat2025-4b", [("dev", str(GOLD_4B)), ("test", str(GOLD_4B))], str(bundle), test=False)
    program = zipfile.ZipFile(io.BytesIO(unzip(bundle)["scoring_program.zip"]))
    requirements = folder / "requirements.txt"
    requirements.write_bytes(program.read("requirements.txt"))
    (folder / "image.txt").write_text(IMAGE_NUMPY + "\n")
    venv = folder / "env"
    subprocess.run([image_like_python(), "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    installed = subprocess.run([str(python), "-m", "pip", "install", "-q", "-r", str(requirements), "-c", str(folder / "image.txt")],
                               capture_output=True, text=True, timeout=600)
    if installed.returncode != 0:
        pytest.skip(f"cannot install the program's requirements from the package index: {installed.stderr.strip()[-300:]}")
    return python, bundle


@pytest.mark.slow  # builds a virtual environment and installs numpy: about 20 s
def test_scoring_program_runs_in_a_fresh_environment(fresh_python, tmp_path):
    python, bundle = fresh_python
    alone = subprocess.run([str(python), "-c", "import evalkit"], capture_output=True, text=True, cwd=tmp_path)
    assert alone.returncode != 0 and "No module named 'evalkit'" in alone.stderr  # only the vendored copy can serve
    listed = subprocess.run([str(python), "-m", "pip", "list", "--format=freeze"], capture_output=True, text=True).stdout
    assert {line.split("==")[0].lower() for line in listed.split()} <= {"numpy", "pip", "setuptools", "wheel"}
    upload = write_zip(tmp_path / "team.zip", {"predictions.tsv": RUN_4B.read_bytes()})
    expected = evalkit.score(str(RUN_4B), str(GOLD_4B), task="checkthat2025-4b", missing=None).means
    for phase, page in (("dev", "evalkit-page/1"), ("test", "Per-query results are not shown")):
        done = run_submission(str(bundle), str(upload), phase, python=str(python))
        assert done.failure is None, done.stderr
        assert json.loads(done.output["scores.json"]) == {key: expected[key] for key in json.loads(done.output["scores.json"])}
        assert page in done.output["detailed_results.html"].decode()
    bad = run_submission(str(bundle), str(write_zip(tmp_path / "bad.zip", {"predictions.tsv": b"post_id\tpreds\n1\t[\n"})), "test",
                         python=str(python))
    assert bad.failure and bad.stderr.count("\n") == 1 and bad.stderr.startswith(
        "invalid submission: breaks the checkthat2025-4b submission rules: predictions.tsv:2:")  # the rules, in the image too


@pytest.mark.slow
def test_climatecheck_program_runs_in_a_fresh_environment(fresh_python, tmp_path):
    python, _ = fresh_python
    gold = climatecheck_gold(tmp_path / "gold.csv", "c", 20, 9)
    bundle = tmp_path / "cc.zip"
    result = make_bundle("climatecheck2025-verification", [("test", str(gold))], str(bundle), test=False)
    text = climatecheck_submission(gold, 1)
    (tmp_path / "predictions.csv").write_text(text)
    done = run_submission(str(bundle), str(write_zip(tmp_path / "cc.zip.upload", {"predictions.csv": text})), python=str(python))
    assert done.failure is None, done.stderr
    expected = evalkit.score(str(tmp_path / "predictions.csv"), str(gold), task="climatecheck2025-verification", missing=None).means
    wanted = {c.key: expected[c.label] for c in result.columns}
    theirs = subprocess.run([str(python), "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True).stdout
    if theirs.strip() == str(sys.version_info[:2]):
        assert done.scores == wanted
    else:  # Python 3.12 made sum() of floats compensated: the organisers' sum()/len means may differ in the last bit
        assert done.scores == pytest.approx(wanted, rel=1e-14, abs=1e-15)
