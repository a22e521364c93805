"""A TREC run read against its gold (evalkit.io.prejudged) scores exactly as the general reader's run, or declines.

Random runs with ties (equal scores, ids differing only in length or case, -0.0 and 0.0), unsorted lines, queries
outside the gold, gold queries the run misses, extra fields, comment and blank lines, numbers left to the exact
conversion, repeated documents and non-contiguous queries (both declined), under every scoring option that reads
the judged rows (depth, judged-only, relevance level, missing policies, the pooled documents of infAP).
"""
from __future__ import annotations

import random

import numpy as np
import pytest

from evalkit.native import kernels
from evalkit.api import score
from evalkit.data import Run
from evalkit.io.reading import read_qrels, read_run
from evalkit.io.prejudged import DeferredRun

pytestmark = pytest.mark.skipif(kernels.native is None, reason="the compiled kernel was not built")

METRICS = ["mrr@10", "ndcg@10", "map", "recall@100", "P@5", "bpref", "infAP", "ndcg", "success@3", "rprec", "num_rel_ret"]
SCORES = ["1", "1.0", "0.5", "-0.0", "0", "0.25", "2e-3", "0.1234567890123456789", "7", "7.00", "1e30", "3.3333333333333335"]


def _doc(rng: random.Random) -> str:
    return rng.choice(["d", "D", "doc", "d1", "d10", "d1x", "longer-document-id-", "é"]) + str(rng.randrange(12))


def _files(tmp_path, seed: int, *, repeat: bool = False, split: bool = False) -> tuple[str, str]:
    rng = random.Random(seed)
    gold = []
    queries = [f"q{i}" for i in range(rng.randrange(1, 12))]
    for q in queries:
        if rng.random() < 0.8:
            for d in {_doc(rng) for _ in range(rng.randrange(1, 8))}:
                gold.append(f"{q} 0 {d} {rng.choice([-1, 0, 1, 2, 3])}")
    gold.append("gold-only 0 x 1")
    blocks = []
    for q in queries + ["run-only"]:
        if rng.random() < 0.15 and not (repeat and not blocks):
            continue
        docs = list({_doc(rng) for _ in range(rng.randrange(1, 30))})
        if repeat:
            docs.append(docs[0])
        lines = [f"{q} Q0 {d} {i} {rng.choice(SCORES)} tag" + (" extra" if rng.random() < 0.05 else "") for i, d in enumerate(docs)]
        rng.shuffle(lines)
        blocks.append(lines)
    if split:
        while len(blocks) < 2:
            blocks.append([f"extra{len(blocks)} Q0 d 1 1 t"])
        blocks.append([blocks[0].pop()] if len(blocks[0]) > 1 else [blocks[0][0]])
    lines = ["# a comment", ""] + [line for block in blocks for line in block]
    (tmp_path / "gold.txt").write_text("\n".join(gold) + "\n")
    (tmp_path / "run.txt").write_text("\n".join(lines) + "\n")
    return str(tmp_path / "run.txt"), str(tmp_path / "gold.txt")


def _general(run_path: str) -> Run:
    run = read_run(run_path)
    assert not isinstance(run, DeferredRun)
    return run


@pytest.mark.parametrize("seed", range(60))
def test_scores_equal_the_general_readers(tmp_path, seed):
    run_path, gold_path = _files(tmp_path, seed)
    qrels = read_qrels(gold_path)
    judged = read_run(run_path, against=qrels)
    assert isinstance(judged, DeferredRun)
    general = _general(run_path)
    assert judged.query_ids.tolist() == general.query_ids.tolist()
    assert judged.warnings == general.warnings and judged.tag == general.tag
    for options in ({}, {"depth": 3}, {"judged_only": True}, {"relevance_level": 2}, {"missing": "skip"}):
        a = score(judged, qrels, metrics=METRICS, allow_partial=True, **options)
        b = score(general, qrels, metrics=METRICS, allow_partial=True, **options)
        assert a.warnings == b.warnings
        for metric in a.means:
            va = a.task_score.evaluation.per_query[metric]
            vb = b.task_score.evaluation.per_query[metric]
            assert np.array_equal(va, vb, equal_nan=True), (metric, options)
    assert "qidx" not in judged.__dict__  # scored without reading its rows
    assert judged.doc_ids.tolist() == general.doc_ids.tolist()  # and read when asked for
    assert np.array_equal(judged.scores, general.scores)


