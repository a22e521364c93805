"""A TREC run judged straight from its file (evalkit.io.streamed, judge_stream.c) gives what the judged reading of its
bytes gives (evalkit.io.prejudged), declines what that declines, and scores as the general reader's run.

Files of several MiB (the reader's buffer takes 1 MiB a read, so queries, lines and ids straddle its reads), queries
written in rank order and shuffled, ties, comments, blank lines, extra fields, an unterminated last line, one query
larger than the buffer, lines longer than the ends kept for format detection and the run tag; a file that shrinks,
one that changes before its rows are read, and bytes that load would change (CR, non-ASCII).
"""
from __future__ import annotations

import os
import random
import subprocess
import sys

import numpy as np
import pytest

from evalkit.native import kernels
from evalkit.api import score
from evalkit.core.errors import InputError
from evalkit.io.reading import read_qrels, read_run
from evalkit.io.prejudged import DECLINED, DeferredRun, StreamedFile, read_streamed
from evalkit.io.streamed import EDGE_BYTES, STREAM_BYTES, judge_open_file

pytestmark = pytest.mark.skipif(kernels.native is None, reason="the compiled kernel was not built")

METRICS = ["mrr@10", "ndcg@10", "map", "recall@100", "P@5", "bpref", "infAP", "success@3", "num_rel_ret"]
SCORES = ["1", "1.0", "0.5", "-0.0", "0", "0.25", "2e-3", "0.1234567890123456789", "7", "7.00", "1e30"]


def _run_lines(rng: random.Random, queries: int, *, in_order: bool, rows: tuple[int, int] = (1, 120)) -> tuple[list[str], dict]:
    lines, gold = [], {}
    for q in range(queries):
        docs = rng.sample(range(20000), rng.randrange(*rows))
        scores = sorted((float(rng.choice(SCORES)) for _ in docs), reverse=True) if in_order else [float(rng.choice(SCORES)) for _ in docs]
        if in_order:  # ties by document id descending, byte-wise
            order = sorted(zip(scores, [f"d{d}" for d in docs]), key=lambda pair: (-pair[0], [-b for b in pair[1].encode()] + [1]))
        else:
            order = list(zip(scores, [f"d{d}" for d in docs]))
        block = [f"q{q} Q0 {doc} {i} {score!r} tag" + (" extra" if rng.random() < 0.01 else "") for i, (score, doc) in enumerate(order)]
        if rng.random() < 0.02:
            block.insert(rng.randrange(len(block) + 1), "# a comment" if rng.random() < 0.5 else "")
        lines += block
        for doc in rng.sample([d for _, d in order], min(3, len(order))) + [f"d{rng.randrange(20000)}"]:
            gold[(f"q{q}", doc)] = rng.choice([-1, 0, 1, 2])
    return lines, gold


def _gold_args(gold: dict) -> tuple:
    query_ids = sorted({q for q, _ in gold})
    doc_ids = sorted({d for _, d in gold})
    qcode, dcode = {q: i for i, q in enumerate(query_ids)}, {d: i for i, d in enumerate(doc_ids)}
    qidx = np.array([qcode[q] for q, _ in gold], dtype=np.int64)
    didx = np.array([dcode[d] for _, d in gold], dtype=np.int64)
    return query_ids, qidx, didx, doc_ids


def _judge_file(path, gold: tuple, threads: int, size: int | None = None):
    fd = os.open(path, os.O_RDONLY)
    try:
        return kernels.judge_file(fd, os.fstat(fd).st_size if size is None else size, gold, threads)
    finally:
        os.close(fd)


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a[:3] == b[:3] and a[-1] == b[-1] and all(bytes(x) == bytes(y) for x, y in zip(a[3:-1], b[3:-1]))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("threads", [1, 2])
def test_judged_from_the_file_as_from_its_bytes(tmp_path, seed, threads):
    rng = random.Random(seed)
    lines, gold = _run_lines(rng, 1500 + 300 * seed, in_order=seed % 2 == 0)
    text = "\n".join(lines) + ("\n" if seed % 3 else "")  # some without a newline at the end
    path = tmp_path / "run.trec"
    path.write_text(text)
    assert path.stat().st_size > 2 * (1 << 20)
    args = _gold_args(gold)
    from_bytes = kernels.native.judge_run(text.encode(), *args, kernels.SEED, threads)
    from_file = _judge_file(path, args, threads)
    assert from_bytes is not None and _same(from_bytes, from_file)


