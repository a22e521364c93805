"""``evalkit demo``: the README's main command works on the shipped example, end to end."""
from __future__ import annotations

import json

from support.helpers import run_cli


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
    again = run_cli("demo", "--out-dir", folder, env={"EVALKIT_CACHE": str(tmp_path / "cache")})
    assert again.returncode == 0, again.stderr  # its own previous outputs, unchanged, are replaced
    record = json.loads((folder / "demo.manifest.json").read_text())["outputs"]
    assert sorted(record) == sorted(p.name for p in folder.iterdir() if p.name != "demo.manifest.json")
    (folder / "scores.json").write_text("my notes\n")  # a user's edit is never replaced without --force
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    refused = run_cli("demo", "--out-dir", folder, env={"EVALKIT_CACHE": str(tmp_path / "cache")})
    assert refused.returncode == 2 and "scores.json: exists and is not the previous demo's output" in refused.stderr
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_demo_never_replaces_a_users_file(tmp_path):
    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "report.md").write_text("mine\n")
    done = run_cli("demo", "--out-dir", folder, env={"EVALKIT_CACHE": str(tmp_path / "cache")})
    assert done.returncode == 2 and "report.md: exists; pass --force" in done.stderr
    assert [p.name for p in folder.iterdir()] == ["report.md"]


def test_reports_show_paths_normalised_never_the_home_folder(tmp_path, monkeypatch):
    import os

    from evalkit.core.safetext import shown_path

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path.parent))
    assert shown_path(tmp_path / "runs" / ".." / "a.trec") == "a.trec"  # inside the folder the command ran in
    assert shown_path("runs/../b.trec") == "b.trec" and shown_path("../x/c.trec") == os.path.join("..", "x", "c.trec")
    assert shown_path(tmp_path.parent / "other" / "d.trec") == os.path.join("~", "other", "d.trec")
    done = run_cli("demo", "--out-dir", tmp_path / "demo", cwd=tmp_path, env={"EVALKIT_CACHE": str(tmp_path / "cache")})
    assert done.returncode == 0, done.stderr
    for path in (tmp_path / "demo").iterdir():
        if path.suffix in (".md", ".json"):
            text = path.read_text()
            assert str(tmp_path) not in text and os.path.expanduser("~") + os.sep not in text, path.name
