"""``evalkit demo``: the README's main command works on the shipped example, end to end."""
from __future__ import annotations

import json

from helpers import run_cli


def test_demo_writes_every_output(tmp_path):
    done = run_cli("demo", "--out-dir", tmp_path / "demo", env={"EVALKIT_CACHE": str(tmp_path / "cache")})
    assert done.returncode == 0, done.stderr
    folder = tmp_path / "demo"
    for name in ("bm25-stem.trec", "bm25-whitespace.trec", "submission.zip", "submission.zip.manifest.json", "scores.json",
                 "report.md", "report.first-relevant-rank.png"):
        assert (folder / name).exists(), name
    assert "VALID:" in done.stdout and "done: run" in done.stderr
    scores = json.loads((folder / "scores.json").read_text())
    assert scores["task"] == "checkthat2025-4b" and 0.5 < scores["official"]["value"] <= 1.0
    assert "bm25-whitespace" in (folder / "report.md").read_text()
    again = run_cli("demo", "--out-dir", folder)
    assert again.returncode == 2 and "exists; pass --force" in again.stderr
