"""`evalkit check`: recorded scores recomputed; drops fail (exit 1), improvements reported, --update, --add."""
from __future__ import annotations

import json
import shutil

import pytest

from support.helpers import CT4B, GOLD_4B, REPO, all_4b_runs, run_cli, shared_or_skip

BASELINE = REPO / "bench" / "baselines" / "checkthat2025-4b.json"
SCIBERT_DEV = CT4B / "runs" / "airwaves" / "predictions_SciBERT_dev_TOP10.tsv"


@pytest.mark.realdata
def test_project_baseline_covers_every_real_run_and_passes():
    shared_or_skip(CT4B)
    data = json.loads(BASELINE.read_text())
    runs = {(BASELINE.parent / e["run"]).resolve() for e in data["entries"]}
    assert runs == {p.resolve() for p in all_4b_runs()}
    swapped = {e["name"]: e["gold"].rsplit("_", 1)[-1] for e in data["entries"] if "E5_HN_All" in e["name"]}
    assert swapped == {"airwaves/E5_HN_All__dev_TOP100": "gold.tsv", "airwaves/E5_HN_All__test_TOP100": "dev.tsv"}  # paired by content
    result = run_cli("check", "--baseline", BASELINE, cwd=REPO.parent)  # stored paths do not depend on the cwd
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-1] == f"checked {len(runs)} scores against {BASELINE} (tolerance 0.001): {len(runs)} ok"


def test_ci_script_runs_the_check_after_the_tests():
    lines = (REPO / ".ci" / "run").read_text().splitlines()
    check = lines.index("evalkit check --baseline bench/baselines/checkthat2025-4b.json")
    assert check > next(i for i, line in enumerate(lines) if "pytest" in line)
    assert (REPO / "evalkit" / "templates" / "evalkit-scores.yml").read_text().count("evalkit check --baseline") >= 1


@pytest.mark.realdata
def test_add_check_drop_improve_update(tmp_path):
    gold = shared_or_skip(GOLD_4B["dev"])
    baseline = tmp_path / "ci" / "scores.json"
    baseline.parent.mkdir()
    added = run_cli("check", "--baseline", baseline, "--add", "--task", "checkthat2025-4b", "--gold", gold, "--run", SCIBERT_DEV)
    assert added.returncode == 0, added.stderr
    assert added.stdout.strip() == f"added airwaves/predictions_SciBERT_dev_TOP10: MRR@5 = 0.708405 (checkthat2025-4b) to {baseline}"
    second = run_cli("check", "--baseline", baseline, "--add", "--task", "checkthat2025-4b", "--gold", gold, "--run", SCIBERT_DEV,
                     "--metric", "recall@10", "--name", "scibert-r10")
    assert second.returncode == 0, second.stderr
    data = json.loads(baseline.read_text())
    entry = data["entries"][0]
    assert (baseline.parent / entry["gold"]).resolve() == gold.resolve()  # stored relative to the baseline's folder
    assert not entry["gold"].startswith("/") and entry["metric"] == "MRR@5"
    assert [e["metric"] for e in data["entries"]] == ["MRR@5", "Recall@10"]

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ok = run_cli("check", "--baseline", baseline, cwd=elsewhere)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout.splitlines()[0].split() == ["name", "metric", "expected", "now", "delta", "status"]

    data["entries"][0]["expected"] += 0.01  # the recorded value was higher: a drop now
    data["entries"][1]["expected"] -= 0.01  # an improvement
    baseline.write_text(json.dumps(data))
    dropped = run_cli("check", "--baseline", baseline)
    assert dropped.returncode == 1
    rows = dropped.stdout.splitlines()
    assert rows[1].split()[-2:] == ["-0.010000", "DROPPED"] and rows[2].split()[-2:] == ["+0.010000", "improved"]
    assert rows[-1].endswith("1 improved, 1 dropped")
    assert run_cli("check", "--baseline", baseline, "--tolerance", "0.02").returncode == 0

    updated = run_cli("check", "--baseline", baseline, "--update")
    assert updated.returncode == 0 and "2 expected values rewritten" in updated.stdout
    assert run_cli("check", "--baseline", baseline, "--tolerance", "0").returncode == 0


@pytest.mark.realdata
def test_entry_errors_and_bad_baselines(tmp_path):
    gold = shared_or_skip(GOLD_4B["dev"])
    baseline = tmp_path / "scores.json"
    assert run_cli("check", "--baseline", baseline, "--add", "--task", "checkthat2025-4b", "--gold", gold, "--run", SCIBERT_DEV).returncode == 0
    duplicate = run_cli("check", "--baseline", baseline, "--add", "--task", "checkthat2025-4b", "--gold", gold, "--run", SCIBERT_DEV)
    assert duplicate.returncode == 2 and "is already recorded" in duplicate.stderr

    run_copy = tmp_path / "run.tsv"
    shutil.copy(SCIBERT_DEV, run_copy)
    assert run_cli("check", "--baseline", baseline, "--add", "--task", "checkthat2025-4b", "--gold", gold, "--run", run_copy).returncode == 0
    run_copy.unlink()
    broken = run_cli("check", "--baseline", baseline)
    assert broken.returncode == 2
    assert broken.stderr.strip() == f"error: {tmp_path.name}/run: {run_copy}: no such file"
    assert broken.stdout.splitlines()[2].split()[-1] == "error"

    bad_files = [("{not json", "not valid JSON"), ('{"entries": [{"task": "x"}]}', "entry 1 lacks gold, run, metric, expected"),
                 ("[]", "not an evalkit baseline")]
    for content, message in bad_files:
        bad = tmp_path / "bad.json"
        bad.write_text(content)
        result = run_cli("check", "--baseline", bad)
        assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1 and message in result.stderr, result.stderr
    for args, message in [
        (("--baseline", tmp_path / "none.json"), "none.json: no such file"),
        (("--baseline", baseline, "--add", "--task", "checkthat2025-4b"), "--add needs --gold, --run"),
        (("--baseline", baseline, "--task", "checkthat2025-4b"), "--task only apply with --add"),
        (("--baseline", tmp_path / "no" / "b.json", "--add", "--task", "checkthat2025-4b", "--gold", gold, "--run", SCIBERT_DEV), "does not exist"),
        (("--baseline", baseline, "--add", "--task", "nope", "--gold", gold, "--run", SCIBERT_DEV), "unknown task 'nope'"),
    ]:
        result = run_cli("check", *args)
        assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1 and message in result.stderr, result.stderr