def test_rows_in_rank_order_rank_as_counted(tmp_path):
    """The in-order pass (a row's rank is its place) gives what counting and sorting give for the same rows shuffled."""
    rng = random.Random(11)
    lines, gold = _run_lines(rng, 600, in_order=True, rows=(1, 90))
    shuffled = []
    for q in range(600):
        block = [line for line in lines if line.startswith(f"q{q} ")]
        rng.shuffle(block)
        shuffled += block
    args = _gold_args(gold)
    ordered = kernels.judge_run(("\n".join(lines) + "\n").encode(), *args)
    mixed = kernels.judge_run(("\n".join(shuffled) + "\n").encode(), *args)
    assert ordered[0] == mixed[0] and ordered[2] == mixed[2]  # (the first line with extra fields moves)
    assert all(np.array_equal(a, b) for a, b in zip(ordered[3:], mixed[3:]))


@pytest.mark.parametrize("threads", [1, 2])
def test_a_query_larger_than_the_buffer_and_lines_longer_than_a_read(tmp_path, threads):
    """One query of 6 MiB (the buffer grows to hold it) and a document id of 1.5 MiB (a line longer than one read)."""
    rng = random.Random(5)
    lines, gold = _run_lines(rng, 50, in_order=False)
    big = [f"qbig Q0 d{i} {i} {rng.random()!r} tag" for i in range(200000)]
    long_id = "L" * (3 << 19)
    lines = big + lines + [f"qlong Q0 {long_id} 1 0.5 tag"]
    gold.update({("qbig", "d7"): 1, ("qbig", "d199999"): 2, ("qlong", long_id): 1})
    text = "\n".join(lines) + "\n"
    path = tmp_path / "run.trec"
    path.write_text(text)
    args = _gold_args(gold)
    expected = kernels.native.judge_run(text.encode(), *args, kernels.SEED, threads)
    assert expected is not None and _same(expected, _judge_file(path, args, threads))


@pytest.mark.parametrize("quirk", ["repeat", "split", "nul", "bad number", "five fields"])
@pytest.mark.parametrize("threads", [1, 2])
def test_declines_what_the_judged_reading_of_bytes_declines(tmp_path, quirk, threads):
    rng = random.Random(2)
    lines, gold = _run_lines(rng, 3000, in_order=True)
    at = len(lines) * 3 // 4
    first = lines[at].split()[0]
    damaged = {"repeat": lines[at] + "\n" + lines[at].replace(" 0 ", " 1 "),
               "split": lines[at] + "\nq0 Q0 dsplit 1 0.5 t",
               "nul": lines[at].replace(" Q0 ", " Q\x000 "),
               "bad number": f"{first} Q0 dbad 1 x t",
               "five fields": f"{first} Q0 dfive 1 0.5"}[quirk]
    lines[at] = damaged
    text = "\n".join(lines) + "\n"
    path = tmp_path / "run.trec"
    path.write_bytes(text.encode())
    args = _gold_args(gold)
    assert kernels.native.judge_run(text.encode(), *args, kernels.SEED, threads) is None
    assert _judge_file(path, args, threads) is None


def test_a_file_shorter_than_measured_declines(tmp_path):
    rng = random.Random(3)
    lines, gold = _run_lines(rng, 2000, in_order=True)
    path = tmp_path / "run.trec"
    path.write_text("\n".join(lines) + "\n")
    size = path.stat().st_size
    for threads in (1, 2):
        assert _judge_file(path, _gold_args(gold), threads) is not None
        assert _judge_file(path, _gold_args(gold), threads, size=size + 100) is None


@pytest.mark.parametrize("where", ["head", "past the head"])
@pytest.mark.parametrize("byte", ["\r", "é"])
def test_bytes_that_load_would_change_are_loaded_instead(tmp_path, where, byte):
    """A CR or a non-ASCII byte (in the first bytes, seen before judging, or after them, seen by the pass): not judged
    from the file; read_run loads it, and the scores are the general reader's."""
    rng = random.Random(4)
    lines, gold = _run_lines(rng, 3000, in_order=True)
    at = 2 if where == "head" else len(lines) - 5
    lines[at] = lines[at].replace(" tag", f" t{byte}g") if byte == "é" else lines[at] + "\r"
    run_path, gold_path = tmp_path / "run.trec", tmp_path / "gold.txt"
    run_path.write_text("\n".join(lines) + "\n", encoding="utf-8", newline="")
    gold_path.write_text("".join(f"{q} 0 {d} {g}\n" for (q, d), g in gold.items()))
    with open(run_path, "rb") as handle:
        assert judge_open_file(handle.fileno(), os.fstat(handle.fileno()), _gold_args(gold)) is None
    qrels = read_qrels(gold_path)
    assert read_streamed(str(run_path), qrels) is None
    judged = read_run(run_path, against=qrels)
    general = read_run(run_path)
    a, b = score(judged, qrels, metrics=METRICS, allow_partial=True), score(general, qrels, metrics=METRICS, allow_partial=True)
    assert a.means == b.means


