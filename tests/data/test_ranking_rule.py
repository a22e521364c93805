"""The one ranking rule (evalkit.data.ranking.reference_order) and every fast path that follows it: the numpy sort of
rank_run, the compiled readers' ranks_before (native/csrc/judge.h, a run read against its gold), and BM25's top k.
Changing the rule means changing ranking.py and judge.h; this test says whether they still agree."""
from __future__ import annotations

import random

import numpy as np
import pytest

import evalkit
from evalkit.data import Qrels, Run
from evalkit.data.ranking import id_positions, order_of, rank_run, reference_order
from evalkit.native import kernels

# ids whose byte order and "natural" order differ, prefixes of each other, and non-ASCII ones
ASCII_IDS = ["d1", "d10", "d2", "D2", "a", "ab", "b", "zz", "10", "9", "x-1", "x_1"]
IDS = [*ASCII_IDS, "é", "ü1"]


def random_rows(seed: int, ids: list[str] = IDS) -> dict[str, list[tuple[str, float]]]:
    """Queries of distinct doc ids with many equal scores, written in a shuffled order."""
    rng = random.Random(seed)
    queries = {}
    for q in range(12):
        docs = rng.sample(ids, rng.randint(1, len(ids)))
        queries[f"q{q}"] = [(doc, float(rng.choice([0.5, 1.0, 1.0, 2.0, -1.0]))) for doc in docs]
    return queries


def gold_of(queries: dict, seed: int) -> dict[str, dict[str, int]]:
    rng = random.Random(seed + 1)
    return {q: {doc: rng.choice([1, 2]) for doc, _ in rng.sample(rows, min(3, len(rows)))} for q, rows in queries.items()}


def reference_ap_rr(queries: dict, gold: dict) -> tuple[float, float]:
    """Mean AP and RR of the rows ranked by reference_order, written out by hand."""
    aps, rrs = [], []
    for q, judged in gold.items():
        ranked = reference_order(queries.get(q, []))
        hits, precision_sum, rr = 0, 0.0, 0.0
        for position, doc in enumerate(ranked, start=1):
            if judged.get(doc, 0) > 0:
                hits += 1
                precision_sum += hits / position
                rr = rr or 1 / position
        aps.append(precision_sum / sum(1 for g in judged.values() if g > 0))
        rrs.append(rr)
    return float(np.mean(aps)), float(np.mean(rrs))


@pytest.mark.parametrize("seed", range(8))
def test_rank_run_is_the_reference_order(seed):
    queries = random_rows(seed)
    run = Run.from_scores({q: dict(rows) for q, rows in queries.items()})
    ranked = rank_run(run)
    got: dict[str, list[str]] = {}
    for qi, di in zip(ranked.qidx.tolist(), ranked.didx.tolist()):
        got.setdefault(str(run.query_ids[qi]), []).append(str(run.doc_ids[di]))
    assert got == {q: reference_order(rows) for q, rows in queries.items()}


@pytest.mark.parametrize("seed", range(8))
def test_a_run_read_from_its_file_follows_the_rule(tmp_path, seed):
    """The general reader and the reading against the gold (the C kernels' ranks_before when built) score the
    reference order, whatever the order of a query's lines and its rank column (ASCII ids, a query's lines together:
    the file is judged as it is read)."""
    from evalkit.io.prejudged import DeferredRun

    queries, rng = random_rows(seed, ASCII_IDS), random.Random(seed)
    lines = []
    for q, rows in queries.items():  # each query's rows in a shuffled order (a query's rows together: judged as read)
        shuffled = rng.sample(rows, len(rows))
        lines += [f"{q} Q0 {doc} {rank} {score} t" for rank, (doc, score) in enumerate(shuffled, start=1)]
    path = tmp_path / "run.trec"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    gold = gold_of(queries, seed)
    qrels = Qrels.from_dict(gold)
    ap, rr = reference_ap_rr(queries, gold)
    for against in (None, qrels):
        run = evalkit.read_run(path, against=against)
        assert isinstance(run, DeferredRun) == (against is not None and kernels.native is not None)
        result = evalkit.score(run, qrels, metrics=["AP", "RR"], task="trec")
        assert result.means["MAP"] == pytest.approx(ap, abs=1e-12), against
        assert result.means["MRR"] == pytest.approx(rr, abs=1e-12), against


@pytest.mark.parametrize("seed", range(8))
def test_bm25_top_k_is_the_reference_order(seed):
    from evalkit.systems.bm25_index import top_k

    queries = random_rows(seed)
    for rows in queries.values():
        ids = [doc for doc, _ in rows]
        scores = np.array([score for _, score in rows])
        for k in (1, 3, len(rows)):
            docs, _ = top_k(scores, np.arange(len(ids)), k, id_positions(ids))
            expected = [doc for doc in reference_order(rows) if dict(rows)[doc] != 0][:k]
            assert [ids[d] for d in docs] == expected


def test_order_of_is_the_reference_order():
    rows = [("b", 1.0), ("a", 1.0), ("c", 2.0), ("é", 1.0), ("B", 1.0)]
    ids, scores = [d for d, _ in rows], np.array([s for _, s in rows])
    assert [ids[i] for i in order_of(scores, id_positions(ids))] == reference_order(rows) == ["c", "é", "b", "a", "B"]