@pytest.mark.parametrize("seed", range(20))
def test_the_queries_looked_up_in_the_judged_pass_match_as_the_general_runs_do(tmp_path, seed):
    """match_queries takes the judged pass's gold codes (no second lookup of the run's query ids): the same query
    sets, with a task's filter over the gold too."""
    from evalkit.metrics.evaluation import match_queries

    run_path, gold_path = _files(tmp_path, seed)
    qrels = read_qrels(gold_path)
    judged = read_run(run_path, against=qrels)
    assert isinstance(judged, DeferredRun)
    general = _general(run_path)
    rng = np.random.default_rng(seed)
    for keep in (None, rng.random(len(qrels.query_ids)) < 0.5, np.zeros(len(qrels.query_ids), dtype=bool)):
        a, b = match_queries(judged, qrels, keep), match_queries(general, qrels, keep)
        assert np.array_equal(a.run_to_gold, b.run_to_gold) and a.gold.tolist() == b.gold.tolist()
        assert (a.gold_only, a.run_only, a.excluded) == (b.gold_only, b.run_only, b.excluded)


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("quirk", ["repeat", "split"])
def test_declines_what_the_general_reader_must_read(tmp_path, seed, quirk):
    run_path, gold_path = _files(tmp_path, seed, repeat=quirk == "repeat", split=quirk == "split")
    qrels = read_qrels(gold_path)
    run = read_run(run_path, against=qrels)
    assert not isinstance(run, DeferredRun)
    assert score(run_path, gold_path, metrics=METRICS, allow_partial=True).means == score(_general(run_path), qrels, metrics=METRICS,
                                                                                              allow_partial=True).means


@pytest.mark.parametrize("text", ["q1 Q0 d1 1 x tag\n", "q1 Q0 d1 1 0.5\n", "q1 Q0 d\x001 1 0.5 t\n", "q1 Q0 d1 1 1e999 t\n"])
def test_declines_lines_the_general_reader_names(tmp_path, text):
    (tmp_path / "run.txt").write_text(text)
    (tmp_path / "gold.txt").write_text("q1 0 d1 1\n")
    assert kernels.judge_run(text.encode(), ["q1"], np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), ["d1"]) is None
    try:
        run = read_run(tmp_path / "run.txt", format="trec-run", against=read_qrels(tmp_path / "gold.txt"))
    except Exception as error:  # noqa: BLE001 - the general reader's message
        assert "run.txt" in str(error)
    else:
        assert not isinstance(run, DeferredRun)


@pytest.mark.parametrize("threads", [1, 2])
def test_two_threads_give_one_threads_result(threads):
    rng = random.Random(3)
    lines = [f"q{q} Q0 d{rng.randrange(500)}-{i} {i} {rng.choice(SCORES)} t" for q in range(400) for i in range(rng.randrange(1, 40))]
    data = ("\n".join(lines) + "\n").encode()
    gold_docs = sorted({line.split()[2] for line in lines[::3]})
    qidx = np.array([int(d.split("-")[1]) % 400 for d in gold_docs], dtype=np.int64)
    args = ([f"q{q}" for q in range(400)], qidx, np.arange(len(gold_docs), dtype=np.int64), gold_docs)
    one, two = kernels.judge_run(data, *args, threads=1), kernels.judge_run(data, *args, threads=threads)
    assert one[:3] == two[:3] and all(np.array_equal(a, b) for a, b in zip(one[3:], two[3:]))


@pytest.mark.parametrize("where", [3, 140])
def test_a_nul_anywhere_declines_with_either_thread_count(where):
    """A NUL byte in the first or the second part (two threads), inside an id or between lines: declined."""
    lines = [f"q{i // 10} Q0 d{i} {i} 1 t" for i in range(150)]
    data = ("\n".join(lines) + "\n").encode()
    assert kernels.judge_run(data, ["q0"], np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), ["d1"], threads=2) is not None
    for nul in (data.index(f"d{where} ".encode()) + 1, data.index(f"d{where} ".encode()) - 1):
        damaged = data[:nul] + b"\0" + data[nul:]
        for threads in (1, 2):
            assert kernels.judge_run(damaged, ["q0"], np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), ["d1"],
                                     threads=threads) is None


