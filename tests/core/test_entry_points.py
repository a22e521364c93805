"""evalkit.core.entry_points reads the entry points importlib.metadata reads, in its order, from the same dist-info folders."""
from __future__ import annotations

import sys
import zipfile
from importlib import metadata

import pytest

from evalkit.core import entry_points as ep


def both(group: str) -> tuple[list, list]:
    ours = [(e.name, e.value, e.group, e.dist_name) for e in ep.entry_points(group)]
    theirs = [(e.name, e.value, e.group, getattr(getattr(e, "dist", None), "name", None)) for e in metadata.entry_points(group=group)]
    return ours, theirs


@pytest.mark.parametrize("group", ["evalkit.tasks", "evalkit.systems", "console_scripts", "no.such.group"])
def test_this_environment(group):
    ours, theirs = both(group)
    assert ours == theirs
    if group == "evalkit.tasks":
        assert {"trec", "checkthat2025-4b"} <= {name for name, *_ in ours}


def dist(folder, name, entries, metadata_name=None, kind="dist-info"):
    info = folder / f"{name}.{kind}"
    info.mkdir(parents=True)
    if metadata_name:
        (info / ("METADATA" if kind == "dist-info" else "PKG-INFO")).write_text(f"Metadata-Version: 2.1\nName: {metadata_name}\nVersion: 1\n")
    if entries is not None:
        (info / "entry_points.txt").write_text(entries)


def test_crafted_folders(tmp_path, monkeypatch):
    """Two folders naming one distribution (the first wins), spellings of one name, comments, odd sections, an
    egg-info file, a dist without metadata or entry points: the same entries as importlib.metadata, in its order."""
    first, second = tmp_path / "a", tmp_path / "b"
    dist(first, "Alpha_Pkg-1.0", "# comment\n[evalkit.tasks]\n one = alpha:One \n; semicolon = kept:Too\n\n[other]\nx = y:z\n", "Alpha-Pkg")
    dist(second, "alpha.pkg-2.0", "[evalkit.tasks]\nshadowed = alpha2:One\n", "alpha.pkg")  # same normalised name: shadowed
    dist(second, "beta-0.1", "[[evalkit.tasks]]\ntwo=beta:Two [extra]\n[ evalkit.tasks ]\nnot = this:One\n", "beta")
    dist(second, "gamma-0.1", None, "gamma")  # no entry points
    dist(second, "delta-0.1", "[evalkit.tasks]\nthree = delta.sub:Three.Inner\n")  # no METADATA: no name
    dist(second, "eps-0.1", "[evalkit.tasks]\nfour = eps:Four\n", "eps", kind="egg-info")
    (second / "zeta-0.1.egg-info").write_text("Metadata-Version: 1.0\nName: zeta\n")  # a file, not a folder
    monkeypatch.setattr(sys, "path", [str(first), str(tmp_path / "missing"), str(second)])
    ours, theirs = both("evalkit.tasks")
    assert ours == theirs
    names = [name for name, *_ in ours]
    assert names[:2] == ["one", "; semicolon"] and sorted(names[2:]) == ["four", "three", "two"]  # ';' opens no comment
    assert both("other") == ([("x", "y:z", "other", "Alpha-Pkg")],) * 2


def test_zipped_path_entries_are_left_to_importlib_metadata(tmp_path, monkeypatch):
    archive = tmp_path / "plugins.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("zipped-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: zipped\nVersion: 1.0\n")
        zipped.writestr("zipped-1.0.dist-info/entry_points.txt", "[evalkit.tasks]\nz = zipped:Z\n")
    monkeypatch.setattr(sys, "path", [str(archive)])
    assert not ep._simple_path()
    ours, theirs = both("evalkit.tasks")
    assert ours == theirs == [("z", "zipped:Z", "evalkit.tasks", "zipped")]


def test_load_imports_the_named_attribute():
    entry = ep.EntryPoint("x", "evalkit.core.entry_points:EntryPoint.load", "g", None)
    assert entry.load() is ep.EntryPoint.load
    with pytest.raises(ModuleNotFoundError):
        ep.EntryPoint("x", "no_such_module_here:X", "g", None).load()


def test_importing_tasks_reads_no_email_or_zipfile():
    import subprocess

    code = "import sys, evalkit.tasks; evalkit.tasks.get_task('trec'); print(sorted({'email', 'zipfile', 'importlib.metadata'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
