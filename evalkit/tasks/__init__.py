"""The task registry: every shared task is one :class:`Task` class, registered through entry points.

Tasks register through the ``evalkit.tasks`` entry-point group, the built-ins
(declared in evalkit's own ``setup.py``) exactly as a third-party package
would::

    # in the plugin's pyproject.toml
    [project.entry-points."evalkit.tasks"]
    my-track-2026 = "my_package.task:MyTrack2026"

A task class declares everything about itself (formats, submission format,
depth, labels, official score, detection: see :class:`Task`); ``evalkit
tasks``, detection, ``score``, ``validate`` and ``submit`` read those
declarations. The task-aware submission entry points are in
:mod:`evalkit.tasks.submissions`.
"""
from __future__ import annotations

from evalkit.entry_points import EntryPoint, entry_points
from evalkit.errors import UsageError
from evalkit.tasks.base import Task, TaskScore

ENTRY_POINT_GROUP = "evalkit.tasks"
# only used when evalkit runs from a source tree that was never installed (no entry points to read)
BUILTIN_MODULES = ("checkthat2025_4b", "climatecheck2025_retrieval", "climatecheck2025_verification", "trec")
_REGISTRY: dict[str, Task] = {}
_LOADED = False


def register(task_cls: type[Task]) -> type[Task]:
    """Class decorator (and entry-point hook): make an instance of ``task_cls`` available under its name."""
    name = getattr(task_cls, "name", None)
    if not isinstance(name, str) or not name:
        raise UsageError(f"task class {task_cls.__qualname__} has no name")
    _REGISTRY.setdefault(name.lower(), task_cls())
    return task_cls


def _distribution(entry: EntryPoint) -> str:
    return entry.dist_name or "the plugin"


def load_entry_points() -> None:
    """Import every task declared under ``evalkit.tasks`` (once; :func:`refresh` forgets)."""
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    entries = entry_points(ENTRY_POINT_GROUP)
    for entry in entries:
        try:
            loaded = entry.load()
        except Exception as exc:  # noqa: BLE001 - a broken plugin is one line, not a traceback
            raise UsageError(f"task plugin {entry.name!r} ({entry.value}) of {_distribution(entry)} cannot be loaded: "
                             f"{type(exc).__name__}: {exc}; reinstall or remove it") from None
        if not (isinstance(loaded, type) and issubclass(loaded, Task)):
            raise UsageError(f"entry point {entry.name!r} ({entry.value}) is not an evalkit Task class")
        if not getattr(loaded, "name", None):
            loaded.name = entry.name  # the entry-point name is the default task name
        register(loaded)
    if not any(entry.value.startswith("evalkit.tasks.") for entry in entries):
        import importlib

        for module in BUILTIN_MODULES:  # an uninstalled source tree: import the built-ins directly
            importlib.import_module(f"evalkit.tasks.{module}")


def refresh() -> None:
    """Read the entry points again (after installing a task plugin in the same process)."""
    global _LOADED
    _LOADED = False


def tasks() -> list[Task]:
    load_entry_points()
    return list(_REGISTRY.values())


def get_task(name: str) -> Task:
    load_entry_points()
    task = _REGISTRY.get(str(name).lower())
    if task is None:
        raise UsageError(f"unknown task {name!r} (known: auto, {', '.join(_REGISTRY)})")
    return task


def detect_task(gold_format: str, run=None) -> Task:
    """The task whose :meth:`Task.detects` claims the gold format (and run) most strongly."""
    candidates = [(task.detects(gold_format, run), order, task) for order, task in enumerate(tasks())]
    claimed = [c for c in candidates if c[0] != 0]
    if not claimed:
        raise UsageError(f"no task reads gold files of format {gold_format!r}; pass --task (see `evalkit tasks`)")
    return max(claimed, key=lambda c: (c[0], -c[1]))[2]


__all__ = ["ENTRY_POINT_GROUP", "Task", "TaskScore", "detect_task", "get_task", "load_entry_points", "refresh", "register", "tasks"]