def test_a_query_split_across_the_middle_declines_with_two_threads():
    lines = [f"q{q % 2} Q0 d{i} {i} 1 t" for i, q in enumerate([0] * 50 + [1] * 50 + [0] * 50)]
    data = ("\n".join(lines) + "\n").encode()
    for threads in (1, 2):
        assert kernels.judge_run(data, ["q0"], np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), ["d1"], threads=threads) is None


def test_a_copy_is_a_run_like_any_other(tmp_path):
    run_path, gold_path = _files(tmp_path, 1)
    qrels = read_qrels(gold_path)
    judged = read_run(run_path, against=qrels)
    from dataclasses import replace

    renamed = judged.with_name("renamed")  # renamed, still read against the gold
    assert renamed.judgments_for(qrels) is not None and renamed.name == "renamed" and "qidx" not in renamed.__dict__
    copy = replace(judged, name="copied")  # a copy with every field given: its rows read, scored the general way
    assert copy.judgments_for(qrels) is None and copy.name == "copied"
    assert score(copy, qrels, metrics=METRICS, allow_partial=True).means == score(judged, qrels, metrics=METRICS, allow_partial=True).means


def test_a_large_run_read_on_two_threads_scores_as_the_general_reader(tmp_path, monkeypatch):
    """Above kernels.SPLIT_BYTES the run is read in two parts split at a query's first row: ties, unsorted lines and
    extra fields (their count and first line joined across the parts) as the general reader has them."""
    rng = random.Random(7)
    lines, gold = [], {}
    for q in range(7000):
        docs = rng.sample(range(5000), 30)
        block = [f"q{q} Q0 d{d} {i} {rng.choice(SCORES)} t" + (" more" if q > 5000 and rng.random() < 0.01 else "") for i, d in enumerate(docs)]
        rng.shuffle(block)
        lines += block
        gold.update({(q, d): rng.choice([-1, 0, 1, 2]) for d in rng.sample(docs, 3) + [rng.randrange(5000)]})
    run_path, gold_path = tmp_path / "run.txt", tmp_path / "gold.txt"
    run_path.write_text("\n".join(lines) + "\n")
    gold_path.write_text("".join(f"q{q} 0 d{d} {g}\n" for (q, d), g in gold.items()))
    assert run_path.stat().st_size > kernels.SPLIT_BYTES
    monkeypatch.setattr(kernels, "idle_cores", lambda: 2.0)
    qrels = read_qrels(gold_path)
    judged, general = read_run(run_path, against=qrels), _general(run_path)
    assert isinstance(judged, DeferredRun) and judged.warnings == general.warnings and judged.warnings
    a = score(judged, qrels, metrics=METRICS, allow_partial=True)
    b = score(general, qrels, metrics=METRICS, allow_partial=True)
    for metric in a.means:
        assert np.array_equal(a.task_score.evaluation.per_query[metric], b.task_score.evaluation.per_query[metric], equal_nan=True)


@pytest.mark.parametrize("seed", range(4))
def test_queries_with_many_judgments(tmp_path, seed):
    """More than 8 judgments a query (a binary search finds a row's) and more than 32 judged rows (ranks read from a
    sort of the query's rows instead of counted), with many equal scores."""
    rng = random.Random(seed)
    run, gold = [], {}
    for q in range(20):
        docs = rng.sample(range(400), rng.randrange(40, 300))
        run += [f"q{q} Q0 {_doc(rng)}-{d} 0 {rng.choice(SCORES[:6])} t" for d in docs]
        gold.update({(q, line.split()[2]): rng.choice([-1, 0, 1, 2, 3]) for line in rng.sample(run[-len(docs):], rng.randrange(5, len(docs)))})
        gold.update({(q, f"absent{i}"): 1 for i in range(rng.randrange(3))})
    rng.shuffle(run)
    run.sort(key=lambda line: int(line.split()[0][1:]))  # contiguous queries, lines shuffled within each
    (tmp_path / "run.txt").write_text("\n".join(run) + "\n")
    (tmp_path / "gold.txt").write_text("".join(f"q{q} 0 {d} {g}\n" for (q, d), g in gold.items()))
    qrels = read_qrels(tmp_path / "gold.txt")
    judged, general = read_run(tmp_path / "run.txt", against=qrels), _general(str(tmp_path / "run.txt"))
    assert isinstance(judged, DeferredRun)
    for options in ({}, {"depth": 50}, {"judged_only": True}):
        a = score(judged, qrels, metrics=METRICS, allow_partial=True, **options)
        b = score(general, qrels, metrics=METRICS, allow_partial=True, **options)
        for metric in a.means:
            assert np.array_equal(a.task_score.evaluation.per_query[metric], b.task_score.evaluation.per_query[metric], equal_nan=True)


