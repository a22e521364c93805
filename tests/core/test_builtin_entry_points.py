"""evalkit/entry_points.txt: the built-in tasks' entry points, installed by setup.py and read from the file where
evalkit was never installed; a plugin that cannot be imported is one line, every time it is asked for."""
from __future__ import annotations

import pytest

from evalkit.core import entry_points as ep
from evalkit.core.errors import UsageError

GROUPS = ("evalkit.tasks", "evalkit.formats", "evalkit.submission_formats", "evalkit.metrics")


def from_file(group: str) -> list[tuple[str, str]]:
    return [(e.name, e.value) for e in ep._parse(open(ep.BUILTIN, encoding="utf-8").read(), group, "evalkit-ir")]


@pytest.mark.parametrize("group", GROUPS)
def test_the_installed_entry_points_are_the_files(group):
    installed = [(e.name, e.value) for e in ep.entry_points(group) if e.value.startswith("evalkit.")]
    assert from_file(group) and sorted(installed) == sorted(from_file(group))


def test_an_uninstalled_tree_reads_the_file(monkeypatch):
    monkeypatch.setattr(ep, "entry_points", lambda group: [])
    found = ep.plugin_entry_points("evalkit.tasks")
    assert [(e.name, e.value) for e in found] == from_file("evalkit.tasks")
    assert {e.dist_name for e in found} == {"evalkit-ir"}


def test_a_broken_plugin_is_one_line_every_time(monkeypatch):
    broken = ep.EntryPoint("broken", "evalkit_no_such_module_xyz", "evalkit.test_group", "some-dist")
    monkeypatch.setattr(ep, "plugin_entry_points", lambda group: [broken])
    for _ in range(2):  # never remembered as loaded: the second call refuses again
        with pytest.raises(UsageError, match=r"plugin 'broken' \(evalkit_no_such_module_xyz\) of some-dist cannot be loaded"):
            ep.import_plugins("evalkit.test_group")
    assert "evalkit.test_group" not in ep._IMPORTED
