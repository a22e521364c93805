"""`evalkit score` outputs, manifests, task detection and start-up cost."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from support.helpers import GOLD_4B, CT4B, REPO, run_cli, shared_or_skip

SCIBERT_TEST = CT4B / "runs" / "airwaves" / "predictions_SciBERT_test_TOP10.tsv"


@pytest.mark.realdata
def test_score_real_run_all_outputs(tmp_path):
    gold = shared_or_skip(GOLD_4B["test"])
    table = run_cli("score", SCIBERT_TEST, gold)
    assert table.returncode == 0, table.stderr
    first_metric = table.stdout.splitlines()[2]
    assert first_metric.startswith("MRR@5") and "(official)" in first_metric
    assert "ranking rule:" in table.stdout and "missing queries: zero" in table.stdout

    out = tmp_path / "score.json"
    per_query = tmp_path / "pq.tsv"
    result = run_cli("score", SCIBERT_TEST, gold, "-o", "json", "--out", out, "--per-query", per_query)
    assert result.returncode == 0, result.stderr
    data = json.loads(out.read_text())
    assert data["task"] == "checkthat2025-4b"
    assert data["official"]["metric"] == "MRR@5"
    assert abs(data["official"]["value"] - 0.68283) < 1e-4
    assert data["missing_policy"] == "zero"
    manifest = data["manifest"]
    assert manifest["evalkit_version"] and manifest["inputs"][0]["sha256"] and manifest["task"] == "checkthat2025-4b"
    rows = per_query.read_text().splitlines()
    assert rows[0].split("\t")[:2] == ["query_id", "MRR@5"] and len(rows) == 1447
    assert json.loads((tmp_path / "pq.tsv.manifest.json").read_text())["inputs"][1]["path"] == str(gold)

    markdown = run_cli("score", SCIBERT_TEST, gold, "-o", "markdown", "--missing", "skip")
    assert "| MRR@5 (official) | **0.6828** |" in markdown.stdout and "missing queries: skip" in markdown.stdout


def test_trec_task_on_beir_qrels(tmp_path):
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t2\n")
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 d1 1 2.0 r\nq1 Q0 d9 2 1.0 r\nq2 Q0 d9 1 2.0 r\nq2 Q0 d2 2 1.0 r\n")
    result = run_cli("score", run, qrels, "--metrics", "mrr ndcg@10", "-o", "tsv")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[1] == "MRR\t0.750000"


def test_version_and_help():
    version = run_cli("--version")
    assert version.returncode == 0 and version.stdout.startswith("evalkit ")
    assert "score" in run_cli("--help").stdout


@pytest.mark.realdata
def test_score_does_not_import_heavy_modules():
    gold = shared_or_skip(GOLD_4B["test"])
    code = (
        "import sys; from evalkit.cli import main; rc = main(['score', %r, %r]);"
        "print('HEAVY', sorted(m for m in ('torch', 'transformers', 'ranx', 'pandas', 'scipy', 'numba') if m in sys.modules))"
        % (str(CT4B / "runs" / "airwaves" / "E5_base_setup_test_TOP100.tsv"), str(gold))
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert "HEAVY []" in out.stdout, out.stdout + out.stderr
    help_code = "import sys; from evalkit.cli import main; main(['--help']); print('N', 'numpy' in sys.modules)"
    assert "N False" in subprocess.run([sys.executable, "-c", help_code], capture_output=True, text=True, cwd=REPO).stdout