def test_compare_and_report_never_read_the_rows(tmp_path, monkeypatch):
    """Runs scored side by side (compare, report: score_many and ScoredRun's renaming) keep their rows unread."""
    from evalkit import api
    from evalkit.api.report import write_report

    run_a, gold = _files(tmp_path, 5)
    run_b = tmp_path / "b.txt"
    run_b.write_text(open(run_a).read().replace(" tag", " other"))
    assert isinstance(read_run(run_a, against=read_qrels(gold)), DeferredRun)
    asked: list[str] = []
    read_rows = DeferredRun.__getattr__
    monkeypatch.setattr(DeferredRun, "__getattr__", lambda self, name: asked.append(name) or read_rows(self, name))
    compared = api.compare(gold, run_a, str(run_b), permutations=50, bootstrap=50, allow_partial=True)
    write_report(gold, run_a, str(run_b), out=tmp_path / "report.md", permutations=50, allow_partial=True)
    assert asked == [] and len(compared.to_pandas()) == 1


def test_crafted_ids_that_share_their_first_bytes_stay_linear(tmp_path):
    """One query of 300,000 documents whose ids share their length and first 8 bytes (the bytes the judged reading
    orders by first): the repeat check hashes every byte (seeded), so the read stays linear; scored as the general
    reader scores it (a quadratic probe would take minutes)."""
    import subprocess
    import sys

    run, gold = tmp_path / "run.txt", tmp_path / "gold.txt"
    run.write_text("".join(f"q1 Q0 aaaaaaaa{i:07d} 1 {i % 7}.5 r\n" for i in range(300_000)))
    gold.write_text("".join(f"q1 0 aaaaaaaa{i:07d} {i % 3}\n" for i in range(0, 300_000, 997)))
    code = ("import sys; from evalkit.io.reading import read_qrels, read_run; from evalkit.io.prejudged import DeferredRun;"
            "q = read_qrels(sys.argv[2]); r = read_run(sys.argv[1], against=q); assert isinstance(r, DeferredRun)")
    subprocess.run([sys.executable, "-c", code, str(run), str(gold)], check=True, timeout=60)
    qrels = read_qrels(gold)
    a = score(read_run(run, against=qrels), qrels, metrics=METRICS)
    b = score(_general(str(run)), qrels, metrics=METRICS)
    assert a.means == b.means


@pytest.mark.parametrize("threads", [1, 2])
def test_the_judged_pass_knows_plain_text_as_text_marks_does(threads, monkeypatch):
    """A CR or a byte from 0x80 at any place around the lexer's 64-byte windows (in an id, a blank, a comment, a long
    line): the pass's ``plain`` mark is what text_marks finds, and text_marks of bytes read ahead answers the same."""
    lines = [f"q{i // 7} Q0 d{i} {i} 0.{i} t" for i in range(60)] + ["# " + "x" * 150, f"q9 Q0 {'y' * 130} 1 1 t"]
    data = ("\n".join(lines) + "\n").encode()
    args = (["q0", "q3"], np.array([0, 1], dtype=np.int64), np.array([0, 1], dtype=np.int64), ["d1", "d22"], kernels.SEED, threads)
    assert kernels.native.judge_run(data, *args)[-1] is True
    gold = b"q0 0 d1 1\nq3 0 d22 1\n"
    for where in range(0, len(data), 5):
        for odd in (b"\r", "é".encode(), b"\x80"):
            changed = data[:where] + odd + data[where:]
            found = kernels.native.judge_run(changed, *args)
            if found is not None:
                assert found[-1] is False, (where, odd)
            table = kernels.read_table_ahead(gold, kernels.TREC_QRELS, register=False)
            kernels.judge_run_ahead(changed, table)
            assert kernels.text_marks(changed) == (changed.find(b"\r"), changed.isascii())
            kernels._JUDGED_AHEAD.pop(id(changed), None)
    table = kernels.read_table_ahead(gold, kernels.TREC_QRELS, register=False)
    kernels.judge_run_ahead(data, table)
    monkeypatch.setattr(kernels.native, "text_marks", None)  # plain: known from the judged pass, no pass of its own
    assert kernels.text_marks(data) == (-1, True)
    kernels._JUDGED_AHEAD.pop(id(data), None)