def _write(tmp_path, lines: list[str], gold: dict) -> tuple[str, str]:
    run_path, gold_path = tmp_path / "run.trec", tmp_path / "gold.txt"
    run_path.write_text("\n".join(lines) + "\n")
    gold_path.write_text("".join(f"{q} 0 {d} {g}\n" for (q, d), g in gold.items()))
    return str(run_path), str(gold_path)


@pytest.mark.parametrize("long_edges", [False, True])
def test_read_run_judges_a_large_run_from_its_file_and_scores_as_the_general_reader(tmp_path, long_edges):
    """read_run(path, against=qrels): a plain run of a MiB or more is judged from its file; its format sniffed and its
    run tag read from the ends kept (or from the whole, read then, when a comment before its first lines or its last
    line's tag is longer than the ends kept); scores, warnings, tag and rows as the general reader's."""
    rng = random.Random(8)
    lines, gold = _run_lines(rng, 2500, in_order=True)
    if long_edges:
        lines = ["#" + "c" * EDGE_BYTES] + lines[:-1] + [lines[-1].replace(" tag", " " + "T" * EDGE_BYTES)]
    run_path, gold_path = _write(tmp_path, lines, gold)
    assert os.path.getsize(run_path) >= STREAM_BYTES
    qrels = read_qrels(gold_path)
    streamed = read_streamed(run_path, qrels)
    assert isinstance(streamed, StreamedFile) and "_data" not in streamed.__dict__
    judged, general = read_run(run_path, against=qrels), read_run(run_path)
    assert isinstance(judged, DeferredRun) and not isinstance(general, DeferredRun)
    assert judged.source.format == general.source.format == "trec-run"
    assert judged.tag == general.tag and judged.warnings == general.warnings and judged.warnings
    for options in ({}, {"depth": 5}, {"judged_only": True}, {"relevance_level": 2}):
        a = score(judged, qrels, metrics=METRICS, allow_partial=True, **options)
        b = score(general, qrels, metrics=METRICS, allow_partial=True, **options)
        for metric in a.means:
            assert np.array_equal(a.task_score.evaluation.per_query[metric], b.task_score.evaluation.per_query[metric], equal_nan=True)
    assert "qidx" not in judged.__dict__
    assert judged.doc_ids.tolist() == general.doc_ids.tolist() and np.array_equal(judged.scores, general.scores)
    assert judged.source.sha256 == general.source.sha256


def test_a_run_changed_before_its_rows_are_read_is_refused(tmp_path):
    rng = random.Random(9)
    lines, gold = _run_lines(rng, 2500, in_order=True)
    run_path, gold_path = _write(tmp_path, lines, gold)
    qrels = read_qrels(gold_path)
    judged = read_run(run_path, against=qrels)
    assert isinstance(judged, DeferredRun)
    with open(run_path, "a") as handle:
        handle.write("q1 Q0 dnew 1 0.5 tag\n")
    with pytest.raises(InputError, match="changed while evalkit was reading it"):
        _ = judged.doc_ids


def test_a_declined_run_is_read_by_the_general_reader_only(tmp_path, monkeypatch):
    """A run the judged reading declines (a document listed twice) is not judged a second time from its bytes."""
    rng = random.Random(10)
    lines, gold = _run_lines(rng, 2500, in_order=True)
    lines.append(lines[-1])
    run_path, gold_path = _write(tmp_path, lines, gold)
    qrels = read_qrels(gold_path)
    assert read_streamed(run_path, qrels) == DECLINED
    monkeypatch.setattr(kernels, "judge_run", lambda *args, **kwargs: pytest.fail("judged again"))
    run = read_run(run_path, against=qrels)
    assert not isinstance(run, DeferredRun)
    assert score(run, qrels, metrics=METRICS).means == score(read_run(run_path), qrels, metrics=METRICS).means


