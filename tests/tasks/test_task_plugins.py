"""A third-party task (the README's example) installed from a temporary dist-info: listed, scored,
submitted and validated through the ``evalkit.tasks`` entry points, exactly as the built-ins."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from test_readme import readme_block

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\nq3 0 d9 1\n"
RUN = "".join(f"q{q} Q0 d{d} {r} {10 - r} r\n" for q in (1, 2, 3) for r, d in enumerate((4, 3, 1, 2, 9), start=1))


@pytest.fixture
def plugin(tmp_path):
    site = tmp_path / "site"
    (site / "my_track").mkdir(parents=True)
    (site / "my_track" / "__init__.py").write_text(readme_block("task-plugin"))
    info = site / "my_track-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-track\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[evalkit.tasks]\nmy-track-2026 = my_track:MyTrack2026\n")
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.trec").write_text(RUN)
    return tmp_path, {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}


def evalkit(folder, env, *args):
    return subprocess.run([sys.executable, "-m", "evalkit", *args], cwd=folder, env=env, capture_output=True, text=True, timeout=120)


def test_listed_scored_submitted_validated(plugin):
    folder, env = plugin
    listed = evalkit(folder, env, "tasks")
    assert listed.returncode == 0 and "my-track-2026" in listed.stdout and "3 per query" in listed.stdout
    scored = evalkit(folder, env, "score", "run.trec", "qrels.txt", "--task", "my-track-2026", "--output", "json")
    assert scored.returncode == 0, scored.stderr
    assert '"Success@3"' in scored.stdout  # q1: d1 at 3 (hit), q2: d3 at 2 (hit), q3: d9 at 5 (miss) -> 2/3
    import json

    report = json.loads(scored.stdout)
    assert abs(report["official"]["value"] - 2 / 3) < 1e-12 if isinstance(report.get("official"), dict) else "0.6667" in scored.stdout
    submitted = evalkit(folder, env, "submit", "run.trec", "--task", "my-track-2026", "--out", "sub.tsv")
    assert submitted.returncode == 0, submitted.stderr
    assert (folder / "sub.tsv").read_text().splitlines() == ["query\tdocs", "q1\td4,d3,d1", "q2\td4,d3,d1", "q3\td4,d3,d1"]
    assert (folder / "sub.tsv.manifest.json").exists()
    valid = evalkit(folder, env, "validate", "sub.tsv", "--task", "my-track-2026")
    assert valid.returncode == 0, valid.stdout + valid.stderr
    (folder / "bad.tsv").write_text("query\tdocs\nq1\td1,d2\n")
    invalid = evalkit(folder, env, "validate", "bad.tsv", "--task", "my-track-2026")
    assert invalid.returncode == 1 and "bad.tsv:2: expected 3 ids" in invalid.stdout


def test_builtin_detection_is_unchanged_with_the_plugin(plugin):
    folder, env = plugin
    scored = evalkit(folder, env, "score", "run.trec", "qrels.txt")
    assert scored.returncode == 0 and "nDCG@10" in scored.stdout  # the trec task still claims TREC qrels


def test_broken_task_plugin_is_one_line(tmp_path):
    site = tmp_path / "site"
    info = site / "broken-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[evalkit.tasks]\nbroken = no_such_module:Task\n")
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = evalkit(tmp_path, env, "tasks")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "task plugin 'broken'" in done.stderr and "of broken" in done.stderr and "Traceback" not in done.stderr


def test_builtins_are_registered_through_entry_points():
    from importlib import metadata

    names = {ep.name for ep in metadata.entry_points(group="evalkit.tasks")}
    assert {"checkthat2025-4b", "climatecheck2025-retrieval", "climatecheck2025-verification", "trec"} <= names
