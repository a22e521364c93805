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


def module_level_imports(path) -> set[str]:
    """evalkit modules a module imports when it is loaded: top-level statements, not functions or TYPE_CHECKING blocks."""
    tree = ast.parse(path.read_text())
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    names = set()

    def visit(statements):
        for node in statements:
            if isinstance(node, ast.If):
                if "TYPE_CHECKING" not in ast.unparse(node.test):
                    visit(node.body)
                    visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                for handler in node.handlers:
                    visit(handler.body)
            elif isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(parent + ([node.module] if node.module else []))
                names.add(base)
                names.update(f"{base}.{alias.name}" for alias in node.names)

    visit(tree.body)
    return names


def test_no_import_cycle_at_module_level():
    """The graph of what each evalkit module imports when loaded has no cycle (lazy imports inside functions aside;
    a module importing its own package's registry, as each metric, format and task does, is the registration pattern)."""
    paths = {module_name(p): p for p in (REPO / "evalkit").rglob("*.py")}
    def own_package(name: str, imported: str) -> bool:  # a module registering itself with its package (ir_measures' pattern)
        return name.startswith(imported + ".")

    graph = {name: sorted(m for m in module_level_imports(path) if m in paths and m != name and not own_package(name, m))
             for name, path in paths.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for child in graph[node]:
            if state.get(child) == 1:
                return stack[stack.index(child):] + [child]
            if child not in state:
                found = visit(child)
                if found:
                    return found
        state[node] = 2
        stack.pop()
        return None

    for name in sorted(graph):
        if name not in state:
            cycle = visit(name)
            assert cycle is None, " -> ".join(cycle)
    assert sum(len(v) for v in graph.values()) > 100  # the graph was really read


BLOCKER = """
import importlib.machinery, sys
found = importlib.machinery.PathFinder.find_spec
def find_spec(name, path=None, target=None):  # as if not installed: find_spec gives None, import raises ModuleNotFoundError
    return None if name.split(".")[0] in {blocked!r} else found(name, path, target)
importlib.machinery.PathFinder.find_spec = find_spec
from evalkit.cli import main
sys.argv = ["evalkit", *sys.argv[1:]]
sys.exit(main())
"""


def test_core_commands_work_without_model_libraries(tmp_path):
    """As on a light install (`pip install evalkit`, no systems extra): torch, transformers and
    sentence-transformers cannot be imported, and score, compare, report, fuse, validate and submit still work."""
    gold, run = REPO / "gold" / "examples" / "tweets_gold.tsv", REPO / "gold" / "examples" / "tweets_run.tsv"
    script = tmp_path / "light.py"
    script.write_text(BLOCKER.format(blocked=set(MODEL_LIBRARIES)))
    commands = [
        ["score", run, gold],
        ["compare", gold, run, run, "--permutations", "200", "--bootstrap", "200"],
        ["report", gold, run, "--out", tmp_path / "r.md"],
        ["fuse", run, run, "--out", tmp_path / "fused.trec"],
        ["submit", tmp_path / "fused.trec", "--task", "checkthat2025-4b", "--out", tmp_path / "sub.tsv"],
        ["validate", tmp_path / "sub.tsv", "--task", "checkthat2025-4b", "--gold", gold],
    ]
    for command in commands:
        done = subprocess.run([sys.executable, str(script), *map(str, command)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert done.returncode == 0, (command[0], done.stderr)
    blocked = subprocess.run([sys.executable, str(script), "run", "dense", "--corpus", gold, "--queries", gold, "--out", tmp_path / "x"],
                             capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert blocked.returncode == 2 and "Traceback" not in blocked.stderr, blocked.stderr  # the system needing torch: one line
    assert blocked.stderr.splitlines()[-1] == "evalkit: this needs 'torch', which is not installed: pip install 'evalkit[systems]'"
