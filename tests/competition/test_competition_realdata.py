"""The real CheckThat! 2025 4b test submissions through a 4b bundle: scores.json holds exactly what `evalkit score` gives."""
from __future__ import annotations

import json

import pytest
from support.codabench_helpers import write_zip
from support.helpers import CT4B, GOLD_4B, all_4b_runs, run_cli, shared_or_skip, split_of

import evalkit
from evalkit.competition import make_bundle, run_submission
from evalkit.core.errors import PartialRunError

pytestmark = pytest.mark.realdata


def upload_of(run, folder):
    """The zip a participant uploads: theirs as is, a plain file zipped under its own name."""
    return run if run.suffix == ".zip" else write_zip(folder / f"{run.stem}.zip", {run.name: run.read_bytes()})


@pytest.mark.slow  # 20 scoring runs, each a fresh process: about 20 s on two idle cores
def test_every_real_4b_test_submission_scores_as_evalkit_score(tmp_path):
    shared_or_skip(CT4B)
    bundle = tmp_path / "checkthat4b.zip"
    # the rules relaxed: every run is scored as `evalkit score` scores it, the ones breaking them too (their failure under
    # the default, enforce: tests/competition/test_competition_rules.py)
    made = make_bundle("checkthat2025-4b", [("dev", str(GOLD_4B["dev"])), ("test", str(GOLD_4B["test"]))], str(bundle),
                       submission_rules="warn")
    assert made.self_test["test"]["MRR@5"] == 1.0
    runs = [run for run in all_4b_runs() if split_of(run) == "test"]
    assert len(runs) >= 20
    scored = refused = 0
    for run in runs:
        done = run_submission(str(bundle), str(upload_of(run, tmp_path)), phase="test")
        try:
            expected = evalkit.score(str(run), str(GOLD_4B["test"]), task="checkthat2025-4b", missing=None).means
        except PartialRunError:  # E5_HN_All__test_TOP100.tsv holds the dev tweets: refused by both, in one line
            assert done.failure == "the scoring program exited with code 2", run.name
            assert done.stderr.strip().splitlines() == [
                f"invalid submission: {run.name}: answers only 151 of the 1446 queries of this phase "
                "(1249 of its queries are not in this phase): a file for another phase?"]
            refused += 1
            continue
        assert done.failure is None, (run.name, done.stderr)
        assert json.loads(done.output["scores.json"]) == {c.key: expected[c.label] for c in made.columns}, run.name
        assert [cell.value for cell in done.row] == [expected[c.label] for c in made.columns]
        scored += 1
    assert scored >= 19 and refused == 1


@pytest.mark.parametrize("name", ["other-teams/sourcesniffers_final_test.zip", "other-teams/frricter_submission_test.tsv",
                                  "other-teams/lucthiery_granite_top75_test.tsv"])
def test_cli_scores_json_equals_evalkit_score_json(tmp_path, name):
    """The two commands side by side: `evalkit competition run` writes what `evalkit score -o json` prints."""
    run = shared_or_skip(CT4B / "runs" / name)
    bundle = tmp_path / "b.zip"
    assert run_cli("competition", "bundle", "checkthat2025-4b", "--phase", f"test:{GOLD_4B['test']}", "--out", bundle,
                   "--no-self-test", "--submission-rules", "warn").returncode == 0  # lucthiery's file breaks them
    done = run_cli("competition", "run", bundle, upload_of(run, tmp_path), "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    printed = json.loads(run_cli("score", run, GOLD_4B["test"], "--task", "checkthat2025-4b", "-o", "json").stdout)
    assert json.loads((tmp_path / "out" / "scores.json").read_text()) == printed["metrics"]


def test_readme_commands_run(tmp_path):
    """The README's three commands ("Organising a shared task"), as written, from a folder beside the data."""
    import os
    import subprocess
    import sys

    from support.helpers import REPO, SHARED
    from test_readme import readme_block

    shared_or_skip(CT4B)
    script = readme_block("competition").replace("../shared/data", str(SHARED))
    shell = f'evalkit() {{ "{sys.executable}" -m evalkit "$@"; }}\nset -e\n{script}\n'
    done = subprocess.run(["bash", "-c", shell], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    assert "checkthat4b.zip: ok" in done.stdout and "0.6835" in done.stdout
    assert json.loads((tmp_path / "scored" / "scores.json").read_text())["MRR@5"] == 0.6834716459197788
