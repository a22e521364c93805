"""The README's first commands stay true: CI runs exactly its test command."""
import re

from support.helpers import REPO


def readme_commands() -> list[str]:
    return re.findall(r"```bash\n(.+?)\n```", (REPO / "README.md").read_text())


def test_ci_runs_the_readme_test_command():
    install_and_run, test_command = readme_commands()[:2]
    assert "pytest" in test_command and "pip install" in test_command
    ci_lines = (REPO / ".ci" / "run").read_text().splitlines()
    assert test_command in ci_lines


def test_readme_first_command_is_the_demo_on_shipped_files():
    install_and_run = readme_commands()[0]
    assert install_and_run.endswith("evalkit demo")  # tests/cli/test_demo.py runs it
    for path in re.findall(r"gold/[\w./-]+", (REPO / "README.md").read_text()):
        assert (REPO / path.rstrip(".")).exists(), path
    assert (REPO / "systems" / "examples" / "collection.jsonl").exists() and (REPO / "systems" / "examples" / "tweets.tsv").exists()


def readme_block(marker: str) -> str:
    """The fenced block right after ``<!-- block: MARKER -->`` in a docs page (or ``<!-- readme-test: MARKER -->`` in the README).

    Other tests run such named blocks as written (tests/tasks/test_task_plugins.py, tests/competition/test_competition_realdata.py);
    more markers (``<!-- docs-test: ... -->``) may stand between the name and the block.
    """
    pages = [(REPO / "README.md", "readme-test")] + [(p, "block") for p in sorted((REPO / "docs").rglob("*.md"))]
    for page, kind in pages:
        match = re.search(rf"<!-- {kind}: {re.escape(marker)} -->\n(?:<!--[^\n]*-->\n)*```\w*\n(.+?)\n```", page.read_text(), re.S)
        if match:
            return match.group(1)
    raise AssertionError(f"no docs page has a block marked {marker}")


def test_readme_is_at_most_200_lines():
    assert len((REPO / "README.md").read_text().splitlines()) <= 200
