"""Hostile cases, round 4, around what a command writes: every output of a command or none (a failing HTML page, a
failing manifest), no 'wrote' line for a file not written, a killed writer leaves nothing (unnamed temporaries),
a missing output folder blamed on the option that named it, error lines that stay short whatever a zip holds.
"""
from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path
from typing import Callable

import pytest

from test_hostile import RUN, base_files, snapshot, write
from test_hostile_outputs import LISTS_4B, assert_one_line_exit_2, bm25, board_folder, evalkit

UNNAMED = hasattr(os, "O_TMPFILE") and os.path.isdir("/proc/self/fd")


def two_runs(folder: Path) -> str:
    write(folder, "run2.trec", RUN.replace("2.0", "0.5"))
    return "run2.trec"


# name -> (setup(folder) -> CLI args); each command writes two or more files
MULTI_OUTPUT: dict[str, Callable[[Path], tuple]] = {
    "report --out --html --json": lambda f: ("report", "gold.qrels", "run.trec", two_runs(f), "--out", "r.md", "--html", "r.html",
                                             "--json", "r.json"),
    "leaderboard --out (table + manifest) --html": lambda f: ("leaderboard", board_folder(f), "--gold", "gold.qrels", "--out", "lb.txt",
                                                              "--html", "lb.html"),
    "score --out --per-query": lambda f: ("score", "run.trec", "gold.qrels", "--out", "s.txt", "--per-query", "pq.tsv"),
    "compare --out --per-query": lambda f: ("compare", "gold.qrels", "run.trec", two_runs(f), "--out", "c.txt", "--per-query", "c.tsv"),
    "fuse (run + manifest)": lambda f: ("fuse", "run.trec", two_runs(f), "--out", "f.trec"),
    "pool --out --summary": lambda f: ("pool", "run.trec", two_runs(f), "--depth", "2", "--out", "p.tsv", "--summary", "p.md"),
    "submit (zip + manifest)": lambda f: ("submit", write(f, "lists.tsv", LISTS_4B).name, "--task", "checkthat2025-4b", "--out", "s.zip"),
    "run --report (run, manifest, report, figure)": lambda f: bm25("--out", "o.trec", "--gold", "gold.qrels", "--report", "o.md"),
}


