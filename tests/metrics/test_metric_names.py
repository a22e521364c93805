"""Measure names from trec_eval, ir_measures and ranx, and the trec_eval measures evalkit added.

Each new measure is checked on hand-computed cases and against pytrec_eval
(trec_eval 9.0.x inside) or ranx where they agree; where they differ on
purpose the difference is asserted.
"""
from __future__ import annotations

import math
import random

import numpy as np
import pytest

from evalkit.data import Qrels, Run
from evalkit.core.errors import UsageError
from evalkit.metrics.evaluation import evaluate
from evalkit.metrics import parse_metric, parse_metrics

NAMES = {
    # trec_eval output names and -m arguments
    "ndcg_cut_10": "nDCG@10", "P_5": "P@5", "recip_rank": "MRR", "map_cut_100": "MAP@100", "Rprec": "R-Prec",
    "success_10": "Success@10", "recall_1000": "Recall@1000", "set_recall": "Recall", "ndcg": "nDCG", "map": "MAP",
    "bpref": "Bpref", "P.5": "P@5", "ndcg_cut.10": "nDCG@10", "num_ret": "NumRet", "num_rel": "NumRel",
    "num_rel_ret": "NumRelRet", "num_q": "NumQ", "gm_map": "GMAP", "gm_bpref": "GM-Bpref", "set_P": "P", "set_F": "F1",
    "set_map": "SetAP", "set_relative_P": "RelP", "relative_P_5": "RelP@5", "iprec_at_recall_0.10": "IPrec@0.1",
    "iprec_at_recall..20": "IPrec@0.2", "11pt_avg": "11pt_avg", "unj_10": "Unjudged@10",
    "num_nonrel_judged_ret": "NumNonRelJudgedRet",
    # ir_measures
    "nDCG@10": "nDCG@10", "RR@10": "MRR@10", "AP": "MAP", "AP@100": "MAP@100", "R@1000": "Recall@1000", "P@5": "P@5",
    "Success@10": "Success@10", "Bpref": "Bpref", "RR(rel=2)": "MRR(rel=2)", "P(rel=2)@5": "P(rel=2)@5",
    "AP(rel=2)": "MAP(rel=2)", "R(rel=3)@100": "Recall(rel=3)@100", "NumRet": "NumRet", "NumRelRet": "NumRelRet",
    "SetP": "P", "SetR": "Recall", "SetF": "F1", "SetAP": "SetAP", "IPrec@0.5": "IPrec@0.5", "NumQ": "NumQ",
    # ranx
    "mrr@10": "MRR@10", "precision@5": "P@5", "hit_rate@10": "Success@10", "map@100": "MAP@100", "ndcg@10": "nDCG@10",
    "recall@100": "Recall@100", "r-precision": "R-Prec", "f1@5": "F1@5", "mrr": "MRR",
    # evalkit's own labels read back
    "MRR(rel=2)@10": "MRR(rel=2)@10", "R-Prec": "R-Prec", "GM-Bpref": "GM-Bpref", "CC-Bpref": "CC-Bpref",
}


@pytest.mark.parametrize("typed, canonical", NAMES.items(), ids=list(NAMES))
def test_names_people_type_map_to_canonical_labels(typed, canonical):
    metric = parse_metric(typed)
    assert metric.label == canonical
    assert parse_metric(metric.label) == metric  # every label reads back