PROBE = (
    "import sys; sys.argv = ['evalkit', 'score', sys.argv[1], sys.argv[2], '--output', 'tsv', '-m', 'map ndcg@10'];"
    "from evalkit.native import kernels; ahead = kernels.read_table_ahead; shapes = [];"
    "kernels.read_table_ahead = lambda data, shape, register=True, registered=None: shapes.append(shape.n_fields) or ahead(data, shape, register, registered);"
    "judge_file = kernels.judge_file; kernels.judge_file = lambda *args: shapes.append('streamed') or judge_file(*args);"
    "kernels.judge_run = lambda *args, **kwargs: shapes.append('judged again');"
    "import evalkit.cli; code = evalkit.cli.main();"
    "print('ahead', shapes, 'left', len(kernels._READ_AHEAD), len(kernels._JUDGED_AHEAD), file=sys.stderr); sys.exit(code)")


def test_the_command_line_reads_a_declined_run_once_the_general_way(tmp_path):
    """``evalkit score`` of a large run that lists a document twice: judged from its file on the read-ahead thread,
    declined, then read whole and parsed ahead the general way, which its reader takes (nothing judged again)."""
    rng = random.Random(12)
    lines, gold = _run_lines(rng, 2500, in_order=True)
    lines.append(lines[-1])
    run_path, gold_path = _write(tmp_path, lines, gold)
    done = subprocess.run([sys.executable, "-c", PROBE, run_path, gold_path], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "ahead [4, 'streamed', 6] left 0 0" in done.stderr, done.stderr
    means = score(read_run(run_path), read_qrels(gold_path), metrics=["map", "ndcg@10"]).means
    printed = dict(line.split("\t") for line in done.stdout.splitlines()[1:])
    assert printed == {name: f"{value:.6f}" for name, value in means.items()}


HOSTILE_TAILS = {  # what follows 40,000 plain lines (1.4 MB), and the one line or the figure the command gives
    "a bad score on the last line": ("q1 Q0 d1 1 x t\n", "run.trec:40001: score 'x' is not a number"),
    "a NUL inside an id": ("q400 Q0 d\x001 1 0.5 t\n", None),
    "an id of 3 MiB": ("q400 Q0 " + "L" * (3 << 20) + " 1 0.5 t\n", None),
    "five fields on line 508": (None, "run.trec:508: expected 6 whitespace-separated fields, found 5"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_TAILS))
def test_the_command_line_gives_the_general_readers_line_or_figure_on_large_hostile_runs(tmp_path, case):
    """Large runs the judged reading from the file declines or reads: one line naming file and line (exit 2), or the
    figure of the general reader."""
    tail, message = HOSTILE_TAILS[case]
    lines = "".join(f"q{q} Q0 d{d} {d} {1 / (d + 1)!r} t\n" for q in range(400) for d in range(100))
    run_path, gold_path = tmp_path / "run.trec", tmp_path / "gold.txt"
    run_path.write_bytes((lines + tail if tail is not None else lines.replace("q5 Q0 d7 7", "q5 Q0 d7", 1)).encode())
    gold_path.write_text("".join(f"q{q} 0 d{q % 100} 1\n" for q in range(401)))
    assert run_path.stat().st_size >= STREAM_BYTES
    done = subprocess.run([sys.executable, "-m", "evalkit", "score", str(run_path), str(gold_path), "-m", "map", "--output", "tsv"],
                          capture_output=True, text=True, cwd=tmp_path)
    if message is not None:
        assert done.returncode == 2 and done.stderr.strip().endswith(message) and "Traceback" not in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and done.stdout == ""
    else:
        assert done.returncode == 0, done.stderr
        expected = score(read_run(run_path), read_qrels(gold_path), metrics=["map"]).means["MAP"]
        assert done.stdout.splitlines()[1] == f"MAP\t{expected:.6f}"


def test_the_sha256_of_a_run_judged_from_its_file_is_taken_without_holding_it(tmp_path, monkeypatch):
    """Source.sha256 of a run judged from its file: the file's, read 1 MiB at a time (its bytes never held), and one
    line when the file changed since it was judged."""
    import hashlib

    from evalkit.io import prejudged

    rng = random.Random(13)
    lines, gold = _run_lines(rng, 2500, in_order=True)
    run_path, gold_path = _write(tmp_path, lines, gold)
    qrels = read_qrels(gold_path)
    judged = read_run(run_path, against=qrels)
    with monkeypatch.context() as patched:
        patched.setattr(prejudged, "_read_unchanged", lambda *args: pytest.fail("the whole file was read"))
        assert judged.source.sha256 == hashlib.sha256(open(run_path, "rb").read()).hexdigest()
    again = read_run(run_path, against=qrels)
    os.utime(run_path, ns=(1, 1))
    with pytest.raises(InputError, match="changed while evalkit was reading it"):
        _ = again.source.sha256
