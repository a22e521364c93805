"""Hostile cases around what evalkit writes and prints: an output that is an input, a full disk, a failure part-way,
kill -9 leftovers, markup and terminal escapes in names and ids, symlinks in zips, modules a model spec names.

Each CLI case runs the real CLI in a subprocess under a 2 GiB address-space limit and a time bound: exit code 2,
ONE line on stderr, no traceback, the folder unchanged. The full-disk cases add ``RLIMIT_FSIZE`` (every write past
a few hundred bytes fails with EFBIG, as on a full or quota-limited disk).
"""
from __future__ import annotations

import errno
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import pytest

from test_hostile import MEMORY_LIMIT, RUN, TIME_LIMIT, base_files, snapshot, write

GOLD_4B = "post_id\ttweet_text\tcord_uid\nt1\tmasks work\td1\nt2\tvitamin d\td3\n"
LISTS_4B = "post_id\tpreds\nt1\t['d1', 'd2', 'd3', 'd4', 'd5']\nt2\t['d3', 'd1', 'd2', 'd4', 'd5']\n"
FILE_SIZE_LIMIT = 150  # bytes: every output here is larger


def evalkit(*args, cwd: Path, env: dict | None = None, file_size: int | None = None, timeout: int = TIME_LIMIT):
    def limits() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
        if file_size is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, file_size))

    return subprocess.run([sys.executable, "-m", "evalkit", *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          preexec_fn=limits, env={**os.environ, **(env or {})})


def hard_link(folder: Path, target: str, name: str) -> str:
    os.link(folder / target, folder / name)
    return name


def symlink(folder: Path, target: str, name: str) -> str:
    os.symlink(target, folder / name)
    return name


def board_folder(folder: Path) -> str:
    write(folder, "board/a.trec", RUN)
    write(folder, "board/b.trec", RUN.replace("2.0", "0.5"))
    return "board"


def toml(folder: Path, text: str) -> str:
    write(folder, "cfg.toml", text)
    return "cfg.toml"


def bm25(*extra) -> tuple:
    return ("run", "bm25", "--corpus", "corpus.jsonl", "--queries", "queries.tsv", *extra)


FILE_STAGE = '[[stages]]\nname = "first"\nrun = "first.trec"\n'

# name -> (setup(folder) -> CLI args, text the one line must contain)
INPUT_IS_OUTPUT: dict[str, tuple[Callable[[Path], tuple], str]] = {
    "submit RUN --out RUN --force": (lambda f: ("submit", write(f, "lists.tsv", LISTS_4B).name, "--task", "checkthat2025-4b", "--out",
                                                "lists.tsv", "--force"), "lists.tsv: is also an input"),
    "submit --queries gold --out gold --force": (lambda f: ("submit", write(f, "lists.tsv", LISTS_4B).name, "--task", "checkthat2025-4b",
                                                            "--queries", write(f, "g.tsv", GOLD_4B).name, "--out", "g.tsv", "--force"),
                                                 "g.tsv: is also an input"),
    "leaderboard DIR --out DIR/a.trec --force": (lambda f: ("leaderboard", board_folder(f), "--gold", "gold.qrels", "--out", "board/a.trec",
                                                            "--force"), "board/a.trec: is also an input"),
    "leaderboard --html over a ranked file --force": (lambda f: ("leaderboard", board_folder(f), "--gold", "gold.qrels", "--html",
                                                                 "board/b.trec", "--force"), "b.trec"),
    "score --out a hard link to the gold --force": (lambda f: ("score", "run.trec", "gold.qrels", "--out", hard_link(f, "gold.qrels", "g2"),
                                                               "--force"), "g2: is also an input"),
    "score --per-query a symlink to the run --force": (lambda f: ("score", "run.trec", "gold.qrels", "--per-query",
                                                                  symlink(f, "run.trec", "pq.tsv"), "--force"), "pq.tsv: is also an input"),
    "compare --out a symlink to the gold --force": (lambda f: ("compare", "gold.qrels", "run.trec", write(f, "run2.trec", RUN).name, "--out",
                                                               symlink(f, "gold.qrels", "c.txt"), "--force"), "c.txt: is also an input"),
    "fuse --out its own input --force": (lambda f: ("fuse", "run.trec", write(f, "run2.trec", RUN).name, "--out", "run2.trec", "--force"),
                                         "run2.trec: is also an input"),
    "report figure a hard link to a run --force": (lambda f: ("report", "gold.qrels", "run.trec", "--out", "r.md", "--force",
                                                              hard_link(f, "run.trec", "r.first-relevant-rank.png") and "--top", "3"),
                                                   "r.first-relevant-rank.png: is also an input"),
    "run --out its --queries --force": (lambda f: bm25("--out", "queries.tsv", "--force"), "queries.tsv: is also an input"),
    "run --out the TOML's run-file stage --force": (lambda f: ("run", toml(f, FILE_STAGE) and write(f, "first.trec", RUN.replace("d", "e"))
                                                               and "cfg.toml", "--corpus", "corpus.jsonl", "--queries", "queries.tsv", "--out",
                                                               "first.trec", "--force"), "first.trec: is also an input"),
    "run --out its TOML config --force": (lambda f: ("run", toml(f, '[[stages]]\nname = "b"\nsystem = "bm25"\n'), "--corpus", "corpus.jsonl",
                                                     "--queries", "queries.tsv", "--out", "cfg.toml", "--force"), "cfg.toml: is also an input"),
    "score --out a dangling symlink": (lambda f: ("score", "run.trec", "gold.qrels", "--out", symlink(f, "nowhere/x", "s.txt")),
                                       "s.txt: exists as a symlink"),
    "submit --out a dangling symlink": (lambda f: ("submit", write(f, "lists.tsv", LISTS_4B).name, "--task", "checkthat2025-4b", "--out",
                                                   symlink(f, "missing.zip", "sub.zip")), "sub.zip: exists as a symlink"),
}

# every writing command on a disk that takes no more than FILE_SIZE_LIMIT bytes per file
DISK_FULL: dict[str, Callable[[Path], tuple]] = {
    "score --out --per-query": lambda f: ("score", "run.trec", "gold.qrels", "--out", "s.txt", "--per-query", "pq.tsv"),
    "score -o json --out": lambda f: ("score", "run.trec", "gold.qrels", "-o", "json", "--out", "s.json"),
    "compare --out --per-query": lambda f: ("compare", "gold.qrels", "run.trec", write(f, "run2.trec", RUN).name, "--out", "c.md",
                                            "--per-query", "c.tsv"),
    "report --out (Markdown and figures)": lambda f: ("report", "gold.qrels", "run.trec", write(f, "run2.trec", RUN).name, "--out", "r.md"),
    "report --html --json": lambda f: ("report", "gold.qrels", "run.trec", "--html", "r.html", "--json", "r.json"),
    "leaderboard --out": lambda f: ("leaderboard", board_folder(f), "--gold", "gold.qrels", "--out", "lb.md"),
    "submit": lambda f: ("submit", write(f, "lists.tsv", LISTS_4B).name, "--task", "checkthat2025-4b", "--out", "sub.zip"),
    "fuse": lambda f: ("fuse", "run.trec", write(f, "run2.trec", RUN).name, "--out", "f.trec"),
    "run (cache and run)": lambda f: bm25("--out", "o.trec", "--gold", "gold.qrels", "--report", "o.md"),
    "check --add (the baseline)": lambda f: ("check", "--baseline", "base.json", "--add", "--task", "trec", "--gold", "gold.qrels",
                                             "--run", "run.trec"),
}


def assert_one_line_exit_2(done: subprocess.CompletedProcess, expected: str, case: str) -> None:
    """Exit 2, no traceback, one line (``evalkit run``'s ``[evalkit]`` progress lines aside) holding ``expected``."""
    lines = [line for line in done.stderr.strip().splitlines() if not line.startswith("[evalkit] ")]
    assert done.returncode == 2, (case, done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    assert len(lines) == 1, (case, done.stderr[-2000:])
    assert expected in lines[0], (case, lines[0])


@pytest.mark.parametrize("case", list(INPUT_IS_OUTPUT))
def test_an_output_that_is_an_input_is_refused_even_with_force(case, tmp_path):
    setup, expected = INPUT_IS_OUTPUT[case]
    base_files(tmp_path)
    args = setup(tmp_path)
    before = snapshot(tmp_path)
    done = evalkit(*args, cwd=tmp_path, env={"EVALKIT_CACHE": str(tmp_path.parent / f"{tmp_path.name}-cache")})
    assert_one_line_exit_2(done, expected, case)
    assert snapshot(tmp_path) == before, case


@pytest.mark.parametrize("case", list(DISK_FULL))
def test_disk_full_is_one_line_and_writes_nothing(case, tmp_path):
    """EFBIG from the kernel (RLIMIT_FSIZE) in the middle of a command: one line, exit 2, the folder as it was."""
    base_files(tmp_path)
    args = DISK_FULL[case](tmp_path)
    before = snapshot(tmp_path)
    cache = tmp_path.parent / f"{tmp_path.name}-cache"
    done = evalkit(*args, cwd=tmp_path, file_size=FILE_SIZE_LIMIT, env={"EVALKIT_CACHE": str(cache), "MPLBACKEND": "Agg"})
    assert_one_line_exit_2(done, "cannot write (File too large", case)
    assert snapshot(tmp_path) == before, case


def test_disk_full_in_process_monkeypatched(tmp_path, monkeypatch, capsys):
    """The write itself raising ENOSPC, in process: one line, exit 2, no file and no temporary left."""
    from evalkit.cli import main

    base_files(tmp_path)
    monkeypatch.chdir(tmp_path)
    before = snapshot(tmp_path)
    real_fdopen = os.fdopen

    class Full:
        def __init__(self, handle):
            self.handle = handle

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.handle.close()

        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("evalkit.outputs.os.fdopen", lambda fd, mode: Full(real_fdopen(fd, mode)))
    code = main(["score", "run.trec", "gold.qrels", "--out", "s.txt", "--per-query", "pq.tsv"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "No space left on device" in err and "nothing was written" in err, err
    assert snapshot(tmp_path) == before


def test_report_failing_part_way_leaves_nothing(tmp_path, monkeypatch, capsys):
    """The report's second file fails: the first (already staged) is not left behind either."""
    from evalkit import outputs
    from evalkit.cli import main

    base_files(tmp_path)
    write(tmp_path, "run2.trec", RUN)
    monkeypatch.chdir(tmp_path)
    before = snapshot(tmp_path)
    real_stage = outputs.Transaction.stage
    calls = []

    def failing_second(self, path, payload, force=False):
        calls.append(path)
        if len(calls) == 2:
            raise outputs.write_error(path, OSError(errno.ENOSPC, "No space left on device"))
        return real_stage(self, path, payload, force)

    monkeypatch.setattr(outputs.Transaction, "stage", failing_second)
    code = main(["report", "gold.qrels", "run.trec", "run2.trec", "--out", "r.md"])
    err = capsys.readouterr().err
    assert code == 2 and "No space left on device" in err, err
    assert len(calls) == 2 and snapshot(tmp_path) == before


def test_a_failing_commit_puts_the_replaced_files_back(tmp_path, monkeypatch):
    from evalkit import outputs

    old_a, old_b = write(tmp_path, "a.txt", "old a"), write(tmp_path, "b.txt", "old b")
    real_replace = os.replace
    calls = []

    def failing_second(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise OSError(errno.EIO, "Input/output error", str(dst))
        return real_replace(src, dst)

    with pytest.raises(outputs.OutputError, match="Input/output error"):
        with outputs.committed_together([old_a, old_b, tmp_path / "c.txt"], force=True):
            outputs.atomic_write(old_a, "new a")
            outputs.atomic_write(tmp_path / "c.txt", "new c")
            outputs.atomic_write(old_b, "new b")
            monkeypatch.setattr("evalkit.outputs.os.replace", failing_second)
    monkeypatch.undo()
    assert old_a.read_text() == "old a" and old_b.read_text() == "old b"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]  # c.txt removed, no temporaries


def test_stale_temporaries_of_evalkit_are_cleaned_and_nothing_else(tmp_path):
    from evalkit.outputs import _HOST

    base_files(tmp_path)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True).stdout.strip()
    stale = write(tmp_path, f".s.txt.evalkit-{_HOST}-{dead}-0123abcd.tmp", "half")
    old_elsewhere = write(tmp_path, ".x.evalkit-ffffffff-1-89abcdef.old", "old")
    os.utime(old_elsewhere, (time.time() - 3 * 86400,) * 2)
    live = write(tmp_path, f".y.evalkit-{_HOST}-{os.getpid()}-00000000.tmp", "in progress")  # this test process is alive
    recent_elsewhere = write(tmp_path, ".z.evalkit-ffffffff-1-11111111.tmp", "another host, today")
    users = [write(tmp_path, ".s.txt.mine.tmp", "mine"), write(tmp_path, "notes.evalkit-x.tmp", "mine")]
    done = evalkit("score", "run.trec", "gold.qrels", "--out", "s.txt", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert not stale.exists() and not old_elsewhere.exists()
    assert live.exists() and recent_elsewhere.exists() and all(p.exists() for p in users)


def test_kill_9_during_a_write_is_cleaned_by_the_next_run(tmp_path):
    base_files(tmp_path)
    code = ("import os, evalkit.outputs as o\n"
            "t = o.Transaction(); t.stage('s.txt', b'half a result')\n"
            "os.kill(os.getpid(), 9)\n")
    killed = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True)
    assert killed.returncode == -9
    left = [p.name for p in tmp_path.iterdir() if ".evalkit-" in p.name]
    assert len(left) == 1 and not (tmp_path / "s.txt").exists()
    done = evalkit("score", "run.trec", "gold.qrels", "--out", "s.txt", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert [p.name for p in tmp_path.iterdir() if ".evalkit-" in p.name] == []


def test_a_real_full_file_system(tmp_path):
    """A 64 KiB tmpfs (where this user may mount one): ENOSPC from the kernel, one line, nothing left."""
    small = tmp_path / "small"
    small.mkdir()
    if shutil.which("mount") is None or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(small)],
                                                       capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root or CAP_SYS_ADMIN)")
    try:
        base_files(small)
        write(small, "filler", b"\0" * (64 * 1024 - 4096 * 6))
        before = snapshot(small)
        done = evalkit("score", str(small / "run.trec"), str(small / "gold.qrels"), "--per-query", str(small / "pq.tsv"), "-o", "json",
                       "--out", str(small / "s.json"), cwd=tmp_path)
        assert_one_line_exit_2(done, "No space left on device", "tmpfs")
        assert snapshot(small) == before
    finally:
        subprocess.run(["umount", str(small)], capture_output=True)
