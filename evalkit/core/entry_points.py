"""The entry points of a group (task, format, submission format, metric and system plugins), read as :mod:`importlib.metadata` reads them, without its imports.

``importlib.metadata`` imports ``email``, ``zipfile``, ``csv`` and ``tempfile``
(about a third of numpy's import time, on every ``evalkit score``) to read a
few lines of ``entry_points.txt``. This module reads the same files in the
same order: every ``*.dist-info`` and ``*.egg-info`` folder of each
``sys.path`` folder, the first distribution of a normalised name winning
(``importlib.metadata.entry_points``' own rule), each file parsed as its
``Sectioned`` parser does. Where distributions may come from elsewhere (a
zipped ``sys.path`` entry, an ``.egg`` folder, an import hook that finds
distributions) it hands over to ``importlib.metadata`` itself.
``tests/core/test_entry_points.py`` holds both equal.
"""
from __future__ import annotations

import importlib
import os
import re
import sys
from dataclasses import dataclass
from typing import Any

from evalkit.core.errors import EvalkitError, UsageError, shown

_ENTRY = re.compile(r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$")


@dataclass(frozen=True)
class EntryPoint:
    """``name = value`` of one group, and the distribution that declares it."""

    name: str
    value: str
    group: str
    dist_name: str | None

    def load(self) -> Any:
        """Import the module the value names and return its attribute (``module:attr.attr``)."""
        match = _ENTRY.match(self.value)
        if match is None:
            raise ValueError(f"entry point {self.name!r}: malformed value {self.value!r}")
        loaded = importlib.import_module(match.group("module"))
        for part in filter(None, (match.group("attr") or "").split(".")):
            loaded = getattr(loaded, part)
        return loaded


def _normalize(name: str) -> str:
    """PEP 503 normalisation with underscores (importlib.metadata's ``Prepared.normalize``)."""
    return re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")


def _parse(text: str, group: str, dist_name: str | None) -> list[EntryPoint]:
    """The entries of ``group`` in an ``entry_points.txt`` (importlib.metadata's ``Sectioned`` rules)."""
    found, section = [], None
    for line in map(str.strip, text.splitlines()):
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line.strip("[]")
            continue
        if section == group and section is not None:
            name, _, value = line.partition("=")
            found.append(EntryPoint(name.strip(), value.strip(), group, dist_name))
    return found


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
        return None


def _dist_name(folder: str) -> str | None:
    """The distribution's name from its METADATA (``Name:``), as importlib.metadata's ``dist.name``."""
    for metadata in ("METADATA", "PKG-INFO"):
        text = _read(os.path.join(folder, metadata))
        if text is not None:
            for line in text.splitlines():
                if not line:
                    break
                if line[:5].lower() == "name:":
                    return line[5:].strip()
            return None
    return None


def _simple_path() -> bool:
    """Every distribution is a folder on ``sys.path`` that the path finder alone finds (no zip, egg or hook)."""
    from importlib.machinery import PathFinder

    if any(getattr(finder, "find_distributions", None) is not None and finder is not PathFinder for finder in sys.meta_path):
        return False
    return not any(os.path.isfile(entry) or entry.lower().endswith(".egg") for entry in sys.path)


def entry_points(group: str) -> list[EntryPoint]:
    """The entry points of ``group`` of every installed distribution, in ``importlib.metadata.entry_points``' order."""
    if not _simple_path():
        from importlib import metadata

        return [EntryPoint(e.name, e.value, e.group, getattr(getattr(e, "dist", None), "name", None))
                for e in metadata.entry_points(group=group)]
    found: list[EntryPoint] = []
    seen: set[str] = set()
    for entry in sys.path:
        root = entry or "."
        try:
            children = os.listdir(root)
        except OSError:
            continue
        by_name: dict[str, list[str]] = {}  # importlib.metadata's Lookup: listing order, grouped by normalised name
        for child in children:
            low = child.lower()
            if low.endswith((".dist-info", ".egg-info")):
                by_name.setdefault(_normalize(low.rpartition(".")[0].partition("-")[0]), []).append(child)
        for normalized, folders in by_name.items():
            for child in folders:
                if normalized in seen:
                    continue
                seen.add(normalized)
                folder = os.path.join(root, child)
                text = _read(os.path.join(folder, "entry_points.txt"))
                if text and f"[{group}]" in text:
                    found += _parse(text, group, _dist_name(folder))
    return found


# evalkit's own built-in tasks and what they register, for a tree that was never installed (a competition bundle)
BUILTIN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "entry_points.txt")
_IMPORTED: set[str] = set()


def plugin_entry_points(group: str) -> list[EntryPoint]:
    """:func:`entry_points`, and evalkit's built-ins from ``evalkit/entry_points.txt`` where evalkit was not installed."""
    found = entry_points(group)
    if not any(entry.value.startswith("evalkit.") for entry in found):
        text = _read(BUILTIN)
        found = (_parse(text, group, "evalkit-ir") if text else []) + found
    return found


def import_plugins(group: str) -> None:
    """Import, once, every module that ``group``'s entry points name: each registers what it holds where it belongs
    (a format with the formats, a metric with the metrics). A plugin that cannot be imported is one line."""
    if group in _IMPORTED:
        return
    _IMPORTED.add(group)
    try:
        for entry in plugin_entry_points(group):
            try:
                entry.load()
            except EvalkitError:
                raise
            except Exception as exc:  # noqa: BLE001 - a broken plugin is one line, not a traceback
                raise UsageError(f"plugin {entry.name!r} ({entry.value}) of {entry.dist_name} cannot be loaded: "
                                 f"{type(exc).__name__}: {shown(str(exc), 200)}; reinstall or remove it") from None
    except EvalkitError:
        _IMPORTED.discard(group)  # every later call refuses again, never with half a registry
        raise