def test_trec_eval_lists_and_measure_sets_expand():
    assert [m.label for m in parse_metrics("P.5,10 ndcg_cut.5,10, mrr@5")] == ["P@5", "P@10", "nDCG@5", "nDCG@10", "MRR@5"]
    assert [m.label for m in parse_metrics("iprec_at_recall..10,.20")] == ["IPrec@0.1", "IPrec@0.2"]
    assert [m.trec_name() for m in parse_metrics("trec_eval")][:10] == [
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank"]
    assert parse_metrics("official") == parse_metrics("trec_eval")
    assert len(parse_metrics("all_trec")) == 100  # trec_eval 10's -m all_trec, every measure
    assert parse_metrics("P(rel=2,)@5") == parse_metrics("P( rel = 2 )@5")


@pytest.mark.parametrize("typed, message", [
    ("nosuch@3", "unknown metric 'nosuch' ("),
    ("ndcg_cutt_10", "unknown metric 'ndcg_cutt_10' (close matches: ndcg_cut"),
    ("ndcg_burges@10", "unknown metric 'ndcg_burges' (close matches: "),
    ("hits@10", "metric name 'hits' is ambiguous: ranx 'hits@k' counts"),
    ("hit@1", "metric name 'hit' is ambiguous"),
    ("ndcg_cut", "metric ndcg_cut needs a cutoff, e.g. nDCG@10"),
    ("IPrec", "metric IPrec needs a cutoff, e.g. IPrec@0.5"),
    ("IPrec@1.5", "the recall level must be between 0 and 1"),
    ("set_P@5", "metric P takes no cutoff ('set_P@5')"),
    ("bpref@10", "metric Bpref takes no cutoff"),
    ("P_0", "the cutoff k must be a positive integer"),
    ("P@2.5", "the cutoff k must be a positive integer"),
    ("RR(foo=2)", "parameter 'foo' is not supported by MRR (supported: rel)"),
    ("nDCG(rel=2)@10", "parameter 'rel' is not supported by nDCG (supported: level=gain pairs)"),
    ("RR(rel=nan)", "parameter rel 'nan' is not a finite number"),
    ("RR(rel)", "write parameters as name=value"),
    ("mrr@@5", "cannot read metric"),
    ("a-" * 200, "is longer than 200 characters"),
])
def test_bad_names_are_one_line_usage_errors(typed, message):
    with pytest.raises(UsageError) as info:
        parse_metric(typed)
    assert message in str(info.value) and "\n" not in str(info.value)


def pq(run: Run, qrels: Qrels, names: str, **options) -> dict[str, dict[str, float]]:
    ev = evaluate(run, qrels, parse_metrics(names), allow_partial=True, **options)
    return {label: dict(zip(ev.query_ids.tolist(), values.tolist())) for label, values in ev.per_query.items()}


def test_per_measure_relevance_level_is_that_of_the_whole_evaluation():
    rng = random.Random(3)
    judgments = {f"q{q}": {f"d{d}": rng.randint(0, 3) for d in rng.sample(range(40), 15)} for q in range(20)}
    run = Run.from_scores({q: {f"d{d}": rng.random() for d in rng.sample(range(40), 25)} for q in judgments})
    qrels = Qrels.from_dict(judgments)
    names = "RR P@5 AP Recall@10 Bpref R-Prec NumRel IPrec@0.5 F1"
    at_two = pq(run, qrels, names, relevance_level=2)
    with_rel = pq(run, qrels, " ".join(n.replace("@", "(rel=2)@") if "@" in n else f"{n}(rel=2)" for n in names.split()))
    for label, values in at_two.items():
        assert with_rel[label.replace("@", "(rel=2)@") if "@" in label else f"{label}(rel=2)"] == values
    assert pq(run, qrels, "RR")["MRR"] != at_two["MRR"]


def small_case():
    qrels = Qrels.from_dict({"q1": {"a": 1, "b": 0, "c": 2, "d": 1, "e": -1}, "q2": {"f": 0}, "q3": {"g": 1}})
    run = Run.from_scores({"q1": {"a": 0.9, "x": 0.8, "c": 0.7, "b": 0.6, "e": 0.5}, "q2": {"f": 1.0, "y": 0.5}})
    return run, qrels


def test_counts_are_summed_and_gm_map_floors_zero():
    run, qrels = small_case()
    ev = evaluate(run, qrels, parse_metrics("num_q num_ret num_rel num_rel_ret num_nonrel_judged_ret map gm_map"), allow_partial=True)
    assert ev.per_query["NumRet"].tolist() == [5, 2, 0] and ev.per_query["NumRel"].tolist() == [3, 0, 1]
    assert ev.per_query["NumRelRet"].tolist() == [2, 0, 0] and ev.per_query["NumNonRelJudgedRet"].tolist() == [1, 1, 0]
    assert [ev.mean(m) for m in ("NumQ", "NumRet", "NumRel", "NumRelRet")] == [3, 7, 4, 2]
    ap = (1 + 2 / 3) / 3
    assert ev.mean("MAP") == pytest.approx(ap / 3)
    assert ev.mean("GMAP") == pytest.approx(math.exp((math.log(ap) + 2 * math.log(1e-5)) / 3))


def test_set_measures_relative_precision_and_unjudged_by_hand():
    run, qrels = small_case()
    values = pq(run, qrels, "set_P set_recall set_F set_map set_relative_P relative_P_2 f1@2 unj_5 unj_1", missing="skip")
    assert values["P"]["q1"] == 2 / 5 and values["Recall"]["q1"] == 2 / 3
    assert values["F1"]["q1"] == pytest.approx(2 * 2 / (5 + 3)) and values["F1"]["q2"] == 0
    assert values["SetAP"]["q1"] == pytest.approx(4 / 15) and values["RelP"]["q1"] == pytest.approx(2 / 3)
    assert values["RelP@2"]["q1"] == 1 / 2 and values["F1@2"]["q1"] == pytest.approx(2 * 1 / (2 + 3))
    assert values["Unjudged@5"]["q1"] == 2 / 5 and values["Unjudged@5"]["q2"] == 1 / 5  # x, and e (grade -1)
    assert values["Unjudged@1"]["q1"] == 0


def test_iprec_rounds_like_trec_eval_10_not_like_pytrec_eval():
    """R = 4, recall level 0.3: trec_eval 10 takes the lround(1.2) = 1st relevant document, trec_eval 9.x
    (inside pytrec_eval) the (long)(1.2 + 0.9) = 2nd; values checked against the trec_eval 10 binary."""
    import pytrec_eval

    judgments = {"q": {"a": 1, "b": 1, "c": 1, "d": 1, "e": 0}}
    scores = {"q": {"a": 5, "x": 4, "b": 3, "y": 2, "c": 1}}
    ours = pq(Run.from_scores(scores), Qrels.from_dict(judgments), "iprec_at_recall.0,.3,.4,.7,.9 11pt_avg")
    assert [ours[f"IPrec@{x}"]["q"] for x in (0.0, 0.3, 0.4, 0.7, 0.9)] == [1.0, 1.0, 2 / 3, 0.6, 0.0]
    assert ours["11pt_avg"]["q"] == pytest.approx((4 * 1 + 3 * 2 / 3 + 2 * 0.6) / 11)
    theirs = pytrec_eval.RelevanceEvaluator(judgments, {"iprec_at_recall"}).evaluate(scores)["q"]
    assert theirs["iprec_at_recall_0.30"] == pytest.approx(2 / 3)  # the documented difference


def test_new_measures_match_pytrec_eval_where_trec_eval_agrees():
    import pytrec_eval

    rng = random.Random(11)
    judgments = {f"q{q}": {f"d{d}": rng.randint(-1, 2) for d in rng.sample(range(50), 20)} for q in range(25)}
    judgments["q0"] = {d: 0 for d in judgments["q0"]}  # nothing relevant
    scores = {q: {f"d{d}": rng.randint(0, 8) / 2 for d in rng.sample(range(70), rng.randint(1, 40))} for q in judgments}
    names = {"num_ret": "NumRet", "num_rel": "NumRel", "num_rel_ret": "NumRelRet", "set_P": "P", "set_recall": "Recall",
             "set_F": "F1", "set_map": "SetAP", "set_relative_P": "RelP", "relative_P_5": "RelP@5", "relative_P_30": "RelP@30",
             "num_nonrel_judged_ret": "NumNonRelJudgedRet", "ndcg": "nDCG", "iprec_at_recall_0.00": "IPrec@0.0",
             "iprec_at_recall_1.00": "IPrec@1.0", "iprec_at_recall_0.50": "IPrec@0.5"}
    ours = pq(Run.from_scores(scores), Qrels.from_dict(judgments), " ".join(names))
    measures = {"num_ret", "num_rel", "num_rel_ret", "set_P", "set_recall", "set_F", "set_map", "set_relative_P", "relative_P.5,30",
                "num_nonrel_judged_ret", "ndcg", "iprec_at_recall.0,0.5,1", "gm_map"}
    theirs = pytrec_eval.RelevanceEvaluator(judgments, measures).evaluate(scores)
    for trec, label in names.items():
        for query, values in theirs.items():
            assert ours[label][query] == pytest.approx(values[trec], abs=1e-12), (trec, query)
    ev = evaluate(Run.from_scores(scores), Qrels.from_dict(judgments), parse_metrics("gm_map"))
    gm = pytrec_eval.compute_aggregated_measure("gm_map", [v["gm_map"] for v in theirs.values()])
    assert ev.mean("GMAP") == pytest.approx(gm, rel=1e-12)


def test_ranx_f1_and_hits_per_query():
    from ranx import Qrels as RQrels, Run as RRun, evaluate as revaluate

    rng = random.Random(5)
    judgments = {f"q{q}": {f"d{d}": 1 for d in rng.sample(range(30), 4)} for q in range(10)}
    scores = {q: {f"d{d}": float(s) for s, d in enumerate(rng.sample(range(30), 12))} for q in judgments}
    ours = pq(Run.from_scores(scores), Qrels.from_dict(judgments), "f1@5 num_rel_ret@5 success@5")
    rq, rr = RQrels.from_dict(judgments), RRun.from_dict(scores)
    for name, label in (("f1@5", "F1@5"), ("hits@5", "NumRelRet@5"), ("hit_rate@5", "Success@5")):
        revaluate(rq, rr, name)
        theirs = rr.scores[name]
        assert np.allclose([ours[label][q] for q in judgments], [theirs[q] for q in judgments], atol=1e-12), name


def test_long_metric_lists_are_bounded_and_linear():
    import time

    start = time.perf_counter()
    with pytest.raises(UsageError, match="longer than 20000 characters"):
        parse_metrics("a-" * 20_000)
    assert len(parse_metrics("P." + ",".join(map(str, range(1, 3001))))) == 3000
    with pytest.raises(UsageError, match="given twice"):  # trec_eval refuses repeated cutoffs, so does evalkit
        parse_metrics("P." + "1," * 5000 + "1")
    assert time.perf_counter() - start < 5  # was quadratic (a word-boundary scan per '-')