@pytest.mark.parametrize("case", list(MULTI_OUTPUT))
def test_the_last_output_failing_leaves_none_and_claims_none(case, tmp_path, monkeypatch, capsys):
    """The command's LAST file fails to write (disk full): exit 2, one line, the folder as it was, no 'wrote' line."""
    from evalkit.io import transactions as outputs
    from evalkit.cli import main

    base_files(tmp_path)
    args = MULTI_OUTPUT[case](tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EVALKIT_CACHE", str(tmp_path.parent / f"{tmp_path.name}-cache"))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    inputs = snapshot(tmp_path)
    assert main(list(args)) == 0, capsys.readouterr().err  # once for real: how many files it writes
    written = [p for p in snapshot(tmp_path) if p not in inputs]
    assert len(written) >= 2, (case, written)
    for path in written:
        os.unlink(path)
    capsys.readouterr()
    before = snapshot(tmp_path)
    assert before == inputs
    real_stage = outputs.Transaction.stage
    calls = []

    def failing_last(self, path, payload, force=False):
        if Path(os.path.abspath(path)).parent == tmp_path:  # the command's outputs (a cache lies elsewhere)
            calls.append(path)
            if len(calls) == len(written):
                raise outputs.write_error(path, OSError(errno.ENOSPC, "No space left on device"))
        return real_stage(self, path, payload, force)

    monkeypatch.setattr(outputs.Transaction, "stage", failing_last)
    code = main(list(args))
    err = capsys.readouterr().err
    lines = [line for line in err.strip().splitlines() if not line.startswith("[evalkit] ")]
    assert code == 2 and len(lines) == 1 and "No space left on device" in lines[0], (case, err)
    assert "wrote" not in err, (case, err)
    assert snapshot(tmp_path) == before, case


def test_report_whose_html_page_exceeds_the_file_size_limit_writes_nothing(tmp_path):
    """RLIMIT_FSIZE between the Markdown/PNG and the HTML page: the page fails, so the Markdown and the PNG are not left."""
    base_files(tmp_path)
    two_runs(tmp_path)
    args = ("report", "gold.qrels", "run.trec", "run2.trec", "--out", "r.md", "--html", "r.html")
    sizes = tmp_path.parent / f"{tmp_path.name}-sizes"
    sizes.mkdir()
    for name in ("gold.qrels", "run.trec", "run2.trec"):
        (sizes / name).write_bytes((tmp_path / name).read_bytes())
    assert evalkit(*args, cwd=sizes, env={"MPLBACKEND": "Agg"}).returncode == 0
    others = max(p.stat().st_size for p in sizes.iterdir() if p.name != "r.html")
    page = (sizes / "r.html").stat().st_size
    assert others < page
    before = snapshot(tmp_path)
    done = evalkit(*args, cwd=tmp_path, file_size=(others + page) // 2, env={"MPLBACKEND": "Agg"})
    assert_one_line_exit_2(done, "r.html: cannot write (File too large", "report --html over the limit")
    assert snapshot(tmp_path) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_api_writers_commit_their_files_together(tmp_path, monkeypatch):
    """Pool.save: the manifest failing leaves no sheet (the API opens its own transaction)."""
    from evalkit.io import transactions as outputs
    from evalkit.api.judging import pool

    base_files(tmp_path)
    made = pool(str(tmp_path / "run.trec"), depth=2)
    real_stage = outputs.Transaction.stage

    def failing_manifest(self, path, payload, force=False):
        if str(path).endswith(".manifest.json"):
            raise outputs.write_error(path, OSError(errno.EFBIG, "File too large"))
        return real_stage(self, path, payload, force)

    monkeypatch.setattr(outputs.Transaction, "stage", failing_manifest)
    before = snapshot(tmp_path)
    with pytest.raises(outputs.OutputError, match="File too large"):
        made.save(tmp_path / "p.tsv")
    assert snapshot(tmp_path) == before


# ----------------------------------------------------------------------------- a killed writer

KILLED_MID_WRITE = textwrap.dedent("""
    import os, sys, time
    import evalkit.io.transactions as o
    real_fdopen = os.fdopen

    class Slow:
        def __init__(self, handle):
            self.handle = handle
        def __enter__(self):
            return self
        def __exit__(self, *exc):
            self.handle.close()
        def fileno(self):
            return self.handle.fileno()
        def flush(self):
            self.handle.flush()
        def write(self, data):
            self.handle.write(data[: len(data) // 2])
            self.handle.flush()
            print("half", flush=True)
            time.sleep(60)

    os.fdopen = lambda fd, mode: Slow(real_fdopen(fd, mode))
    with o.committed_together([sys.argv[1]], force=True):
        o.atomic_write(sys.argv[1], b"x" * 15_000_000, force=True)
""")


@pytest.mark.skipif(not UNNAMED, reason="needs O_TMPFILE and /proc (Linux)")
@pytest.mark.parametrize("existing", [False, True], ids=["new file", "--force over a file"])
def test_sigkill_mid_write_leaves_nothing(existing, tmp_path):
    """A writer killed by SIGKILL half-way through a 15 MB output: no file, no hidden temporary, the old file intact."""
    target = tmp_path / "big.bin"
    if existing:
        target.write_bytes(b"old")
    before = snapshot(tmp_path)
    child = subprocess.Popen([sys.executable, "-c", KILLED_MID_WRITE, str(target)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "half"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    assert snapshot(tmp_path) == before
    assert sorted(os.listdir(tmp_path)) == (["big.bin"] if existing else [])


@pytest.mark.skipif(not UNNAMED, reason="needs O_TMPFILE and /proc (Linux)")
def test_killed_before_the_commit_leaves_nothing(tmp_path):
    code = ("import os, evalkit.io.transactions as o\n"
            "t = o.Transaction(); t.stage('s.txt', b'y' * 15_000_000)\n"
            "os.kill(os.getpid(), 9)\n")
    killed = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True)
    assert killed.returncode == -9 and os.listdir(tmp_path) == []


@pytest.mark.skipif(not UNNAMED, reason="needs O_TMPFILE and /proc (Linux)")
def test_force_replacement_is_atomic_and_unnamed_until_the_commit(tmp_path):
    """Staged: nothing new in the folder and the old file untouched; committed: the new content, the same name, no leftovers."""
    from evalkit.io import transactions as outputs

    target = write(tmp_path, "a.txt", "old")
    with outputs.committed_together([target], force=True) as current:
        outputs.atomic_write(target, "new", force=True)
        assert sorted(os.listdir(tmp_path)) == ["a.txt"] and target.read_text() == "old"
        assert all(item.fd is not None and item.temporary is None for item in current.staged.values())
    assert target.read_text() == "new" and sorted(os.listdir(tmp_path)) == ["a.txt"]
    assert oct(target.stat().st_mode & 0o777) == oct(0o644)


@pytest.mark.skipif(not UNNAMED, reason="needs O_TMPFILE and /proc (Linux)")
def test_a_file_created_meanwhile_is_never_clobbered(tmp_path, monkeypatch):
    """Someone creates the output between the last check and the commit: the link refuses (EEXIST), nothing is replaced."""
    from evalkit.io import transactions as outputs

    target = tmp_path / "a.txt"
    with pytest.raises(outputs.UsageError, match="exists; pass --force"):
        with outputs.committed_together([target]):
            outputs.atomic_write(target, "ours")
            target.write_text("someone else's")
            monkeypatch.setattr(outputs, "check_writable", lambda path, force=False: Path(path))  # the race: the re-check passes
    assert target.read_text() == "someone else's" and sorted(os.listdir(tmp_path)) == ["a.txt"]


def test_without_unnamed_temporaries_the_named_ones_work(tmp_path, monkeypatch):
    from evalkit.io import transactions as outputs

    monkeypatch.setattr(outputs, "_unnamed_temporary", lambda folder: None)
    old = write(tmp_path, "a.txt", "old")
    with outputs.committed_together([old, tmp_path / "b.txt"], force=True):
        outputs.atomic_write(old, "new a", force=True)
        outputs.atomic_write(tmp_path / "b.txt", "new b")
        assert len([n for n in os.listdir(tmp_path) if n.endswith(".tmp")]) == 2
    assert old.read_text() == "new a" and (tmp_path / "b.txt").read_text() == "new b"
    assert sorted(os.listdir(tmp_path)) == ["a.txt", "b.txt"]


# ----------------------------------------------------------------------------- --out in a missing folder

MISSING_FOLDER: dict[str, tuple[Callable[[Path], tuple], str]] = {
    "score --out": (lambda f: ("score", "run.trec", "gold.qrels", "--out", "nodir/x.md"), "--out nodir/x.md"),
    "score --per-query": (lambda f: ("score", "run.trec", "gold.qrels", "--per-query", "nodir/x.tsv"), "--per-query nodir/x.tsv"),
    "compare --out": (lambda f: ("compare", "gold.qrels", "run.trec", two_runs(f), "--out", "nodir/x.md"), "--out nodir/x.md"),
    "report --out": (lambda f: ("report", "gold.qrels", "run.trec", "--out", "nodir/x.md"), "--out nodir/x.md"),
    "report --html": (lambda f: ("report", "gold.qrels", "run.trec", "--html", "nodir/x.html"), "--html nodir/x.html"),
    "leaderboard --out (table: its manifest beside it)": (lambda f: ("leaderboard", board_folder(f), "--gold", "gold.qrels", "--out",
                                                                     "nodir/x.txt"), "--out nodir/x.txt"),
    "leaderboard --out .md": (lambda f: ("leaderboard", board_folder(f), "--gold", "gold.qrels", "--out", "nodir/x.md"), "--out nodir/x.md"),
    "fuse --out": (lambda f: ("fuse", "run.trec", two_runs(f), "--out", "nodir/f.trec"), "--out nodir/f.trec"),
    "pool --out": (lambda f: ("pool", "run.trec", "--depth", "2", "--out", "nodir/p.tsv"), "--out nodir/p.tsv"),
    "pool --summary": (lambda f: ("pool", "run.trec", "--depth", "2", "--out", "p.tsv", "--summary", "nodir/p.md"), "--summary nodir/p.md"),
    "submit --out": (lambda f: ("submit", write(f, "lists.tsv", LISTS_4B).name, "--task", "checkthat2025-4b", "--out", "nodir/s.zip"),
                     "--out nodir/s.zip"),
    "run --out": (lambda f: bm25("--out", "nodir/o.trec"), "--out nodir/o.trec"),
    "competition bundle --out": (lambda f: ("competition", "bundle", "trec", "--phase", "dev:gold.qrels", "--out", "nodir/b.zip"),
                                 "--out nodir/b.zip"),
    "check --baseline --add": (lambda f: ("check", "--baseline", "nodir/b.json", "--add", "--task", "trec", "--gold", "gold.qrels",
                                          "--run", "run.trec"), "--baseline nodir/b.json"),
}


@pytest.mark.parametrize("case", list(MISSING_FOLDER))
def test_a_missing_output_folder_names_the_option_and_the_folder(case, tmp_path):
    setup, expected = MISSING_FOLDER[case]
    base_files(tmp_path)
    args = setup(tmp_path)
    before = snapshot(tmp_path)
    done = evalkit(*args, cwd=tmp_path, env={"EVALKIT_CACHE": str(tmp_path.parent / f"{tmp_path.name}-cache")})
    assert_one_line_exit_2(done, f"{expected}: output folder nodir does not exist", case)
    assert "manifest" not in done.stderr, done.stderr
    assert snapshot(tmp_path) == before


# ----------------------------------------------------------------------------- bounded error lines

def many_members(folder: Path, name: str, count: int = 10_000, width: int = 190) -> str:
    with zipfile.ZipFile(folder / name, "w") as archive:
        for i in range(count):
            archive.writestr(f"m{i:05d}".ljust(width, "y") + ".tsv", "q1\tQ0\td1\t1\t1\tr\n")
    return name


@pytest.mark.parametrize("command", [
    lambda z: ("score", z, "gold.qrels"),
    lambda z: ("validate", z, "--task", "checkthat2025-4b"),
    lambda z: ("submit", z, "--task", "checkthat2025-4b", "--out", "s.zip"),
    lambda z: ("fuse", z, "run.trec", "--out", "f.trec"),
], ids=["score", "validate", "submit", "fuse"])
def test_a_zip_of_10000_members_gets_a_short_line(command, tmp_path):
    base_files(tmp_path)
    archive = many_members(tmp_path, "many.zip")
    done = evalkit(*command(archive), cwd=tmp_path)
    assert done.returncode in (1, 2) and "Traceback" not in done.stderr, done.stderr[-2000:]
    lines = (done.stderr + done.stdout).strip().splitlines()
    assert lines and max(map(len, lines)) <= 400, [len(line) for line in lines]
    assert any("9,998 more" in line or "9,997 more" in line or "9,999 more" in line for line in lines), lines


def test_listed_is_bounded_whatever_it_lists():
    from evalkit.core.errors import LIST_WIDTH, listed, unquoted

    assert listed(["a", "b"]) == "'a', 'b'"
    assert listed(range(10), show=str) == "0, 1, 2, 3, 4 and 5 more"
    huge = listed(("x" * 10_000 for _ in range(1_000_000)), total=1_000_000)
    assert len(huge) <= LIST_WIDTH and huge.endswith("and 999,998 more")
    names = listed((f"run-{i}-" + "z" * 50 for i in range(200)), 10, unquoted)
    assert len(names) <= LIST_WIDTH + 30 and names.endswith(" more")
    assert listed([]) == ""


@pytest.mark.parametrize("make_error", [
    lambda names: __import__("evalkit.scoring.runset", fromlist=["pick_run"]).pick_run("nope", names, [None] * len(names)),
    lambda names: __import__("evalkit.core.options", fromlist=["ScoringOptions"]).ScoringOptions.of(None, **{n: 1 for n in names}),
], ids=["--baseline none of 5,000 runs", "5,000 unknown scoring options"])
def test_lists_of_runs_and_options_in_errors_are_bounded(make_error):
    from evalkit.core.errors import EvalkitError

    names = [f"team-{i:04d}-submission-with-a-long-name" for i in range(5000)]
    with pytest.raises(EvalkitError) as caught:
        make_error(names)
    line = caught.value.one_line()
    assert len(line) <= 400 and "more" in line, line


@pytest.mark.parametrize("unnamed", [True, False], ids=["unnamed temporary", "named fallback"])
def test_cache_entries_are_replaced_whole_and_leave_nothing(unnamed, tmp_path, monkeypatch):
    """A cache entry (an engine's checkpointed chunk) replaced atomically: the new bytes, no temporary left."""
    from evalkit.io.writing import temporaries

    if not unnamed:
        monkeypatch.setattr(temporaries, "unnamed_temporary", lambda folder: None)
    elif not UNNAMED:
        pytest.skip("needs O_TMPFILE and /proc (Linux)")
    target = tmp_path / "chunk.npy"
    temporaries.replace_with(target, b"first")
    temporaries.replace_with(target, b"second" * 1000)
    assert target.read_bytes() == b"second" * 1000 and os.listdir(tmp_path) == ["chunk.npy"]
    assert oct(target.stat().st_mode & 0o777) == oct(0o644)
