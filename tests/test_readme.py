"""The README's first commands stay true: CI runs exactly its test command."""
import re

from conftest import REPO


def readme_commands() -> list[str]:
    return re.findall(r"```bash\n(.+?)\n```", (REPO / "README.md").read_text())


def test_ci_runs_the_readme_test_command():
    install_and_run, test_command = readme_commands()[:2]
    assert "pytest" in test_command and "pip install" in test_command
    ci_lines = (REPO / ".ci" / "run").read_text().splitlines()
    assert test_command in ci_lines


def test_readme_first_command_uses_shipped_files():
    install_and_run = readme_commands()[0]
    for path in re.findall(r"gold/\S+", install_and_run):
        assert (REPO / path).exists(), path
