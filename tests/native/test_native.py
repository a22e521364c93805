"""The compiled kernels of evalkit.native._native and their pure-Python twins give the same results.

(The id kernels are tested in tests/data/test_ids.py on both paths.)"""
from __future__ import annotations

import random

import numpy as np
import pytest

from evalkit.native import kernels
from evalkit.data import ranking
from evalkit.io.formats import tables

needs_native = pytest.mark.skipif(kernels.native is None, reason="evalkit.native._native was not built (no C compiler at install time)")


@needs_native
@pytest.mark.parametrize("seed", range(6))
def test_first_occurrences_twins_agree(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 40, size=300)
    qidx = np.repeat(np.arange(len(lengths)), lengths)
    didx = rng.integers(0, [5, 50, 1000, 10**6, 30, 200][seed], size=len(qidx))
    rank = ranking.group_positions(qidx)
    compiled = ranking._first_occurrences(qidx, didx, rank, int(didx.max()) + 1)
    monkeypatch.setattr(kernels, "native", None)
    assert np.array_equal(ranking._first_occurrences(qidx, didx, rank, int(didx.max()) + 1), compiled)
    assert compiled.dtype == bool and (seed == 3 or not compiled.all())  # repeats present but in the sparsest case


NUMBERS = ["0", "1", "-0", "+0.0", "-0.0", "0.5", ".5", "5.", "-.5", "1e3", "1E-3", "1e+3", "2.5e-7", "007", "0.000", "00.100",
           "123456.789012", "9007199254740993", "9007199254740992", "0.30000000000000004", "12345678901234567890123",
           "1" + "0" * 30, "1e22", "1e23", "4.9e-324", "1e-400", "1e400", "-1e308", "1.7976931348623157e308", "0e99999999",
           "1e-99999999999", "3.14159265358979323846264338327950288", "0.1234567890123456789", "1_0", "nan", "inf", "-inf",
           "NaN", "e5", "1e", "1e+", ".", "-", "+", "1.2.3", "0x10", "1,5", "١", "5%", "--1", "1-", "N/A"]


def random_table(rng: random.Random) -> bytes:
    """A whitespace table with every feature the readers must agree on: blanks of each kind, comments, blank lines,
    extra and missing fields, numbers of every form, ids sharing long prefixes, non-ASCII ids, a last line without
    its newline."""
    blanks = [" ", " ", " ", "\t", "  ", " \t ", "\x0b", "\x0c", "\r"]
    ids = ["q1", "q2", "d" * 20 + "1", "d" * 20 + "2", "ünï", "日本", "#x", "a#b", "x" * 40]
    lines = []
    for _ in range(rng.randint(1, 60)):
        if rng.random() < 0.05:
            lines.append(rng.choice(["", "   ", "\t", "# a comment", "  # indented comment", "#"]))
            continue
        n = 6 if rng.random() < 0.9 else rng.randint(1, 8)
        fields = [rng.choice(ids) for _ in range(n)]
        if n > 4:
            fields[4] = rng.choice(NUMBERS[:33] if rng.random() < 0.93 else NUMBERS)
        lead, tail = rng.choice(["", "", "", " ", "\t"]), rng.choice(["", "", "", " ", "\t "])
        lines.append(lead + "".join(f + rng.choice(blanks) for f in fields[:-1]) + fields[-1] + tail)
    return ("\n".join(lines) + ("\n" if rng.random() < 0.8 else "")).encode()


