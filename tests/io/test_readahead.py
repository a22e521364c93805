"""Input files read ahead (evalkit.io.readahead) are used only when unchanged; anything doubtful is left to load."""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import pytest

from evalkit.io import readahead
from evalkit.core.errors import InputError
from evalkit.io.textio import load


def test_an_unchanged_file_is_taken_a_changed_one_read_again(tmp_path, monkeypatch):
    monkeypatch.setattr(readahead, "_AHEAD", {})
    same, changed = tmp_path / "same.trec", tmp_path / "changed.trec"
    same.write_bytes(b"q1 Q0 d1 1 0.5 r\n")
    changed.write_bytes(b"q1 Q0 d1 1 0.5 r\n")
    readahead.start([str(same), str(changed), str(tmp_path / "missing"), str(tmp_path)], limit=1 << 20)
    assert set(readahead._AHEAD) == {str(same), str(changed)}  # a missing path and a folder are left to load
    readahead._AHEAD[str(changed)].hashed.wait()
    changed.write_bytes(b"q1 Q0 d2 1 0.25 r\n")
    os.utime(changed, ns=(1, 1))
    taken = load(same)
    assert taken.data == same.read_bytes() and taken.sha256 == hashlib.sha256(same.read_bytes()).hexdigest()
    fresh = load(changed)
    assert fresh.data == b"q1 Q0 d2 1 0.25 r\n" and fresh.sha256 == hashlib.sha256(fresh.data).hexdigest()
    assert readahead._AHEAD == {}


def test_a_file_taken_before_the_thread_reaches_it(tmp_path, monkeypatch):
    """load may ask for the second file while the thread still reads the first: it waits for it, never forever."""
    import threading

    monkeypatch.setattr(readahead, "_AHEAD", {})
    first, second = tmp_path / "first", tmp_path / "second"
    first.write_bytes(b"x" * (8 << 20))
    second.write_bytes(b"q1 0 d1 1\n")
    readahead.start([str(first), str(second)], limit=1 << 30)
    taken = []
    taker = threading.Thread(target=lambda: taken.append(readahead.take(str(second), os.stat(second), 1 << 30)))
    taker.start()
    taker.join(timeout=60)
    assert not taker.is_alive() and taken[0][0] == b"q1 0 d1 1\n" and taken[0][1].result() == hashlib.sha256(b"q1 0 d1 1\n").hexdigest()
    assert readahead.take(str(first), os.stat(first), 1 << 30)[0] == first.read_bytes()


def test_limits_and_fifos_are_left_to_load(tmp_path, monkeypatch):
    monkeypatch.setattr(readahead, "_AHEAD", {})
    big = tmp_path / "big.trec"
    big.write_bytes(b"x" * 100)
    readahead.start([str(big)], limit=10)  # larger than the limit: not read ahead
    assert readahead._AHEAD == {}
    readahead.start([str(big)], limit=1000)
    readahead._AHEAD[str(big)].hashed.wait()
    assert readahead.take(str(big), os.stat(big), limit=50) is None  # a smaller limit since: load decides
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "fifo"
        os.mkfifo(fifo)
        readahead.start([str(fifo)], limit=1000)  # never opened, never waited on
        assert readahead._AHEAD == {}
        with pytest.raises(InputError, match="not a regular file"):
            load(fifo)


