"""Task registry: one module per shared task, each registering a :class:`Task`."""
from __future__ import annotations

from evalkit.errors import UsageError
from evalkit.tasks.base import Task, TaskScore

_REGISTRY: dict[str, Task] = {}


def register(task_cls: type[Task]) -> type[Task]:
    _REGISTRY[task_cls.name] = task_cls()
    return task_cls


def tasks() -> list[Task]:
    return list(_REGISTRY.values())


def get_task(name: str) -> Task:
    task = _REGISTRY.get(name.lower())
    if task is None:
        raise UsageError(f"unknown task {name!r} (known: auto, {', '.join(_REGISTRY)})")
    return task


def detect_task(gold_format: str, run=None) -> Task:
    """Pick the task from the gold format (and, for ClimateCheck, whether the run has labels)."""
    if gold_format == "checkthat-gold":
        return _REGISTRY["checkthat2025-4b"]
    if gold_format == "climatecheck-gold":
        labelled = run is not None and run.labels is not None
        return _REGISTRY["climatecheck2025-verification" if labelled else "climatecheck2025-retrieval"]
    return _REGISTRY["trec"]


from evalkit.tasks import checkthat2025_4b, climatecheck2025_retrieval, climatecheck2025_verification, trec  # noqa: E402

__all__ = ["Task", "TaskScore", "detect_task", "get_task", "register", "tasks"]
