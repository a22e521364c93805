"""The layered house: lower layers never import upper ones (module level or inside functions), and the
scoring core imports no model library."""
from __future__ import annotations

import ast
import subprocess
import sys

from helpers import REPO

# layer -> packages/modules it must never import
FORBIDDEN = {
    "evalkit.formats": ("evalkit.tasks", "evalkit.submission", "evalkit.cli", "evalkit.api"),
    "evalkit.metrics": ("evalkit.tasks", "evalkit.submission", "evalkit.cli", "evalkit.api", "evalkit.formats"),
    "evalkit.submission": ("evalkit.tasks", "evalkit.cli", "evalkit.api"),
    "evalkit.tasks": ("evalkit.cli", "evalkit.api"),
    "evalkit.stats": ("evalkit.tasks", "evalkit.cli", "evalkit.api"),
}
MODEL_LIBRARIES = ("torch", "transformers", "sentence_transformers")


def imports_of(path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def module_name(path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_lower_layers_never_import_upper_ones():
    broken = []
    for path in sorted((REPO / "evalkit").rglob("*.py")):
        name = module_name(path)
        for layer, forbidden in FORBIDDEN.items():
            if name == layer or name.startswith(layer + "."):
                for imported in imports_of(path):
                    if any(imported == f or imported.startswith(f + ".") for f in forbidden):
                        broken.append(f"{name} imports {imported}")
    assert not broken, broken


def test_scoring_imports_no_model_library(tmp_path):
    code = (
        "import sys, evalkit\n"
        "r = evalkit.score({'q': {'a': 1.0, 'b': 0.5}}, {'q': {'a': 1}})\n"
        "import evalkit.api, evalkit.tasks, evalkit.formats, evalkit.metrics, evalkit.comparison, evalkit.fusion\n"
        f"print([m for m in {MODEL_LIBRARIES!r} if m in sys.modules])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", done.stdout
