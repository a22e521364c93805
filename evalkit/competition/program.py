"""The scoring program zip: evalkit's own pure-Python code, vendored, run by the image's ``python3``.

How evalkit gets into the worker: the bundle declares
``docker_image: codalab/codalab-legacy:py312`` (Codabench's Python 3.12
image: numpy 1.26.4, scipy, pandas, pyyaml) and the scoring program carries
evalkit's pure-Python package (the optional C kernels stay out: their
pure-Python twins give the same results). The scoring path imports numpy
and nothing else outside the standard library, so the program runs on the
stock image, offline, with no ``pip install`` in the container and nothing
to build; ``requirements.txt`` in the program says so. A plugin task's
package travels the same way.

Layout::

    metadata.yaml          command: python3 $program/score.py $input $output
    score.py               the launcher (no bytecode written; evalkit from this folder)
    evalkit-scoring.json   task, leaderboard columns (figure label -> key), scoring options, submission rules
    requirements.txt       what the scoring path imports (numpy)
    evalkit/...            evalkit's pure-Python package and the HTML page's assets
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from evalkit._version import __version__
from evalkit.competition.columns import Column
from evalkit.competition.scoring import PROGRAM_CONFIG
from evalkit.core.errors import UsageError
from evalkit.core.jsonout import strict

COMMAND = "python3 $program/score.py $input $output"
REQUIREMENTS = "numpy>=1.24\n"  # the only third-party import of the scoring path (the py312 image has numpy 1.26.4)
LAUNCHER = '''"""Scoring program of an evalkit competition bundle (evalkit {version}); settings in evalkit-scoring.json."""
import os
import sys

sys.dont_write_bytecode = True  # nothing is written outside output/ (no __pycache__ in the program folder)
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # the vendored evalkit below, whatever the image has installed

from evalkit.competition.scoring import main  # noqa: E402

sys.exit(main(HERE))
'''
_SKIP_PARTS = {"__pycache__", "csrc"}
_DATA_SUFFIXES = {".py", ".js", ".css", ".html", ".typed", ".txt"}  # .txt: the built-in entry points


def package_files(root: Path, prefix: str) -> dict[str, bytes]:
    """The pure-Python files of the package at ``root`` (and its page assets), named ``prefix/...``."""
    files = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if not path.is_file() or _SKIP_PARTS & set(relative.parts) or path.suffix not in _DATA_SUFFIXES:
            continue
        files[f"{prefix}/{relative.as_posix()}"] = path.read_bytes()
    return files


def evalkit_files() -> dict[str, bytes]:
    """evalkit's own package as installed (editable or not), without compiled kernels or caches."""
    import evalkit

    return package_files(Path(evalkit.__file__).parent, "evalkit")


def plugin_files(task) -> tuple[dict[str, bytes], dict[str, str] | None]:
    """A plugin task's code (its top-level package or module) and how to load it; nothing for evalkit's own tasks."""
    cls = type(task)
    top = cls.__module__.split(".")[0]
    if top == "evalkit":
        return {}, None
    module = sys.modules.get(top)
    location = getattr(module, "__file__", None)
    if not location:
        raise UsageError(f"task {task.name!r}: its module {cls.__module__} has no source file to put in the scoring program")
    path = Path(location)
    if path.suffix != ".py":
        raise UsageError(f"task {task.name!r}: {path} is compiled; the scoring program carries pure-Python task code only")
    files = package_files(path.parent, top) if path.name == "__init__.py" else {path.name: path.read_bytes()}
    return files, {"module": cls.__module__, "class": cls.__qualname__}


def program_files(task, columns: list[Column], options: dict[str, Any], title: str, max_input_size: int | None,
                  submission_rules: str) -> dict[str, bytes]:
    """Every file of the scoring program, by name (``submission_rules``: :mod:`evalkit.competition.rules`' mode)."""
    plugin, loader = plugin_files(task)
    config = {
        "schema": "evalkit-scoring/1",
        "evalkit_version": __version__,
        "title": title,
        "task": task.name,
        "plugin": loader,
        "columns": [{"label": c.label, "key": c.key, "precision": c.precision} for c in columns],
        "options": options,
        "max_input_size": max_input_size,
        "submission_rules": submission_rules,
    }
    metadata = (f"# evalkit {__version__}: scores input/res against input/ref (see evalkit-scoring.json)\n"
                f"command: {COMMAND}\n"
                "description: evalkit scoring program; writes scores.json and detailed_results.html\n")
    files = {
        "metadata.yaml": metadata.encode(),
        "score.py": LAUNCHER.format(version=__version__).encode(),
        PROGRAM_CONFIG: (strict(config, f"the scoring program's {PROGRAM_CONFIG}", indent=2) + "\n").encode(),
        "requirements.txt": REQUIREMENTS.encode(),
    }
    files.update(evalkit_files())
    files.update(plugin)
    return files
