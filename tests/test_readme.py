"""The README's first commands stay true: CI runs exactly its test command."""
import re

from helpers import REPO


def readme_commands() -> list[str]:
    return re.findall(r"```bash\n(.+?)\n```", (REPO / "README.md").read_text())


def test_ci_runs_the_readme_test_command():
    install_and_run, test_command = readme_commands()[:2]
    assert "pytest" in test_command and "pip install" in test_command
    ci_lines = (REPO / ".ci" / "run").read_text().splitlines()
    assert test_command in ci_lines


def test_readme_first_command_is_the_demo_on_shipped_files():
    install_and_run = readme_commands()[0]
    assert install_and_run.endswith("evalkit demo")  # tests/test_demo.py runs it
    for path in re.findall(r"gold/[\w./-]+", (REPO / "README.md").read_text()):
        assert (REPO / path.rstrip(".")).exists(), path
    assert (REPO / "systems" / "examples" / "collection.jsonl").exists() and (REPO / "systems" / "examples" / "tweets.tsv").exists()


def readme_block(marker: str) -> str:
    """The fenced block right after ``<!-- readme-test: MARKER -->`` in the README."""
    text = (REPO / "README.md").read_text()
    match = re.search(rf"<!-- readme-test: {re.escape(marker)} -->\n```\w*\n(.+?)\n```", text, re.S)
    assert match, f"README has no block marked {marker}"
    return match.group(1)


def test_from_python_section_runs(monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    exec(compile(readme_block("python"), "README.md (From Python)", "exec"), {})
    out = capsys.readouterr().out
    assert "nDCG@10 0.8155" in out and "MRR@5" in out


def test_from_python_pipeline_block_runs(monkeypatch, capsys, tmp_path):
    """run_pipeline, save, write_submission, validate and write_report as the README shows them."""
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("EVALKIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    exec(compile(readme_block("python-pipeline"), "README.md (pipelines, submissions, reports)", "exec"), {})
    out = capsys.readouterr().out
    assert "VALID:" in out and "report.first-relevant-rank.png" in out
    folder = next(p for p in tmp_path.iterdir() if p.is_dir() and p.name != "cache")
    for name in ("bm25-stem.trec", "bm25-stem.trec.manifest.json", "submission.zip", "report.md"):
        assert (folder / name).exists(), name
    report = (folder / "report.md").read_text()
    assert "| whitespace (baseline) |" in report and "| stem |" in report
