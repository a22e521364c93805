"""The compiled kernels of evalkit._native and their pure-Python twins give the same results.

(The id kernels are tested in tests/test_ids.py on both paths.)"""
from __future__ import annotations

import numpy as np
import pytest

from evalkit import kernels, ranking
from evalkit.formats import tables

needs_native = pytest.mark.skipif(kernels.native is None, reason="evalkit._native was not built (no C compiler at install time)")


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


@needs_native
def test_blank_profile_twins_agree():
    """The one-pass C scan of blanks (evalkit._native) and its pure-Python twin give the same profile."""
    rng = np.random.default_rng(2)
    alphabet = np.frombuffer(b"  \t\n\r\x0b\x0cab#", dtype=np.uint8)
    samples = [b"", b" ", b"\t", b"a b\n", b"a  b\n", b"a b \n", b"\ta\tb", b"a\tb\t", b"a\n b", b"a b\nc\td"]
    samples += [alphabet[rng.integers(0, len(alphabet), size=int(rng.integers(1, 12)))].tobytes() for _ in range(3000)]
    # longer lines, mostly letters, so that a gap or a rare blank falls anywhere in or across 16-byte blocks
    sparse = np.frombuffer(b"a" * 40 + b" " * 6 + b"\n" * 3 + b"\t\r\x0b\x0c", dtype=np.uint8)
    samples += [sparse[rng.integers(0, len(sparse), size=int(rng.integers(14, 90)))].tobytes() for _ in range(6000)]
    samples += [b"ab cd ef\n" * k + tail for k in (1, 2, 3, 7) for tail in (b"", b" ", b"x ", b"\t", b"x\n y", b"x  y", b"x\r")]
    native = kernels.native
    try:
        for data in samples:
            compiled = native.blank_profile(data)
            kernels.native = None
            assert tables._blank_profile(data) == compiled, data
            kernels.native = native
    finally:
        kernels.native = native


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
@pytest.mark.parametrize("depth", [None, 1, 7])
def test_judged_rows_twins_agree(depth, monkeypatch):
    """The judge's one-pass C scan and its numpy twin keep the same rows: evaluated queries, first positions, depth,
    judgments of the row's own query, grades >= 0 (negative ones unjudged)."""
    from evalkit.data import Qrels, Run
    from evalkit.evaluation import judge, match_queries

    rng = np.random.default_rng(depth or 0)
    qids = [f"q{q}" for q in rng.integers(0, 60, 3000)]
    run = Run.from_rows(qids, [f"d{d}" for d in rng.integers(0, 150, 3000)], rng.integers(0, 20, 3000) / 4.0)  # ties, repeats
    judged = {(f"q{q}", f"d{d}"): float(g) for q, d, g in zip(rng.integers(0, 70, 900), rng.integers(0, 200, 900), rng.integers(-1, 3, 900))}
    qrels = Qrels.from_rows([q for q, _ in judged], [d for _, d in judged], list(judged.values()))
    sets = match_queries(run, qrels)
    evaluated = np.flatnonzero(rng.random(len(sets.gold)) < 0.8)  # some gold queries not evaluated

    def rows():
        j = judge(run, qrels, sets, evaluated, depth=depth)
        return j.qpos.tolist(), j.rank.tolist(), j.grade.tolist(), j.num_ret.tolist()

    compiled = rows()
    assert len(compiled[0]) > (0 if depth == 1 else 10)
    monkeypatch.setattr(kernels, "native", None)
    assert rows() == compiled