def _compiled_reads_as_python(data: bytes, extra: bool) -> bool:
    """Whether the compiled reader reads ``data`` (a 6-field table, ids in fields 0 and 2, the number in field 4) as
    the Python reader does: the same codes, ids, values to the bit (-0.0 included) and extra-field lines; ``False`` when
    the Python reader refuses it (the compiled one must then leave it to that reader)."""
    from evalkit.core.errors import InputError
    from evalkit.io.textio import LoadedFile

    loaded = LoadedFile("t.txt", data, "")
    fast = tables._compiled_whitespace(loaded, kernels.TableShape(6, extra, (0, 2), 4))
    try:
        slow = tables._python_whitespace(loaded, 6, extra, (0, 2), 4, "score")
    except InputError:
        assert fast is None, data
        return False
    assert fast is not None, data
    for (codes, uniques), (slow_codes, slow_uniques) in zip(fast.columns, slow.columns):
        assert codes.tolist() == slow_codes.tolist() and uniques.tolist() == slow_uniques.tolist(), data
    assert fast.values.view(np.int64).tolist() == slow.values.view(np.int64).tolist(), data
    assert (fast.extra_lines, fast.first_extra) == (slow.extra_lines, slow.first_extra), data
    return True


@needs_native
@pytest.mark.parametrize("threads", [1, 2])
def test_read_table_twins_agree(threads, monkeypatch):
    """The compiled reader (one pass of C; or two halves on two threads, joined) and the Python reader give the same
    table, or the compiled one leaves the file to the Python reader, which refuses it naming the line; values equal
    to the bit (-0.0 included); the line of the first extra field counted across the halves."""
    monkeypatch.setattr(kernels, "SPLIT_BYTES", 0 if threads == 2 else 1 << 62)
    monkeypatch.setattr(kernels, "idle_cores", lambda: 2.0)
    rng = random.Random(8 + threads)
    compared = refused = 0
    for _ in range(2500):
        data = random_table(rng)
        if _compiled_reads_as_python(data, extra=bool(rng.random() < 0.5)):
            compared += 1
        else:
            refused += 1
    assert compared > 300 and refused > 300


