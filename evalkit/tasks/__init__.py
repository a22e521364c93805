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

import numbers

from evalkit.core.entry_points import EntryPoint, plugin_entry_points
from evalkit.core.errors import EvalkitError, UsageError, shown
from evalkit.tasks.base import Task, TaskScore

ENTRY_POINT_GROUP = "evalkit.tasks"
_REGISTRY: dict[str, Task] = {}
_ORIGIN: dict[type, str] = {}  # task class -> the distribution that declared it (from its entry point)
_LOADED = False


class TaskNameClash(UsageError):
    """Two task classes under one name: a plugin never replaces a task (it would change official figures silently)."""

    def __init__(self, name: str, first: type, second: type):
        self.name, self.first, self.second = name, first, second
        super().__init__(self.describe())

    def describe(self) -> str:
        return (f"task {self.name!r} is declared twice: by {_origin(self.first)} and by {_origin(self.second)}; "
                "a plugin never replaces a task: uninstall one of them, or rename the plugin's task")


def _origin(task_cls: type) -> str:
    """``distribution (module:Class)`` for messages: the entry point's distribution, else the module's."""
    where = f"{task_cls.__module__}:{task_cls.__qualname__}"
    dist = _ORIGIN.get(task_cls)
    if dist is None:
        from importlib import metadata

        top = task_cls.__module__.split(".")[0]
        dist = ", ".join(metadata.packages_distributions().get(top, [])) or f"package {top!r}"
    return f"{dist} ({where})"


def register(task_cls: type[Task]) -> type[Task]:
    """Class decorator (and entry-point hook): make an instance of ``task_cls`` available under its name.

    A second class under a name already taken is refused (:class:`TaskNameClash`), whichever came first.
    """
    name = getattr(task_cls, "name", None)
    if not isinstance(name, str) or not name:
        raise UsageError(f"task class {task_cls.__qualname__} has no name")
    existing = _REGISTRY.get(name.lower())
    if existing is None:
        try:
            _REGISTRY[name.lower()] = task_cls()
        except Exception as exc:  # noqa: BLE001 - a broken plugin is one line, not a traceback
            raise UsageError(f"task {name!r} ({_origin(task_cls)}) cannot be created: {type(exc).__name__}: {shown(str(exc), 200)}") from None
    elif type(existing) is not task_cls:
        raise TaskNameClash(name, type(existing), task_cls)
    return task_cls


def _distribution(entry: EntryPoint) -> str:
    return entry.dist_name or "the plugin"


def load_entry_points() -> None:
    """Import every task declared under ``evalkit.tasks`` (once; :func:`refresh` forgets)."""
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    try:
        for entry in plugin_entry_points(ENTRY_POINT_GROUP):  # the built-ins from evalkit/entry_points.txt if not installed
            _load_entry(entry)
    except EvalkitError:
        _LOADED = False  # every later call refuses again, never with half a registry
        raise


def _load_entry(entry: EntryPoint) -> None:
    dist = _distribution(entry)
    try:
        loaded = entry.load()
    except TaskNameClash as clash:  # the plugin's module registered its class while being imported
        _ORIGIN.setdefault(clash.second, dist)
        raise UsageError(clash.describe()) from None
    except Exception as exc:  # noqa: BLE001 - a broken plugin is one line, not a traceback
        raise UsageError(f"task plugin {entry.name!r} ({entry.value}) of {dist} cannot be loaded: "
                         f"{type(exc).__name__}: {shown(str(exc), 200)}; reinstall or remove it") from None
    if not (isinstance(loaded, type) and issubclass(loaded, Task)):
        raise UsageError(f"entry point {entry.name!r} ({entry.value}) of {dist} is not an evalkit Task class")
    _ORIGIN.setdefault(loaded, dist)
    if not getattr(loaded, "name", None):
        loaded.name = entry.name  # the entry-point name is the default task name
    register(loaded)


def refresh() -> None:
    """Read the entry points again (after installing a task plugin in the same process)."""
    global _LOADED
    _LOADED = False


def tasks() -> list[Task]:
    load_entry_points()
    return list(_REGISTRY.values())


def get_task(name: str) -> Task:
    """The task registered as ``name``; a name ending in ``.toml`` is a profile file (:mod:`evalkit.tasks.profiles.toml_file`)."""
    from evalkit.tasks.profiles.toml_file import is_profile_file, read_profile

    if is_profile_file(str(name)):
        return read_profile(name)
    load_entry_points()
    task = _REGISTRY.get(str(name).lower())
    if task is None:
        raise UsageError(f"unknown task {shown(str(name))} (known: auto, {', '.join(_REGISTRY)})")
    return task


def detect_task(gold_format: str) -> Task:
    """The task whose :meth:`Task.detects` claims the gold format most strongly (ties: the first registered).

    Only the gold decides (a run never does: a participant's file must not choose the task it is scored by).
    A plugin whose ``detects`` fails, or answers anything but an integer, stops detection with one line
    naming it: skipping it could hand the gold to another task and give wrong official figures.
    """
    claims: list[tuple[int, int, Task]] = []  # (strength, -registration order, task)
    for order, task in enumerate(tasks()):
        try:
            strength = task.detects(gold_format, None)
        except Exception as exc:  # noqa: BLE001 - a broken plugin is one line, not a traceback
            raise UsageError(_detection_failed(task, f"failed ({type(exc).__name__}: {shown(str(exc), 200)})")) from None
        if isinstance(strength, bool) or not isinstance(strength, numbers.Integral):
            raise UsageError(_detection_failed(task, f"answered {shown(strength)}, not an integer"))
        if strength != 0:
            claims.append((strength, -order, task))
    if not claims:
        raise UsageError(f"no task reads gold files of format {gold_format!r}; pass --task (see `evalkit tasks`)")
    return max(claims, key=lambda claim: claim[:2])[2]


def task_for_dataset(dataset_id: str) -> tuple[Task, str] | None:
    """The task (an evaluation profile) whose ``dataset_ids`` match the ir_datasets id most specifically, and the pattern."""
    from evalkit.tasks.profiles.base import profile_for_dataset

    return profile_for_dataset(dataset_id, tasks())


def _detection_failed(task: Task, what: str) -> str:
    return (f"task {task.name!r} of {_origin(type(task))}: detects() {what} while detecting the task of a "
            "gold file; name the task with --task NAME, or fix or uninstall that plugin")


__all__ = ["ENTRY_POINT_GROUP", "Task", "TaskNameClash", "TaskScore", "detect_task", "get_task", "load_entry_points", "refresh",
           "register", "task_for_dataset", "tasks"]
