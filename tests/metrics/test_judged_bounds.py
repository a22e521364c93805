"""Judged@k (ir_measures' definition) and every metric's bounds with unjudged documents as non-relevant / relevant."""
from __future__ import annotations

import numpy as np
import pytest

import evalkit
from support.helpers import CT4B, GOLD_4B, shared_or_skip
from evalkit.data import Qrels, Run
from evalkit.metrics.judgments import bounds, unjudged_as_relevant

METRICS = "judged@2 judged@10 judged p@2 success@2 mrr map recall@10 ndcg@10 bpref r-prec"


def evaluation_of(run, gold, metrics=METRICS, **options):
    return evalkit.score(run, gold, metrics=metrics, **options).task_score.evaluation


def test_judged_by_hand():
    gold = {"q1": {"a": 1, "b": 0, "c": -1}, "q2": {"d": 1}, "q3": {"e": 1}}
    run = {"q1": {"a": 3, "x": 2, "b": 1, "c": 0.5}, "q2": {"y": 1}}
    values = evalkit.score(run, gold, metrics="judged@2 judged@10 judged unj@2", allow_partial=True).per_query
    # q1: a judged, x unjudged, b judged, c negative grade = unjudged; q2: nothing judged; q3: not answered
    assert values.loc["q1"].tolist() == [0.5, 0.5, 0.5, 0.5]
    assert values.loc["q2", "Judged@10"] == 0.0 and values.loc["q3", "Judged@2"] == 0.0
    assert evalkit.score(run, gold, metrics="judged@10", allow_partial=True).means["Judged@10"] == pytest.approx(1 / 6)


def test_judged_equals_ir_measures():
    ir_measures = pytest.importorskip("ir_measures")
    rng = np.random.default_rng(5)
    gold = {f"q{i}": {f"d{j}": int(rng.integers(0, 3)) for j in rng.choice(40, 8, replace=False)} for i in range(30)}
    run = {f"q{i}": {f"d{j}": float(s) for j, s in zip(rng.choice(40, int(rng.integers(1, 25)), replace=False), rng.permutation(25))}
           for i in range(30)}
    ours = evalkit.score(run, gold, metrics="judged@5 judged@10 judged@20 judged", missing="skip").per_query
    for name in ("Judged@5", "Judged@10", "Judged@20", "Judged"):
        theirs = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.parse_measure(name)], gold, run)}
        assert ours[name].to_dict() == pytest.approx(theirs, abs=1e-12), name


@pytest.mark.realdata
def test_judged_equals_ir_measures_on_real_runs():
    ir_measures = pytest.importorskip("ir_measures")
    gold_path = shared_or_skip(GOLD_4B["dev"])
    qrels = evalkit.read_qrels(gold_path)
    for name in ("E5_base_setup_dev_TOP100.tsv", "predictions_BM25_dev_TOP10.tsv"):
        run = evalkit.read_run(CT4B / "runs" / "airwaves" / name)
        ours = evalkit.score(run, qrels, metrics="judged@5 judged@50", missing="skip").per_query
        theirs = ir_measures.iter_calc([ir_measures.Judged @ 5, ir_measures.Judged @ 50], qrels.to_dict(), run.to_scores())
        for metric in theirs:
            assert ours.loc[metric.query_id, str(metric.measure)] == pytest.approx(metric.value, abs=1e-12)


def test_bounds_by_hand():
    gold = Qrels.from_dict({"q1": {"a": 1, "b": 0, "c": -1}, "q2": {"d": 1}, "q3": {"e": 1}})
    run = Run.from_scores({"q1": {"a": 3, "x": 2, "b": 1, "c": 0.5}, "q2": {"y": 1, "d": 0.5}})
    found = bounds(run, gold, evaluation_of(run, gold, allow_partial=True))
    assert found.added == 3  # q1: x and c (negative grade), q2: y
    upper = dict(zip(found.upper.query_ids.tolist(), found.upper.per_query["MAP"]))
    assert upper == pytest.approx({"q1": (1 + 1 + 3 / 4) / 3, "q2": 1.0, "q3": 0.0})  # below the lower value 1.0 for q1
    means = found.means()
    assert means["P@2"] == pytest.approx((1 / 3, 2 / 3)) and means["Judged@2"] == pytest.approx((1 / 3, 2 / 3))
    assert means["MRR"] == pytest.approx((0.5, 2 / 3))


def test_bounds_equal_scoring_augmented_dict_qrels():
    """The upper values equal an ordinary score against qrels augmented by hand (another code path)."""
    rng = np.random.default_rng(11)
    gold = {f"q{i}": {f"d{j}": int(rng.integers(-1, 3)) for j in rng.choice(30, 6, replace=False)} for i in range(25)}
    run = {f"q{i}": {f"d{j}": float(s) for j, s in zip(rng.choice(30, 12, replace=False), rng.permutation(12))}
           for i in range(20)}
    for depth in (None, 5):
        options = {"allow_partial": True, "depth": depth}
        evaluation = evaluation_of(run, gold, **options)
        found = bounds(Run.from_scores(run), Qrels.from_dict(gold), evaluation)
        kept = {q: dict(sorted(docs.items(), key=lambda x: -x[1])[: depth or None]) for q, docs in run.items()}
        augmented = {q: {d: g for d, g in docs.items() if g >= 0} for q, docs in gold.items()}
        for q, docs in kept.items():
            for d in docs:
                augmented[q].setdefault(d, 1)
        expected = evaluation_of(run, augmented, **options)
        for metric in evaluation.metrics:
            assert np.allclose(found.upper.values_for(expected.query_ids.tolist(), metric), expected.per_query[metric.label])
        for label, (low, high) in found.means().items():
            if label.startswith(("P@", "Success", "MRR", "Judged")):
                assert high >= low - 1e-12, label


@pytest.mark.realdata
def test_fully_judged_run_has_equal_bounds_and_real_runs_are_judged_to_one():
    gold = {"q1": {"a": 1, "b": 0}, "q2": {"c": 2, "d": 0}}
    run = {"q1": {"a": 1.0, "b": 0.5}, "q2": {"d": 1.0, "c": 0.5}}
    found = bounds(Run.from_scores(run), Qrels.from_dict(gold), evaluation_of(run, gold))
    assert found.added == 0 and all(low == high for low, high in found.means().values())

    gold_path = shared_or_skip(GOLD_4B["dev"])
    qrels = evalkit.read_qrels(gold_path)
    real = evalkit.read_run(CT4B / "runs" / "airwaves" / "predictions_BM25_dev_TOP10.tsv")
    found = bounds(real, qrels, evaluation_of(real, qrels, metrics="judged@10 mrr@5 success@10"))
    low, high = found.means()["Judged@10"]
    assert low < 0.1 and high == pytest.approx(1.0)  # one judged paper per tweet: nearly everything retrieved is unjudged
    assert found.means()["MRR@5"][1] == pytest.approx(1.0)  # every rank-1 paper counted relevant
    augmented, added = unjudged_as_relevant(real, qrels, found.lower)
    assert added == augmented.n_rows - qrels.n_rows