def test_the_command_line_reads_ahead_and_scores_the_same(tmp_path):
    run, qrels = tmp_path / "run.trec", tmp_path / "qrels.txt"
    run.write_text("".join(f"q{q} Q0 d{d} {d} {1 / (d + 1)} r\n" for q in range(50) for d in range(30)))
    qrels.write_text("".join(f"q{q} 0 d{q % 30} 1\n" for q in range(50)))
    code = ("import sys, runpy; sys.argv = ['evalkit', 'score', sys.argv[1], sys.argv[2], '--output', 'json'];"
            "from evalkit.io import readahead; import evalkit.cli; print(sorted(readahead._AHEAD), file=sys.stderr);"
            "evalkit.cli.entry_point()")
    done = subprocess.run([sys.executable, "-c", code, str(run), str(qrels)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert str(run) in done.stderr and str(qrels) in done.stderr  # both were read ahead
    shas = [line.split('"')[3] for line in done.stdout.splitlines() if '"sha256"' in line]
    assert shas == [hashlib.sha256(run.read_bytes()).hexdigest(), hashlib.sha256(qrels.read_bytes()).hexdigest()]


def test_a_table_parsed_ahead_is_taken_only_for_the_same_bytes_and_shape(monkeypatch):
    """kernels.read_table takes a table read ahead only for the very bytes object and shape it was read for (waiting
    for it); a refusal read ahead stays a refusal (the Python reader names the line); anything else reads again."""
    from evalkit.native import kernels

    if kernels.native is None:
        pytest.skip("evalkit.native._native was not built")
    monkeypatch.setattr(kernels, "_READ_AHEAD", {})
    data = "".join(f"q{q} Q0 d{d} {d} {1 / (d + 1)} r\n" for q in range(20) for d in range(30)).encode()
    expected = kernels.read_table(data, *kernels.TREC_RUN)
    kernels.read_table_ahead(data, kernels.TREC_RUN)
    taken = kernels.read_table(data, *kernels.TREC_RUN)
    assert kernels._READ_AHEAD == {}
    assert [(c.tolist(), u) for c, u in taken[0]] == [(c.tolist(), u) for c, u in expected[0]]
    assert taken[1].tolist() == expected[1].tolist() and taken[2:] == expected[2:]
    kernels.read_table_ahead(data, kernels.TREC_QRELS)  # the wrong guess: six fields a line, not four
    assert kernels._READ_AHEAD[id(data)].found == [None]
    again = kernels.read_table(data, *kernels.TREC_RUN)  # another shape: read again, the guess dropped
    assert again[1].tolist() == expected[1].tolist() and kernels._READ_AHEAD == {}
    copy = bytes(bytearray(data))
    kernels.read_table_ahead(data, kernels.TREC_RUN)
    assert kernels.read_table(copy, *kernels.TREC_RUN)[1].tolist() == expected[1].tolist()  # equal bytes, another object
    assert id(data) in kernels._READ_AHEAD
    bad = data + b"q9 Q0 d1 1 x r\n"
    kernels.read_table_ahead(bad, kernels.TREC_RUN)
    assert kernels.read_table(bad, *kernels.TREC_RUN) is None


AHEAD_PROBE = (
    "import sys; sys.argv = ['evalkit', sys.argv[3], sys.argv[1], sys.argv[2], '--output', 'tsv', '-m', 'map ndcg@10'];"
    "from evalkit.native import kernels; ahead, judge = kernels.read_table_ahead, kernels.judge_run_ahead; shapes = [];"
    "kernels.read_table_ahead = lambda data, shape, register=True: shapes.append(shape) or ahead(data, shape, register);"
    "kernels.judge_run_ahead = lambda data, gold: shapes.append('judged') or judge(data, gold);"
    "judge_file = kernels.judge_file; kernels.judge_file = lambda *args: shapes.append('streamed') or judge_file(*args);"
    "import evalkit.cli; code = evalkit.cli.main();"
    "print('ahead', shapes, 'left', len(kernels._READ_AHEAD), len(kernels._JUDGED_AHEAD), file=sys.stderr); sys.exit(code)")
RUN_SHAPE, QRELS_SHAPE = "TableShape(n_fields=6, extra=True, keep=(0, 2), numeric=4)", "TableShape(n_fields=4, extra=False, keep=(0, 2), numeric=3)"


@pytest.mark.parametrize("repeat", [False, True])
def test_the_command_line_reads_a_large_run_ahead_and_scores_the_same(tmp_path, repeat):
    """``score``: a run of more than a MiB is read against its gold on the read-ahead thread (evalkit.io.prejudged), from
    its file where no manifest is shown (evalkit.io.streamed), and taken; one that lists a document twice is declined
    there and parsed ahead the general way instead, and taken. The same figures as a process that reads it itself; a
    damaged copy is refused with the same line. Where the output shows a manifest (json), the run's bytes are read
    whole (their sha256 is needed) and judged ahead from them."""
    run, qrels = tmp_path / "run.trec", tmp_path / "qrels.txt"
    run.write_text("".join(f"q{q} Q0 d{(q * 7 + d) % 997} {d} {1 / (d + 1)} r\n" for q in range(400) for d in range(100))
                   + ("q399 Q0 d1 1 0.5 r\n" if repeat else ""))
    qrels.write_text("".join(f"q{q} 0 d{(q * 7 + q % 5) % 997} {1 + q % 2}\n" for q in range(400)))
    assert run.stat().st_size > 1 << 20
    ahead = subprocess.run([sys.executable, "-c", AHEAD_PROBE, str(run), str(qrels), "score"], capture_output=True, text=True)
    assert ahead.returncode == 0, ahead.stderr
    # read ahead and taken (with a repeat, the general table parsed ahead on the decline is what the reader takes)
    assert f"ahead [{QRELS_SHAPE}, 'streamed'] left 0 0" in ahead.stderr, ahead.stderr
    with_manifest = subprocess.run([sys.executable, "-c", AHEAD_PROBE.replace("'tsv'", "'json'"), str(run), str(qrels), "score"],
                                   capture_output=True, text=True)
    assert with_manifest.returncode == 0 and f"ahead [{QRELS_SHAPE}, 'judged'] left 0 0" in with_manifest.stderr, with_manifest.stderr
    from evalkit.api import score

    result = score(str(run), str(qrels), metrics=["map", "ndcg@10"])
    printed = dict(line.split("\t") for line in ahead.stdout.splitlines()[1:])
    assert printed == {name: f"{value:.6f}" for name, value in result.means.items()}
    with open(run, "a") as handle:
        handle.write("q1 Q0 d1 1 nope r\n")
    refused = subprocess.run([sys.executable, "-c", AHEAD_PROBE, str(run), str(qrels), "score"], capture_output=True, text=True)
    assert refused.returncode == 2 and refused.stderr.startswith(f"{run}:{40001 + repeat}: "), refused.stderr


def test_compare_reads_each_large_run_ahead_against_the_gold(tmp_path):
    """``compare GOLD RUN RUN``: the gold's table once, then each run read against it ahead, each taken."""
    runs = [tmp_path / "a.trec", tmp_path / "b.trec"]
    for shift, run in enumerate(runs):
        run.write_text("".join(f"q{q} Q0 d{(q * 7 + d + shift) % 997} {d} {1 / (d + 1)} r\n" for q in range(400) for d in range(100)))
    gold = tmp_path / "qrels.txt"
    gold.write_text("".join(f"q{q} 0 d{(q * 7 + q % 5) % 997} {1 + q % 2}\n" for q in range(400)))
    code = AHEAD_PROBE.replace("sys.argv[3], sys.argv[1], sys.argv[2], '--output', 'tsv', '-m', 'map ndcg@10'",
                               "'compare', sys.argv[1], sys.argv[2], sys.argv[3]")
    ahead = subprocess.run([sys.executable, "-c", code, str(gold), *map(str, runs)], capture_output=True, text=True)
    assert ahead.returncode == 0, ahead.stderr
    assert f"ahead [{QRELS_SHAPE}, 'streamed', 'streamed'] left 0 0" in ahead.stderr, ahead.stderr


def test_a_failing_parse_ahead_still_hands_over_bytes_and_hash(tmp_path, monkeypatch):
    """The parse ahead is a hint: if it fails, the file's hash is still taken (its reader waits for it)."""
    monkeypatch.setattr(readahead, "_AHEAD", {})

    def broken(data):
        raise MemoryError

    monkeypatch.setattr(readahead, "_parse", broken)
    big = tmp_path / "run.trec"
    big.write_bytes(b"q1 Q0 d1 1 0.5 r\n" * 70000)
    readahead.start([str(big)], limit=1 << 30)
    assert readahead._AHEAD[str(big)].hashed.wait(timeout=60)
    taken = readahead.take(str(big), os.stat(big), 1 << 30)
    assert taken[1].result() == hashlib.sha256(big.read_bytes()).hexdigest()


def test_a_large_files_hash_is_left_to_whoever_asks_for_it(tmp_path, monkeypatch):
    """``hash_large=False`` (``score`` with an output that shows no manifest): the small files are hashed ahead, a
    large one only when asked for, once, by the first to ask; two asking at once get the same digest."""
    import threading

    monkeypatch.setattr(readahead, "_AHEAD", {})
    taken: list[bytes] = []
    real = hashlib.sha256
    monkeypatch.setattr(readahead.hashlib, "sha256", lambda data: taken.append(data) or real(data))
    small, big = tmp_path / "qrels.txt", tmp_path / "run.trec"
    small.write_bytes(b"q1 0 d1 1\n")
    big.write_bytes(b"q1 Q0 d1 1 0.5 r\n" * 70000)
    readahead.start([str(big), str(small)], limit=1 << 30, hash_large=False)
    ahead_small, ahead_big = readahead._AHEAD[str(small)], readahead._AHEAD[str(big)]
    assert ahead_small.hashed.wait(timeout=60) and ahead_big.read.wait(timeout=60)
    assert not ahead_big.hashed.wait(timeout=0.2) and taken == [small.read_bytes()]  # the large one is not hashed
    data, pending = readahead.take(str(big), os.stat(big), 1 << 30)
    digests: list[str] = []
    askers = [threading.Thread(target=lambda: digests.append(pending.result())) for _ in range(2)]
    for asker in askers:
        asker.start()
    for asker in askers:
        asker.join()
    assert digests == [real(big.read_bytes()).hexdigest()] * 2 and len(taken) == 2  # hashed once


def test_score_hashes_its_inputs_ahead_only_for_an_output_that_shows_them(tmp_path):
    """The command line's reading of its arguments: only ``score`` (output table, tsv or trec_eval) and ``compare``
    (table) with no --out and no --per-query leave their large inputs unhashed; anything else, or unsure, hashes them."""
    from evalkit.cli import _shows_manifest

    for args in (["r", "g"], ["r", "g", "-o", "tsv"], ["-otable", "r", "g"], ["r", "g", "--output=trec_eval", "-m", "map"],
                 ["r", "g", "--metric", "map", "--task", "trec"]):
        assert not _shows_manifest("score", args), args
    for args in (["r", "g", "-o", "json"], ["r", "g", "--output", "markdown"], ["r", "g", "-ojson"], ["r", "g", "--output=markdown"],
                 ["r", "g", "--out", "x.txt"], ["r", "g", "--out=x.txt"], ["r", "g", "--per-query", "p.tsv"], ["--", "-ox", "g"],
                 ["r", "g", "-o"]):
        assert _shows_manifest("score", args), args
    assert not _shows_manifest("compare", ["g", "r1", "r2", "-m", "map"]) and not _shows_manifest("compare", ["g", "r1", "r2", "-o", "table"])
    for args in (["g", "r1", "r2", "-o", "json"], ["g", "r1", "r2", "--output=markdown"], ["g", "r1", "r2", "--out", "x"],
                 ["g", "r1", "r2", "-o", "tsv"]):
        assert _shows_manifest("compare", args), args
    assert _shows_manifest("report", ["g", "r1"]) and _shows_manifest("fuse", ["r1", "r2"])
    # a large run scored with a table (nothing hashed) and with json (both hashed, as stored)
    run, qrels = tmp_path / "run.trec", tmp_path / "qrels.txt"
    run.write_text("".join(f"q{q} Q0 d{(q * 7 + d) % 997} {d} {1 / (d + 1)} r\n" for q in range(400) for d in range(100)))
    qrels.write_text("".join(f"q{q} 0 d{(q * 7 + q % 5) % 997} {1 + q % 2}\n" for q in range(400)))
    probe = ("import sys, hashlib; asked = [];"
             "real = hashlib.sha256; hashlib.sha256 = lambda data=b'': asked.append(len(data)) or real(data);"
             "sys.argv = ['evalkit', 'score', *sys.argv[1:]]; import evalkit.cli; code = evalkit.cli.main();"
             "print('hashed', sorted(asked), file=sys.stderr); sys.exit(code)")
    table = subprocess.run([sys.executable, "-c", probe, str(run), str(qrels), "-m", "map"], capture_output=True, text=True)
    assert table.returncode == 0 and "MAP" in table.stdout, table.stderr
    assert f"hashed [{qrels.stat().st_size}]" in table.stderr, table.stderr  # the small gold's only, not the 4 MB run's
    shown = subprocess.run([sys.executable, "-c", probe, str(run), str(qrels), "-m", "map", "-o", "json"], capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    shas = [line.split('"')[3] for line in shown.stdout.splitlines() if '"sha256"' in line]
    assert shas == [hashlib.sha256(run.read_bytes()).hexdigest(), hashlib.sha256(qrels.read_bytes()).hexdigest()]
    # compare: the same with its table and its json
    other = tmp_path / "other.trec"
    other.write_text(run.read_text().replace(" r\n", " s\n"))
    compare = probe.replace("'score', *sys.argv[1:]", "'compare', *sys.argv[1:]")
    table = subprocess.run([sys.executable, "-c", compare, str(qrels), str(run), str(other), "-m", "map"], capture_output=True, text=True)
    assert table.returncode == 0 and f"hashed [{qrels.stat().st_size}]" in table.stderr, table.stderr
    shown = subprocess.run([sys.executable, "-c", compare, str(qrels), str(run), str(other), "-m", "map", "-o", "json"],
                           capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    import json

    entries = json.loads(shown.stdout)["manifest"]["inputs"]
    assert [entry["sha256"] for entry in entries] == [hashlib.sha256(path.read_bytes()).hexdigest() for path in (qrels, run, other)]
