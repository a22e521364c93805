"""All-pairs statistics in bounded memory: the block size changes nothing, and a 200-run board fits in 2 GiB.

Every procedure that works over all k (k - 1) / 2 pairs does it a block of
pairs at a time; a block of one pair and one block of all pairs give the same
counts, p-values, intervals, letters, to the bit.
"""
from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from evalkit.stats.allpairs import PROCEDURES, AllPairsOptions, all_pairs
from evalkit.stats.paired import PairedValues

MEMORY_LIMIT = 2 << 30


def board_matrix(k: int = 9, n: int = 40, seed: int = 3) -> np.ndarray:
    """Discrete per-query scores (reciprocal ranks, many ties), runs of graded skill."""
    rng = np.random.default_rng(seed)
    ranks = rng.integers(1, 8, (k, n)).astype(np.float64)
    hits = rng.random((k, n)) < np.linspace(0.3, 0.8, k)[:, None]
    return np.where(hits, 1.0 / ranks, 0.0)


def with_block(monkeypatch, cells: int) -> None:
    """Every module that works over the pairs a block at a time, with blocks of ``cells``."""
    from evalkit.stats import randomization, randomised_tukey, studentized_range

    for module in (randomization, randomised_tukey, studentized_range):
        monkeypatch.setattr(module, "CELLS_PER_BLOCK", cells)


@pytest.mark.parametrize("procedure", [p for p in PROCEDURES if p != "mcnemar"] + ["mcnemar"])
def test_block_size_changes_nothing(procedure, monkeypatch):
    matrix = board_matrix()
    if procedure == "mcnemar":
        matrix = (matrix == 1.0).astype(np.float64)
    values = PairedValues("rr", [f"r{i}" for i in range(len(matrix))], [f"q{j}" for j in range(matrix.shape[1])], matrix)
    options = AllPairsOptions(procedure, permutations=999, bootstrap=999, seed=7)
    binary = values if procedure == "mcnemar" else None
    whole = json.dumps(all_pairs(values, options, binary).as_dict())
    for cells in (1, 5, 97):
        with_block(monkeypatch, cells)
        assert json.dumps(all_pairs(values, options, binary).as_dict()) == whole, (procedure, cells)


def test_randomised_tukey_counts_by_block(monkeypatch):
    from evalkit.stats import randomised_tukey

    result = randomised_tukey.permute(board_matrix(14, 30), 500, 11)
    whole = randomised_tukey.pair_counts(result)
    for cells in (1, 499, 500, 501, 3000):
        monkeypatch.setattr(randomised_tukey, "CELLS_PER_BLOCK", cells)
        blocked = randomised_tukey.pair_counts(result)
        assert all(np.array_equal(a, b) for a, b in zip(whole, blocked)), cells


@pytest.mark.parametrize("df", [3.0, 57.0, 900.0, 6000.0, 30_000.0])
def test_ptukey_by_block(df, monkeypatch):
    from evalkit.stats import studentized_range

    q = np.concatenate([np.linspace(0, 8, 333), [np.inf, np.nan, -1.0]])
    whole = studentized_range.ptukey_upper(q, 17, df)
    monkeypatch.setattr(studentized_range, "CELLS_PER_BLOCK", 1)
    assert np.array_equal(studentized_range.ptukey_upper(q, 17, df), whole, equal_nan=True)


def test_randomization_all_pairs_by_block(monkeypatch):
    from evalkit.stats import randomization

    matrix = board_matrix(12, 60)
    first, second = np.triu_indices(len(matrix), 1)
    whole = randomization.randomization_tests_query_signs(matrix[first] - matrix[second], 2000, 5)
    for cells in (1, 61, 600):
        monkeypatch.setattr(randomization, "CELLS_PER_BLOCK", cells)
        blocked = randomization.randomization_all_pairs(matrix, first, second, 2000, 5)
        assert [r.p_value for r in blocked] == [r.p_value for r in whole], cells


def write_board(folder: Path, runs: int, queries: int, depth: int = 10) -> None:
    rng = np.random.default_rng(1)
    (folder / "qrels.txt").write_text("".join(f"q{q} 0 d{q}_rel 1\n" for q in range(queries)))
    (folder / "runs").mkdir()
    for r in range(runs):
        where = rng.integers(0, depth + 4, queries)
        lines = []
        for q in range(queries):
            docs = [f"d{q}_rel" if j == where[q] else f"d{q}_{j}" for j in range(depth)]
            lines += [f"q{q} Q0 {d} {i + 1} {depth - i} run{r}\n" for i, d in enumerate(docs)]
        (folder / "runs" / f"run{r:03d}.trec").write_text("".join(lines))


def test_200_runs_leaderboard_under_2_gib(tmp_path):
    """200 runs x 30 queries, the default B = 10,000 permutations and resamples, under RLIMIT_AS = 2 GiB (it took 4.7 GB)."""
    write_board(tmp_path, 200, 30)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

    done = subprocess.run([sys.executable, "-m", "evalkit", "leaderboard", "runs", "--gold", "qrels.txt", "-o", "json"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, preexec_fn=limit)
    assert done.returncode == 0, done.stderr[-500:]
    board = json.loads(done.stdout)
    assert len(board["all_pairs"]["pairs"]) == 200 * 199 // 2


def test_a_long_all_pairs_comparison_shows_its_replicates(monkeypatch, capsys):
    """The bootstrap resamples and the randomised Tukey replicates advance one progress line per tenth (in a log: plain
    lines), counted in replicates; the result is the one without progress."""
    from evalkit.core import progress as progress_module
    from evalkit.stats.allpairs import AllPairsOptions, all_pairs
    from evalkit.stats.paired import PairedValues

    matrix = board_matrix(30, 400)
    values = PairedValues("ndcg", [f"r{i}" for i in range(30)], [f"q{j}" for j in range(400)], matrix)
    options = AllPairsOptions(permutations=3000, bootstrap=1000)
    quiet = all_pairs(values, options)
    monkeypatch.setenv(progress_module.ENV, "plain")
    monkeypatch.setattr(progress_module, "MIN_SECONDS", 0.0)
    capsys.readouterr()
    shown = all_pairs(values, options)
    err = capsys.readouterr().err
    assert "[evalkit] all pairs of 30 runs (randomised-tukey): " in err and "/4,000 replicate" in err, err
    assert "done, 4,000/4,000 replicate (100%)" in err, err
    assert shown.as_dict() == quiet.as_dict()