@needs_native
def test_lines_around_the_lexers_64_byte_window_agree():
    """The lexer reads a line from the 64 bytes where it starts (its newline among them) or 64 bytes at a time (a
    longer line): lines whose newline falls at either side of 64 and 128 bytes, an id that crosses those marks, runs
    of blanks across them, more fields than it keeps (32), and files that end at such a mark with or without their
    newline are read as the Python reader reads them."""
    rng = random.Random(64)
    checked = 0
    for width in list(range(56, 72)) + list(range(120, 136)) + [200, 300]:
        for _ in range(12):
            pad = width - len("q1 Q0  1 0.5 r")
            doc_length = rng.randint(1, max(1, pad))
            gap = " " * max(1, pad - doc_length + 1) if rng.random() < 0.5 else " \t" * max(1, (pad - doc_length + 1) // 2)
            line = f"q{rng.randint(1, 3)} Q0 {'d' * doc_length}{rng.randint(0, 9)}{gap}1 0.{rng.randint(0, 999)} r"
            if rng.random() < 0.2:
                line += " x" * rng.randint(1, 40)  # extra fields, past 32 on some lines
            lines = [line if rng.random() < 0.7 else line[: rng.randint(1, len(line))] for _ in range(rng.randint(1, 6))]
            data = ("\n".join(lines) + ("\n" if rng.random() < 0.5 else "")).encode()
            checked += _compiled_reads_as_python(data, extra=True)
    assert checked > 100


@needs_native
def test_read_table_in_two_halves_joins_codes_lines_and_numbers():
    """The second half's ids coded after the first half's (shared ones keep their codes), its rows moved up past the
    first half's comment and blank lines, its slow numbers placed, its first extra line counted from the file's start."""
    first = "# comment\n\nq1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 0.25 r\n   \n" * 80  # the middle falls in here
    second = "q2 Q0 d2 1 0.30000000000000004 r\nq2 Q0 d3 2 1e-30 r x\nq1 Q0 d1 1 -0.0 r\n" * 40
    data = (first + second).encode()
    one = kernels.read_table(data, 6, True, (0, 2), 4, threads=1)
    two = kernels.read_table(data, 6, True, (0, 2), 4, threads=2)
    assert [(c.tolist(), u) for c, u in one[0]] == [(c.tolist(), u) for c, u in two[0]]
    assert one[1].view(np.int64).tolist() == two[1].view(np.int64).tolist() and one[2:] == two[2:]
    assert two[0][1][1] == ["d1", "d2", "d3"] and two[2:] == (40, first.count("\n") + 2)


@needs_native
def test_read_table_numbers_equal_python_floats():
    """Every number form, converted by the fast path or by Python's own conversion: Python's float(), to the bit."""
    from evalkit.core.input_rules import NUMBER

    rng = np.random.default_rng(9)
    digits = [str(rng.integers(0, 10**int(rng.integers(1, 19)))) for _ in range(3000)]
    forms = NUMBERS + [f"{d[:i]}.{d[i:]}" for d in digits for i in (0, len(d) // 2)] + [f"{d}e-{rng.integers(0, 40)}" for d in digits]
    forms += [repr(float(x)) for x in rng.random(3000) * 10.0 ** rng.integers(-30, 30, 3000)]
    for form in forms:
        found = kernels.read_table(f"q {form}\n".encode(), 2, False, (0,), 1)
        valid = NUMBER.match(form) is not None and np.isfinite(float(form))
        assert (found is not None) == valid, form
        if valid:
            assert found[1].view(np.int64)[0] == np.float64(float(form)).view(np.int64), form


def test_scores_equal_without_any_compiled_kernel(tmp_path, monkeypatch):
    """A 256 KB+ run read and scored with every kernel compiled and with none (a pure-Python install): same run, same values."""
    from evalkit import api

    rng = np.random.default_rng(4)
    lines = [f"q{q} Q0 d{rng.integers(0, 3000)} {r} {round(rng.random(), 2)} t" for q in range(400) for r in range(50)]
    lines += ["q7 Q0 d1 99 0.5 t", "q7 Q0 d1 100 0.25 t"]  # a repeated document, ties everywhere
    run_path, qrels_path = tmp_path / "run.trec", tmp_path / "qrels.txt"
    run_path.write_text("\n".join(lines) + "\n")
    qrels_path.write_text("".join(f"q{q} 0 d{d} {g}\n" for q in range(400)
                                  for d, g in zip(rng.choice(3000, 8, replace=False), rng.integers(-1, 3, 8))))
    assert run_path.stat().st_size > tables.FAST_PATH_BYTES

    def outcome():
        result = api.score(str(run_path), str(qrels_path), task="trec", metrics="map ndcg@10 mrr@10 recall@100 unj@10 bpref")
        run = api.read_run(str(run_path))
        per_query = result.task_score.evaluation.per_query
        return result.means, {k: v.tolist() for k, v in per_query.items()}, run.to_scores(), result.warnings

    compiled = outcome()
    monkeypatch.setattr(kernels, "native", None)  # every kernel off: the pure-Python install
    assert outcome() == compiled


@needs_native
@pytest.mark.parametrize("depth, judged_queries", [(None, 70), (1, 70), (7, 70), (None, 8), (5, 8)])
def test_judged_rows_twins_agree(depth, judged_queries, monkeypatch):
    """The judge's one-pass C scan and its numpy twin keep the same rows: evaluated queries, first positions, depth,
    judgments of the row's own query, grades >= 0 (negative ones unjudged); few judgments a query (compared one by
    one) and many (8 queries: a binary search)."""
    from evalkit.data import Qrels, Run
    from evalkit.metrics.evaluation import judge, match_queries

    rng = np.random.default_rng((depth or 0) + judged_queries)
    qids = [f"q{q}" for q in rng.integers(0, 60, 3000)]
    run = Run.from_rows(qids, [f"d{d}" for d in rng.integers(0, 150, 3000)], rng.integers(0, 20, 3000) / 4.0)  # ties, repeats
    judged = {(f"q{q}", f"d{d}"): float(g) for q, d, g in zip(rng.integers(0, judged_queries, 900), rng.integers(0, 200, 900),
                                                               rng.integers(-1, 3, 900))}
    qrels = Qrels.from_rows([q for q, _ in judged], [d for _, d in judged], list(judged.values()))
    sets = match_queries(run, qrels)
    evaluated = np.flatnonzero(rng.random(len(sets.gold)) < 0.8)  # some gold queries not evaluated

    def rows():
        j = judge(run, qrels, sets, evaluated, depth=depth)
        return j.qpos.tolist(), j.rank.tolist(), j.grade.tolist(), j.num_ret.tolist()

    compiled = rows()
    assert len(compiled[0]) > (10 if depth is None else 0)
    monkeypatch.setattr(kernels, "native", None)
    assert rows() == compiled


@needs_native
def test_text_marks_twins_agree():
    """The first CR and all-ASCII of one compiled pass (64 bytes at a time, then byte by byte) equal find and isascii:
    a CR or a high byte at every position around the 64-byte steps, several CRs, empty and short inputs."""
    rng = random.Random(11)
    cases = [b"", b"\r", b"\x80", b"a" * 63, b"a" * 64, b"a" * 65]
    for length in (1, 63, 64, 65, 127, 128, 129, 200):
        for position in {0, length // 2, length - 1, 63 % length, 64 % length, 65 % length}:
            base = bytearray(rng.choice(b"abc \t\n") for _ in range(length))
            for mark in (b"\r", b"\xc3", b"\xff"):
                case = bytearray(base)
                case[position] = mark[0]
                cases.append(bytes(case))
            both = bytearray(base)
            both[position] = 0x0D
            both[-1] = 0x0D
            cases.append(bytes(both))
    for case in cases:
        assert kernels.native.text_marks(case) == (case.find(b"\r"), case.isascii()), case
    assert kernels.native.text_marks(memoryview(b"xx\r")) == (2, True)  # any buffer


@needs_native
def test_first_repeated_pair_is_the_same_in_one_pass_and_by_sorting(monkeypatch):
    """A gold's repeated judgment: one pass where each query's rows are contiguous, one sort otherwise or without the
    kernel; the same row either way (random grouped and shuffled judgments, repeats or none)."""
    from evalkit.core import input_rules as values

    rng = np.random.default_rng(5)
    for _ in range(400):
        n = int(rng.integers(1, 80))
        qidx, didx = np.sort(rng.integers(0, 6, n)), rng.integers(0, 12 if rng.random() < 0.5 else 400, n)
        for order in (np.arange(n), rng.permutation(n)):
            found = values.first_repeated_pair(qidx[order], didx[order], 400)
            with monkeypatch.context() as patched:
                patched.setattr(kernels, "native", None)
                assert values.first_repeated_pair(qidx[order], didx[order], 400) == found
    # codes out of range (a Qrels built by hand): the sort's answer, never the kernel's refusal
    assert values.first_repeated_pair(np.array([0, 0, 1]), np.array([-1, 7, -1]), 3) is None


def test_only_the_command_lines_scoring_processes_keep_freed_memory():
    """kernels.keep_freed_memory is process-wide: the library never calls it, the command line does for the commands
    that exit right after (a child process sees it called for `score`, not for `run`, and not on `import evalkit`)."""
    import subprocess
    import sys

    probe = ("import sys, evalkit.native.kernels as k; calls = []; k.keep_freed_memory = lambda: calls.append(1) or True; "
             "sys.argv = [{argv}]; import evalkit.cli; print(len(calls))")
    for argv, expected in (("'evalkit', 'score', 'a', 'b'", "1"), ("'evalkit', 'run', 'x'", "0"), ("'python', 'score'", "0")):
        out = subprocess.run([sys.executable, "-c", probe.format(argv=argv)], capture_output=True, text=True, check=True)
        assert out.stdout.strip() == expected, (argv, out.stderr)
    if kernels.native is not None and sys.platform.startswith("linux"):  # in a child: the setting is the process's
        probe = "import platform, evalkit.native.kernels as k; print(k.keep_freed_memory() is (platform.libc_ver()[0] == 'glibc'))"
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
        assert out.stdout.strip() == "True", out.stderr
