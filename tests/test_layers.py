"""The house, read from the code: every evalkit module sits in exactly one layer, imports (module level AND
inside functions) only look down or sideways, there is no import circle, the scoring core imports no model
library, and nothing imports the built-in systems except through their entry points.

The one named exception to "no circle" is the registration pattern: a module importing its own package
(``evalkit/metrics/ndcg.py`` registers itself with ``evalkit.metrics``, whose ``__init__`` imports the built-in
metric modules), as ir_measures does. Imports under ``if TYPE_CHECKING:`` never run, but they are arrows
of the drawing all the same: they count too. Names loaded by ``importlib.import_module`` (entry points, the
lazy doors) are not arrows.
"""
from __future__ import annotations

import ast
import subprocess
import sys

from support.helpers import REPO

# bottom to top: a package may import its own layer or a lower one (docs/explanation/architecture.md). The folders
# are the layers, none of them with a module of another layer inside.
LAYERS = [
    ("foundation", ("evalkit._version", "evalkit.core", "evalkit.native")),
    ("data model", ("evalkit.data",)),
    ("input/output", ("evalkit.io",)),
    ("metrics", ("evalkit.metrics",)),
    ("statistics", ("evalkit.stats",)),
    ("tasks", ("evalkit.submission", "evalkit.tasks")),
    ("scoring services", ("evalkit.scoring",)),
    ("judging", ("evalkit.judging",)),
    ("report", ("evalkit.report",)),
    ("fusion", ("evalkit.fusion",)),
    ("python api", ("evalkit.api",)),
    ("competition", ("evalkit.competition",)),
    ("pipeline runtime", ("evalkit.pipelines",)),
    ("systems", ("evalkit.systems",)),
    ("doors", ("evalkit.cli", "evalkit.__main__", "evalkit.stages", "evalkit")),
]
# the only modules at the top of evalkit/: the package's door, the version, the command and the plugin alias
FLAT = {"evalkit", "evalkit.__main__", "evalkit._version", "evalkit.stages"}
MODEL_LIBRARIES = ("torch", "transformers", "sentence_transformers")


