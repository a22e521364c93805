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

# bottom to top: a module may import modules of its own layer or of a lower one (README "Architecture")
LAYERS = [
    ("foundation", ("evalkit._version", "evalkit.core.errors", "evalkit.core.columns", "evalkit.core.listparse", "evalkit.core.digest", "evalkit.native.kernels",
                    "evalkit.core.entry_points", "evalkit.io.signatures", "evalkit.io.readahead", "evalkit.io.streamed", "evalkit.core.options", "evalkit.data.labels",
                    "evalkit.core.safetext", "evalkit.core.input_rules", "evalkit.core.jsonout", "evalkit.core.progress")),
    ("data", ("evalkit.io.textio", "evalkit.io.writing", "evalkit.io.transactions", "evalkit.data.ids", "evalkit.data.ranking", "evalkit.data", "evalkit.io.prejudged", "evalkit.data.corpus",
              "evalkit.io.manifest", "evalkit.io.datasets")),
    ("formats", ("evalkit.io.formats",)),
    ("metrics", ("evalkit.metrics", "evalkit.metrics.evaluation", "evalkit.metrics.judgments", "evalkit.metrics.zscores", "evalkit.metrics.judgment_groups")),
    ("statistics", ("evalkit.stats", "evalkit.stats.comparison", "evalkit.stats.allpairs")),
    ("tasks", ("evalkit.submission", "evalkit.tasks", "evalkit.report.text", "evalkit.report.trec_eval", "evalkit.scoring.runset", "evalkit.io.reading",
               "evalkit.io.in_memory")),
    ("services", ("evalkit.fusion", "evalkit.scoring.leaderboard", "evalkit.scoring.check", "evalkit.scoring.check_schema", "evalkit.report",
                  "evalkit.competition",
                  "evalkit.judging")),
    ("python api", ("evalkit.api", "evalkit.api.report", "evalkit.api.fusion", "evalkit.api.judging", "evalkit.api.agreement",
                    "evalkit.api.judge")),
    ("pipeline runtime", ("evalkit.pipelines",)),
    ("systems", ("evalkit.systems",)),
    ("doors", ("evalkit.cli", "evalkit.__main__", "evalkit.stages", "evalkit")),
]
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
    """The layer of a module: the longest matching prefix decides (``evalkit.api.report`` is API, the rest of report services)."""
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
    assert not unplaced, f"modules in no layer (add them to LAYERS and the README's Architecture): {unplaced}"


def test_imports_only_look_down_lazy_imports_included():
    graph = graph_of(all_modules())
    upward = [f"{name} ({LAYERS[layer_of(name)][0]}) imports {target} ({LAYERS[layer_of(target)][0]})"
              for name, targets in graph.items() for target in sorted(targets) if layer_of(target) > layer_of(name)]
    assert not upward, upward
    assert sum(len(v) for v in graph.values()) > 300  # the graph was really read, function-level imports included


def test_no_import_circle_lazy_imports_included():
    graph = graph_of(all_modules())
    cycle = find_cycle(graph)
    assert cycle is None, " -> ".join(cycle)


def test_an_injected_circle_is_found():
    """A lazy import inside a function that closes a loop (ids importing data, which imports ids) is reported."""
    graph = graph_of(all_modules(), extra={"evalkit.data.ids": {"evalkit.data"}})
    cycle = find_cycle(graph)
    assert cycle is not None and "evalkit.data.ids" in cycle and "evalkit.data" in cycle


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
