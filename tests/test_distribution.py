"""The distribution is evalkit-ir on PyPI (``evalkit`` there is an unrelated project): every install line says so,
while the import name and the command stay evalkit."""
from __future__ import annotations

import re
import tomllib
from importlib import metadata

from support.helpers import REPO

from evalkit._version import DISTRIBUTION

# `pip install evalkit`, `pip install 'evalkit[onnx]'`, "evalkit @ git+...", dependencies = ["evalkit"]: the wrong project
WRONG = re.compile(r"""(pip install(?: --?[\w-]+(?:=\S+)?)*\s+['"]?evalkit(?![\w-])|["']evalkit(\[[^\]]*\])?["']|"evalkit @)""")
INSTALLING_FILES = ["README.md", *(p.relative_to(REPO).as_posix() for p in (REPO / "docs").glob("*.md")),
                    *(p.relative_to(REPO).as_posix() for p in (REPO / ".github").rglob("*.yml")),
                    *(p.relative_to(REPO).as_posix() for p in (REPO / "evalkit" / "templates").glob("*.yml"))]


def test_the_distribution_name_is_evalkit_ir():
    assert DISTRIBUTION == "evalkit-ir"
    assert 'name=version["DISTRIBUTION"]' in (REPO / "setup.py").read_text()
    names = {dist.metadata["Name"] for dist in metadata.distributions() if "evalkit.cli:entry_point" in (dist.read_text("entry_points.txt") or "")}
    assert names <= {DISTRIBUTION, "evalkit"}  # an old editable install may still be called evalkit until reinstalled


def test_every_install_line_names_evalkit_ir():
    wrong = [f"{name}: {match.group(0)}" for name in INSTALLING_FILES for match in WRONG.finditer((REPO / name).read_text())]
    assert not wrong, wrong


def test_plugin_example_depends_on_evalkit_ir():
    text = (REPO / "docs" / "plugins.md").read_text()
    block = re.search(r"<!-- plugins-test: pyproject -->\n```\w*\n(.+?)\n```", text, re.S).group(1)
    assert tomllib.loads(block)["project"]["dependencies"] == [DISTRIBUTION]


def test_actions_template_caches_nothing_it_cannot_key():
    """setup-python's `cache: pip` fails without requirements*.txt or pyproject.toml (actions/setup-python#807)."""
    template = (REPO / "evalkit" / "templates" / "evalkit-scores.yml").read_text()
    steps = [line for line in template.splitlines() if not line.lstrip().startswith("#")]
    assert not any(re.match(r"\s*cache:\s*pip", line) for line in steps) or any("cache-dependency-path" in line for line in steps)
    assert "pip install evalkit-ir" in template