def module_name(path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[0] == "systems":  # installed as evalkit.systems
        parts = ["evalkit", *parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def all_modules() -> dict:
    return {module_name(p): p for folder in ("evalkit", "systems") for p in (REPO / folder).rglob("*.py")}


def imports_of(path, name: str) -> set[str]:
    """Every module ``path`` imports, at module level, inside functions or under ``TYPE_CHECKING``, resolved."""
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(nodes) -> None:
        for node in nodes:
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(parent + ([node.module] if node.module else []))
                found.add(base)
                found.update(f"{base}.{alias.name}" for alias in node.names)
            else:
                visit(ast.iter_child_nodes(node))

    visit(tree.body)
    return found


def graph_of(modules: dict, extra: dict | None = None) -> dict[str, set[str]]:
    """``{module: evalkit modules it imports}``, the registration pattern (a module importing its own package) left out."""
    graph = {}
    for name, path in modules.items():
        imported = {m for m in imports_of(path, name) if m in modules and m != name and not name.startswith(m + ".")}
        graph[name] = imported | set((extra or {}).get(name, ()))
    return graph


def layer_of(name: str) -> int | None:
    """The layer of a module: the longest matching prefix decides."""
    best, depth = None, -1
    for number, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            package_door = prefix == "evalkit"  # the package's own __init__ only, not a catch-all for new modules
            if (name == prefix or (not package_door and name.startswith(prefix + "."))) and len(prefix) > depth:
                best, depth = number, len(prefix)
    return best


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for child in sorted(graph.get(node, ())):
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
            if cycle:
                return cycle
    return None


def test_every_module_sits_in_one_layer():
    unplaced = [name for name in all_modules() if layer_of(name) is None]
    assert not unplaced, f"modules in no layer (put them in the package of their layer, docs/explanation/architecture.md): {unplaced}"


def upward_arrows(graph: dict[str, set[str]]) -> list[str]:
    return [f"{name} ({LAYERS[layer_of(name)][0]}) imports {target} ({LAYERS[layer_of(target)][0]})"
            for name, targets in graph.items() for target in sorted(targets) if layer_of(target) > layer_of(name)]


def test_imports_only_look_down_lazy_imports_included():
    graph = graph_of(all_modules())
    assert not upward_arrows(graph), upward_arrows(graph)
    assert sum(len(v) for v in graph.values()) > 300  # the graph was really read, function-level imports included


def test_an_injected_upward_import_is_found():
    """A lazy import of the metrics from the data model is reported."""
    graph = graph_of(all_modules(), extra={"evalkit.data.ids": {"evalkit.metrics.evaluation"}})
    assert any(line.startswith("evalkit.data.ids (data model) imports evalkit.metrics.evaluation") for line in upward_arrows(graph))


def test_the_layers_are_packages():
    """The folder tree is the layers: a layer names packages (folders), never a flat module, but for the doors."""
    modules = all_modules()
    flat = sorted(name for name in modules if name.count(".") == 1 and modules[name].name != "__init__.py")
    assert set(flat) <= FLAT, f"modules flat at the top of evalkit/ (put them in the package of their layer): {sorted(set(flat) - FLAT)}"
    for _, prefixes in LAYERS:
        for prefix in prefixes:
            named_module = prefix in modules and modules[prefix].name != "__init__.py"
            assert not named_module or prefix in FLAT, prefix


def test_no_import_circle_lazy_imports_included():
    graph = graph_of(all_modules())
    cycle = find_cycle(graph)
    assert cycle is None, " -> ".join(cycle)


def test_an_injected_circle_is_found():
    """A lazy import inside a function that closes a loop (the errors importing the evaluation, which imports them)."""
    graph = graph_of(all_modules(), extra={"evalkit.core.errors": {"evalkit.metrics.evaluation"}})
    cycle = find_cycle(graph)
    assert cycle is not None and "evalkit.core.errors" in cycle and "evalkit.metrics.evaluation" in cycle


def builtin_task_names() -> set[str]:
    """Every name of a built-in task: its package under evalkit/tasks/ and the names it registers (entry_points.txt)."""
    text = (REPO / "evalkit" / "entry_points.txt").read_text()
    section = text.split("[evalkit.tasks]", 1)[1].split("[", 1)[0]
    registered = {line.split("=")[0].strip() for line in section.splitlines() if "=" in line}
    # a task's own package: a folder of evalkit/tasks/ whose tasks bear its name (checkthat2025_4b: checkthat2025-4b)
    packages = {p.parent.name for p in (REPO / "evalkit" / "tasks").glob("*/__init__.py")
                if any(name.replace("-", "_").startswith(p.parent.name) for name in registered)}
    return packages | {name for name in registered if any(name.replace("-", "_").startswith(package) for package in packages)}


def names_a_task(source: str, names: set[str]) -> list[str]:
    """The code tokens of ``source`` (strings and names; docstrings and comments aside) that name a built-in task."""
    import io
    import tokenize

    tree = ast.parse(source)
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                docstrings.update(range(first.lineno, first.end_lineno + 1))
    lowered = {name.lower() for name in names}
    return [f"{token.start[0]}: {token.string[:60]}" for token in tokenize.generate_tokens(io.StringIO(source).readline)
            if token.type in (tokenize.NAME, tokenize.STRING) and token.start[0] not in docstrings
            and any(name in token.string.lower() for name in lowered)]


def test_no_generic_module_names_a_builtin_task():
    """A built-in task is one package: no module outside ``evalkit/tasks/<task>/`` names it in its code (help texts,
    presets, leaderboard keys come from the task registry); docstrings and comments may."""
    names = builtin_task_names()
    assert {"checkthat2025_4b", "climatecheck2025", "checkthat2025-4b"} <= names
    task_folders = {REPO / "evalkit" / "tasks" / name for name in names}
    naming = {str(path.relative_to(REPO)): found for path in (REPO / "evalkit").rglob("*.py")
              if not task_folders & set(path.parents) and (found := names_a_task(path.read_text(), names))}
    assert not naming, naming


def test_a_generic_module_naming_a_task_is_found():
    probe = 'DEFAULT = "checkthat2025-4b"\n\ndef f():\n    """Scores checkthat2025-4b (a docstring may say so)."""\n    # and a comment\n'
    assert names_a_task(probe, builtin_task_names()) == ['1: "checkthat2025-4b"']


def test_a_lazy_import_is_an_arrow(tmp_path):
    (tmp_path / "evalkit").mkdir()
    probe = tmp_path / "evalkit" / "probe.py"
    probe.write_text("def f():\n    from evalkit.data import Run\n    return Run\n")
    assert "evalkit.data" in imports_of(probe, "evalkit.probe")


def test_nothing_imports_the_systems_but_their_entry_points():
    graph = graph_of(all_modules())
    reaching = [f"{name} imports {target}" for name, targets in graph.items() for target in targets
                if target.startswith("evalkit.systems") and not name.startswith("evalkit.systems")]
    assert not reaching, reaching


def test_scoring_imports_no_model_library(tmp_path):
    code = (
        "import sys, evalkit\n"
        "r = evalkit.score({'q': {'a': 1.0, 'b': 0.5}}, {'q': {'a': 1}})\n"
        "import evalkit.api, evalkit.tasks, evalkit.io.formats, evalkit.metrics, evalkit.stats.comparison, evalkit.fusion\n"
        f"print([m for m in {MODEL_LIBRARIES!r} if m in sys.modules])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", done.stdout


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
    """As on a light install (`pip install evalkit-ir`, no systems extra): torch, transformers and
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
    assert blocked.stderr.splitlines()[-1] == "evalkit: this needs 'torch', which is not installed: pip install 'evalkit-ir[systems]'"
