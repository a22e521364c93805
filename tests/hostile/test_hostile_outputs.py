"""Hostile cases around what evalkit writes and prints: an output that is an input, a full disk, a failure part-way,
kill -9 leftovers, markup and terminal escapes in names and ids, symlinks in zips, modules a model spec names.

Each CLI case runs the real CLI in a subprocess under a 2 GiB address-space limit and a time bound: exit code 2,
ONE line on stderr, no traceback, the folder unchanged. The full-disk cases add ``RLIMIT_FSIZE`` (every write past
a few hundred bytes fails with EFBIG, as on a full or quota-limited disk).
"""
from __future__ import annotations

import errno
import json
import os
import resource
import shutil
import subprocess
import sys
import time
import zipfile
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

    monkeypatch.setattr("evalkit.io.transactions.os.fdopen", lambda fd, mode: Full(real_fdopen(fd, mode)))
    code = main(["score", "run.trec", "gold.qrels", "--out", "s.txt", "--per-query", "pq.tsv"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "No space left on device" in err and "nothing was written" in err, err
    assert snapshot(tmp_path) == before


def test_report_failing_part_way_leaves_nothing(tmp_path, monkeypatch, capsys):
    """The report's second file fails: the first (already staged) is not left behind either."""
    from evalkit.io import transactions as outputs
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
    from evalkit.io import transactions as outputs

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
            monkeypatch.setattr("evalkit.io.transactions.os.replace", failing_second)
    monkeypatch.undo()
    assert old_a.read_text() == "old a" and old_b.read_text() == "old b"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]  # c.txt removed, no temporaries


def test_stale_temporaries_of_evalkit_are_cleaned_and_nothing_else(tmp_path):
    from evalkit.io.transactions import _HOST

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
    """Where there is no unnamed temporary (O_TMPFILE), the named one a kill -9 leaves is removed by the next run."""
    base_files(tmp_path)
    code = ("import os, evalkit.io.transactions as o\n"
            "o._unnamed_temporary = lambda folder: None\n"
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


# --- §2: nothing a file names is run, nothing in a name or id is markup or a terminal command

EVIL_MODULE = "import pathlib\npathlib.Path(__file__).with_name('EXECUTED').write_text('ran')\n"
ESC_NAME = "a\x1b]0;pwned\x07\nforged  99.9999  ok\x1b[2J"
SCRIPT = "<script>alert(1)</script>"
MARKUP_NAME = "<img src=x onerror=alert(1)>"  # a file name may hold anything but a slash


def test_pkg_model_spec_never_imports_the_named_module(tmp_path, monkeypatch):
    from evalkit.core.errors import UsageError
    from evalkit.systems._models.llm import locate_model
    from evalkit.systems._models.modelio import resolve_model

    write(tmp_path, "evilmod.py", EVIL_MODULE)
    write(tmp_path, "evilpkg/__init__.py", EVIL_MODULE)
    write(tmp_path, "evilpkg/model/config.json", "{}")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(UsageError, match="pkg:evilmod: is a module, not a package"):
        resolve_model("pkg:evilmod")
    assert resolve_model("pkg:evilpkg") == str(tmp_path / "evilpkg" / "model")  # found by its files
    with pytest.raises(UsageError, match="not a package name"):
        resolve_model("pkg:evilpkg.sub")  # finding a.b would import a
    with pytest.raises(UsageError, match="expected one .gguf file"):
        locate_model("pkg:evilpkg")
    assert not (tmp_path / "EXECUTED").exists() and not (tmp_path / "evilpkg" / "EXECUTED").exists()
    assert "evilmod" not in sys.modules and "evilpkg" not in sys.modules


def test_pkg_model_spec_beside_the_config_is_not_run(tmp_path):
    """``python -m evalkit`` puts the current folder on sys.path: an ``evilmod.py`` there is located, never executed."""
    base_files(tmp_path)
    write(tmp_path, "evilmod.py", EVIL_MODULE)
    code = ("import sys; sys.path.insert(0, '')\n"
            "from evalkit.systems._models.modelio import resolve_model\n"
            "try:\n    resolve_model('pkg:evilmod')\nexcept Exception as exc:\n    print(type(exc).__name__, exc)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=TIME_LIMIT)
    assert "UsageError pkg:evilmod: is a module, not a package" in done.stdout, done.stdout + done.stderr
    assert not (tmp_path / "EXECUTED").exists()


def _rendered(markdown: str) -> str:
    """The HTML a CommonMark renderer with raw HTML allowed (as Jekyll, mkdocs and pandoc allow it) makes of ``markdown``."""
    markdown_it = pytest.importorskip("markdown_it")
    return markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)


def _assert_inert(markdown: str) -> None:
    """No script, no event handler, no javascript: link, no Liquid; the hostile name shown as written."""
    from html.parser import HTMLParser

    html = _rendered(markdown)
    found = []

    class Tags(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.append(tag)
            for name, value in attrs:
                assert not name.startswith("on"), (tag, name, value)
                assert not (value or "").strip().lower().startswith("javascript:"), (tag, name, value)
                if tag == "img":
                    assert name != "src" or value.endswith(".png"), value  # only the report's own figures

    Tags().feed(html)
    assert "script" not in found and "iframe" not in found, found
    assert "{{" not in markdown and "{%" not in markdown  # Jekyll's Liquid, mkdocs-macros
    assert MARKUP_NAME.replace("<", "&lt;").replace(">", "&gt;") in html  # shown as written


def hostile_names(folder: Path) -> None:
    """Runs and a gold whose names, ids and texts hold markup, Liquid and terminal escapes."""
    write(folder, "gold.tsv", "post_id\ttweet_text\tcord_uid\n"
          f"t1\t{SCRIPT} <img src=x onerror=alert(2)> {{{{ site.github }}}} [x](javascript:alert(3))\td1\n"
          "t2\t# heading | a | b |\td3\n")
    write(folder, f"{MARKUP_NAME}.tsv", LISTS_4B)
    write(folder, "{{ site }} `x` | [y](javascript:z).tsv", LISTS_4B.replace("'d3', 'd1'", "'d1', 'd3'").replace("['d1', 'd2'", "['d2', 'd1'"))


@pytest.mark.parametrize("command", ["report", "leaderboard", "score", "compare"])
def test_markdown_outputs_never_carry_markup_from_the_inputs(command, tmp_path):
    hostile_names(tmp_path)
    runs = [f"{MARKUP_NAME}.tsv", "{{ site }} `x` | [y](javascript:z).tsv"]
    args = {
        "report": ("report", "gold.tsv", *runs, "--out", "r.md"),
        "leaderboard": ("leaderboard", ".", "--gold", "gold.tsv", "--glob", "*.tsv", "--out", "lb.md"),
        "score": ("score", runs[0], "gold.tsv", "-o", "markdown", "--out", "s.md"),
        "compare": ("compare", "gold.tsv", *runs, "-o", "markdown", "--out", "c.md"),
    }[command]
    done = evalkit(*args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    written = (tmp_path / args[args.index("--out") + 1]).read_text()
    _assert_inert(written)
    if command == "report":  # the query texts of the wins and losses, as written
        html = _rendered(written)
        assert "&lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=alert(2)&gt;" in html and "# heading" in html


def test_terminal_escapes_in_names_and_ids_are_shown_never_sent(tmp_path):
    """An entry name with a newline and ESC cannot forge a status row of check's table, nor retitle or clear the terminal."""
    base_files(tmp_path)
    write(tmp_path, "base.json", json.dumps({"entries": [
        {"name": ESC_NAME, "task": "trec", "gold": "gold.qrels", "run": "run.trec", "metric": "P@1", "expected": 0.5}]}))
    done = evalkit("check", "--baseline", "base.json", cwd=tmp_path)
    assert "\x1b" not in done.stdout + done.stderr and "\x07" not in done.stdout + done.stderr
    assert not any(line.startswith("forged") for line in done.stdout.splitlines())
    assert len(done.stdout.strip().splitlines()) == 3  # header, the one entry, the summary
    assert "a\\x1b]0;pwned\\x07\\nforged" in done.stdout


TERMINAL_CASES: dict[str, Callable[[Path], tuple]] = {
    "leaderboard: a file name with ESC and a newline": lambda f: (write(f, f"board/{ESC_NAME}.trec", RUN), board_folder(f))[1:] and (
        "leaderboard", "board", "--gold", "gold.qrels"),
    "leaderboard: an unreadable file named with ESC": lambda f: (write(f, f"board/{ESC_NAME}.trec", "not a run\n"), board_folder(f))[1:] and (
        "leaderboard", "board", "--gold", "gold.qrels"),
    "score: an error line quoting a field with ESC": lambda f: ("score", write(f, "r.tsv", "post_id\tpreds\nt1\t['d1\x1b]0;x\x07\n").name,
                                                               write(f, "g.tsv", GOLD_4B).name),
    "score: a run file named with ESC": lambda f: ("score", write(f, f"{ESC_NAME}.trec", RUN).name, "gold.qrels"),
    "validate: problems quoting ids with ESC": lambda f: ("validate", write(f, "sub.tsv", "post_id\tpreds\n"
                                                                            "t1\t['d\x1b[2J', 'd\x1b[2J', 'd3', 'd4', 'd5']\n").name,
                                                          "--task", "checkthat2025-4b"),
    "compare: run names with ESC": lambda f: ("compare", "gold.qrels", "run.trec", write(f, f"{ESC_NAME}.trec", RUN).name),
    "score -o trec_eval to a pipe keeps ids exact": None,
}


@pytest.mark.parametrize("case", [c for c, setup in TERMINAL_CASES.items() if setup is not None])
def test_no_escape_sequence_reaches_the_terminal(case, tmp_path):
    base_files(tmp_path)
    args = TERMINAL_CASES[case](tmp_path)
    done = evalkit(*args, cwd=tmp_path)
    shown = done.stdout + done.stderr
    assert "Traceback" not in shown, shown[-2000:]
    assert "\x1b" not in shown and "\x07" not in shown, (case, shown[-2000:])
    assert "\\x1b" in shown, (case, shown[-2000:])
    assert not any(line.startswith("forged") for line in shown.splitlines()), shown


def test_machine_output_piped_keeps_ids_exact(tmp_path):
    write(tmp_path, "g.qrels", "q\x1bx 0 d1 1\n")
    write(tmp_path, "r.trec", "q\x1bx Q0 d1 1 1.0 r\n")
    done = evalkit("score", "r.trec", "g.qrels", "-o", "trec_eval", cwd=tmp_path)
    assert done.returncode == 0 and "\tq\x1bx\t" in done.stdout  # a pipe is not a terminal: the data is the data


def _zip_with_special(folder: Path, mode: int, target: str = "../gold.qrels") -> str:
    info = zipfile.ZipInfo("predictions.tsv")
    info.create_system = 3
    info.external_attr = mode << 16
    with zipfile.ZipFile(folder / "sub.zip", "w") as archive:
        archive.writestr(info, target)
    return "sub.zip"


ZIP_CASES = {
    "validate: a zip whose member is a symlink": (lambda f: ("validate", _zip_with_special(f, 0o120777), "--task", "checkthat2025-4b"),
                                                  "is a symbolic link"),
    "score: a zip whose member is a symlink": (lambda f: ("score", _zip_with_special(f, 0o120777), "gold.qrels"), "is a symbolic link"),
    "validate: a zip whose member is a FIFO": (lambda f: ("validate", _zip_with_special(f, 0o010644), "--task", "checkthat2025-4b"), "is a FIFO"),
    "leaderboard: a zip with a device member": (lambda f: (write(f, "board/a.trec", RUN), _zip_with_special(f, 0o020644),
                                                           shutil.move(f / "sub.zip", f / "board" / "b.zip"))[:0] or (
        "leaderboard", "board", "--gold", "gold.qrels", "--out", "lb.md"), None),
}


@pytest.mark.parametrize("case", list(ZIP_CASES))
def test_zip_members_that_are_not_plain_files_are_refused(case, tmp_path):
    setup, expected = ZIP_CASES[case]
    base_files(tmp_path)
    args = setup(tmp_path)
    before = snapshot(tmp_path)
    done = evalkit(*args, cwd=tmp_path)
    if expected is None:  # the leaderboard sets the file apart with the reason and ranks the others
        assert done.returncode == 0, done.stderr
        assert "b.zip" in (tmp_path / "lb.md").read_text() and "a character device" in (tmp_path / "lb.md").read_text()
        return
    assert_one_line_exit_2(done, expected, case)
    assert snapshot(tmp_path) == before


# --- §4: Ray and the engine table, bounded and one line

RAY_CASES = {
    "run --engine ray --ray-address of a closed port": (("--engine", "ray", "--ray-address", "127.0.0.1:1"), {}, "cannot reach a Ray cluster"),
    "run --engine ray --ray-address that never answers": (("--engine", "ray", "--ray-address", "10.255.255.1:6379"),
                                                          {"EVALKIT_RAY_CONNECT_TIMEOUT": "1"}, "cannot reach a Ray cluster"),
    "run --engine ray --ray-address garbage": (("--engine", "ray", "--ray-address", "no port here:x"), {}, "write HOST:PORT"),
    "run --ray-num-cpus nan": (("--engine", "ray", "--ray-num-cpus", "nan"), {}, "not a finite number"),
    "run --ray-num-gpus -1": (("--engine", "ray", "--ray-num-gpus", "-1"), {}, "is below 0"),
    "run --seed -1": (("--seed", "-1"), {}, "--seed"),
    "run --seed 2**32": (("--seed", str(2**32)), {}, "--seed"),
    "run --depth 0": (("--depth", "0"), {}, "--depth"),
}


@pytest.mark.parametrize("case", list(RAY_CASES))
def test_engine_options_are_bounded_and_one_line(case, tmp_path):
    extra, env, expected = RAY_CASES[case]
    base_files(tmp_path)
    before = snapshot(tmp_path)
    started = time.monotonic()
    done = evalkit(*bm25("--out", "o.trec", *extra), cwd=tmp_path, env={**env, "EVALKIT_CACHE": str(tmp_path.parent / "cache")}, timeout=60)
    assert_one_line_exit_2(done, expected, case)
    assert time.monotonic() - started < 30 and snapshot(tmp_path) == before


TOML_CASES = {
    "TOML options.fields = [1, 2]": ('options = { fields = [1, 2] }', "options.fields = [1, 2] must be list[str]"),
    "TOML options.cache = \"no\"": ('options = { cache = "no" }', "options.cache = 'no' must be bool"),
    "TOML options.k1 = \"1.2\"": ('options = { k1 = "1.2" }', "options.k1 = '1.2' must be float"),
    "TOML options.k1 = inf": ('options = { k1 = inf }', "must be finite"),
    "TOML engine num_cpus = nan": ('', "engine num_cpus = nan must be a finite number"),
    "TOML engine concurrency = \"2\"": ('', "concurrency = '2'"),
}


@pytest.mark.parametrize("case", list(TOML_CASES))
def test_config_values_have_their_declared_types(case, tmp_path):
    stage, expected = TOML_CASES[case]
    engine = {"TOML engine num_cpus = nan": '[engine]\nname = "ray"\nnum_cpus = nan\n',
              "TOML engine concurrency = \"2\"": '[engine]\nname = "ray"\nconcurrency = "2"\n'}.get(case, "")
    base_files(tmp_path)
    toml(tmp_path, f'[[stages]]\nname = "b"\nsystem = "bm25"\n{stage}\n\n{engine}')
    before = snapshot(tmp_path)
    done = evalkit("run", "cfg.toml", "--corpus", "corpus.jsonl", "--queries", "queries.tsv", "--out", "o.trec", cwd=tmp_path)
    assert_one_line_exit_2(done, expected, case)
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("value", ["true", "[1]", "1.0", "null", '{"a": 1}'])
def test_corpus_ids_that_are_not_text_are_refused(value, tmp_path):
    base_files(tmp_path)
    write(tmp_path, "c.jsonl", f'{{"_id": {value}, "title": "", "text": "sea ice"}}\n')
    before = snapshot(tmp_path)
    done = evalkit("run", "bm25", "--corpus", "c.jsonl", "--queries", "queries.tsv", "--out", "o.trec", cwd=tmp_path)
    assert_one_line_exit_2(done, "c.jsonl:1: id ", value)
    assert "is not a string or a whole number" in done.stderr and snapshot(tmp_path) == before
