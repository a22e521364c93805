"""Graded and Bpref metrics vs pytrec_eval on real NFCorpus qrels, and the tie rule.

The runs are synthetic (seeded) over the real judgments: judged documents and
unjudged distractors with coarse scores, so ties are frequent. trec_eval
breaks ties by doc id descending, as evalkit does; ranx does not -- asserted.
"""
from __future__ import annotations

import random

import numpy as np
import pytest

from support.helpers import SHARED, shared_or_skip
from evalkit.data import Qrels, Run
from evalkit.metrics.evaluation import evaluate
from evalkit.io.reading import read_qrels
from evalkit.metrics import parse_metrics

TREC_NAMES = {
    "nDCG@10": "ndcg_cut_10",
    "nDCG@5": "ndcg_cut_5",
    "MAP": "map",
    "MAP@10": "map_cut_10",
    "Bpref": "bpref",
    "R-Prec": "Rprec",
    "MRR": "recip_rank",
    "P@5": "P_5",
    "P@10": "P_10",
    "Recall@10": "recall_10",
    "Recall@100": "recall_100",
    "Success@1": "success_1",
    "Success@5": "success_5",
}


def synthetic_run(qrels: Qrels, seed: int = 13, distractors: int = 40) -> dict[str, dict[str, float]]:
    rng = random.Random(seed)
    judged = qrels.to_dict()
    pool = sorted({d for docs in judged.values() for d in docs})
    run = {}
    for query, docs in judged.items():
        picked = rng.sample(sorted(docs), k=max(1, len(docs) * 2 // 3)) + rng.sample(pool, k=distractors)
        run[query] = {d: float(rng.randint(0, 12)) / 4 for d in picked}  # few distinct values: many ties
    return run


def trec_eval_per_query(judgments, run, measures, relevance_level=1):
    import pytrec_eval

    return pytrec_eval.RelevanceEvaluator(judgments, set(measures), relevance_level=relevance_level).evaluate(run)


@pytest.mark.realdata
@pytest.mark.parametrize("qrels_file, level", [("test.2-1-0.qrel", 1), ("test.3-2-1.qrel", 1), ("test.3-2-1.qrel", 2)])
def test_nfcorpus_matches_trec_eval_per_query(qrels_file, level):
    qrels = read_qrels(shared_or_skip(SHARED / "nfcorpus" / qrels_file))
    run_dict = synthetic_run(qrels)
    metrics = parse_metrics(list(TREC_NAMES))
    ev = evaluate(Run.from_scores(run_dict), qrels, metrics, missing="skip", relevance_level=level)
    measures = {"ndcg_cut.5,10", "map", "map_cut.10", "bpref", "Rprec", "recip_rank", "P.5,10", "recall.10,100", "success.1,5"}
    theirs = trec_eval_per_query(qrels.to_dict(), run_dict, measures, level)
    assert set(ev.query_ids.tolist()) == set(theirs)
    for label, trec_name in TREC_NAMES.items():
        ours = dict(zip(ev.query_ids.tolist(), ev.per_query[label].tolist()))
        for query, values in theirs.items():
            assert ours[query] == pytest.approx(values[trec_name], abs=1e-9), (label, query)


@pytest.mark.realdata
def test_bpref_has_judged_nonrelevant_documents_to_count():
    qrels = read_qrels(shared_or_skip(SHARED / "nfcorpus" / "test.3-2-1.qrel"))
    ev = evaluate(Run.from_scores(synthetic_run(qrels)), qrels, parse_metrics("bpref"), relevance_level=2)
    assert ev.judged.num_nonrel.sum() > 1000  # grade-1 documents are judged non-relevant at level 2
    assert 0 < ev.mean("Bpref") < 1


def test_ties_follow_trec_eval_not_ranx():
    """Equal scores: trec_eval and evalkit rank doc ids descending; ranx keeps insertion order."""
    from ranx import Qrels as RQrels, Run as RRun, evaluate as revaluate

    judgments = {"q": {"a": 1}}
    run = {"q": {"a": 1.0, "b": 1.0, "c": 1.0}}  # descending ids: c, b, a -> relevant at rank 3
    ours = evaluate(Run.from_scores(run), Qrels.from_dict(judgments), parse_metrics("mrr")).mean("MRR")
    trec = trec_eval_per_query(judgments, run, {"recip_rank"})["q"]["recip_rank"]
    theirs = revaluate(RQrels.from_dict(judgments), RRun.from_dict(run), "mrr")
    assert ours == trec == pytest.approx(1 / 3)
    assert theirs == pytest.approx(1.0)  # documented ranx difference


def test_map_cut_divides_by_all_relevant_like_trec_eval_and_ranx():
    from ranx import Qrels as RQrels, Run as RRun, evaluate as revaluate

    judgments = {"q": {"a": 1, "b": 1, "z": 1}}
    run = {"q": {"a": 3.0, "x": 2.0, "b": 1.0}}
    ours = evaluate(Run.from_scores(run), Qrels.from_dict(judgments), parse_metrics("map@2")).mean("MAP@2")
    trec = trec_eval_per_query(judgments, run, {"map_cut.2"})["q"]["map_cut_2"]
    theirs = revaluate(RQrels.from_dict(judgments), RRun.from_dict(run), "map@2")
    assert ours == pytest.approx(trec) == pytest.approx(theirs) == pytest.approx(1 / 3)


def test_bpref_without_judged_nonrelevant():
    """N = 0: trec_eval gives each retrieved relevant document full credit, as evalkit does."""
    judgments = {"q": {"a": 1, "b": 1}}
    run = {"q": {"x": 3.0, "a": 2.0}}
    from ranx import Qrels as RQrels, Run as RRun, evaluate as revaluate

    ours = evaluate(Run.from_scores(run), Qrels.from_dict(judgments), parse_metrics("bpref")).mean("Bpref")
    assert ours == pytest.approx(trec_eval_per_query(judgments, run, {"bpref"})["q"]["bpref"]) == pytest.approx(0.5)
    assert np.isnan(revaluate(RQrels.from_dict(judgments), RRun.from_dict(run), "bpref"))  # documented ranx difference


@pytest.mark.realdata
def test_shuffled_lines_give_identical_numbers(tmp_path):
    qrels = read_qrels(shared_or_skip(SHARED / "nfcorpus" / "test.2-1-0.qrel"))
    run_dict = synthetic_run(qrels)
    lines = [f"{q} Q0 {d} 0 {s} tag" for q, docs in run_dict.items() for d, s in docs.items()]
    metrics = parse_metrics("ndcg@10 map mrr@5 bpref p@5")
    results = []
    for seed in range(3):
        random.Random(seed).shuffle(lines)
        path = tmp_path / f"run{seed}.trec"
        path.write_text("\n".join(lines) + "\n")
        from evalkit.io.reading import read_run

        ev = evaluate(read_run(path), qrels, metrics)
        results.append({k: v.tolist() for k, v in ev.per_query.items()})
    assert results[0] == results[1] == results[2]


def test_rank_column_is_ignored_like_trec_eval(tmp_path):
    from evalkit.io.reading import read_run

    path = tmp_path / "r.trec"
    path.write_text("q Q0 a 1 0.1 t\nq Q0 b 2 0.9 t\n")  # rank column says a first; scores say b
    ev = evaluate(read_run(path), Qrels.from_dict({"q": {"a": 1}}), parse_metrics("mrr"))
    assert ev.mean("MRR") == 0.5


def test_zero_missing_policy_vs_skip():
    judgments = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = Run.from_lists({"q1": ["a"]})
    qrels = Qrels.from_dict(judgments)
    metrics = parse_metrics("mrr@5")
    assert evaluate(run, qrels, metrics, missing="zero", allow_partial=True).mean("MRR@5") == 0.5
    assert evaluate(run, qrels, metrics, missing="skip", allow_partial=True).mean("MRR@5") == 1.0
    from evalkit.core.errors import UsageError

    with pytest.raises(UsageError, match="misses 1 gold"):
        evaluate(run, qrels, metrics, missing="error", allow_partial=True)


def test_list_order_is_kept_and_duplicates_occupy_positions():
    run = Run.from_lists({"q": ["x", "x", "a"]})
    ev = evaluate(run, Qrels.from_dict({"q": {"a": 1, "x": 0}}), parse_metrics("mrr p@3 bpref"))
    assert ev.mean("MRR") == pytest.approx(1 / 3)
    assert ev.mean("P@3") == pytest.approx(1 / 3)
    assert ev.mean("Bpref") == 0.0  # only the first x counts as a judged non-relevant above a
    assert np.array_equal(run.ranked().first, [True, False, True])


def test_fast_paths_equal_reference_paths():
    """Tie-only reordering == full lexsort; pyarrow hash join == dict lookup; arrow reader == Python reader."""
    import sys

    from evalkit.data.ids import positions_in
    from evalkit.data.ranking import doc_descending_key, rank_run

    rng = np.random.default_rng(3)
    qids = np.repeat([f"q{i}" for i in range(300)], 50)
    docs = [f"d{x}" for x in rng.integers(0, 2000, size=len(qids))]
    scores = np.round(rng.random(len(qids)) * 4) / 4  # heavy ties
    order = np.lexsort((rng.random(len(qids)), -scores, np.repeat(np.arange(300), 50)))  # score-sorted, ties shuffled
    run = Run.from_rows(qids[order].tolist(), [docs[i] for i in order], scores[order])
    fast = rank_run(run)
    reference = np.lexsort((doc_descending_key(run.doc_ids)[run.didx], -run.scores, run.qidx))
    assert np.array_equal(fast.row, reference)

    import pyarrow  # noqa: F401  (enables the hash-join path)

    values = np.array([f"d{x}" for x in rng.integers(0, 100_000, size=60_000)], dtype=object)
    universe = np.array(sorted({f"d{x}" for x in rng.integers(0, 100_000, size=5_000)}), dtype=object)
    index = {v: i for i, v in enumerate(universe.tolist())}
    assert "pyarrow" in sys.modules
    assert positions_in(values, universe).tolist() == [index.get(v, -1) for v in values.tolist()]


def test_arrow_reader_equals_python_reader(tmp_path, monkeypatch):
    from evalkit.io.formats import tables
    from evalkit.io.reading import read_run

    rng = np.random.default_rng(5)
    lines = [f"q{q} Q0 d{rng.integers(0, 10**6)} {r} {rng.random():.5f} t" for q in range(2000) for r in range(60)]
    path = tmp_path / "big.trec"
    path.write_text("\n".join(lines) + "\n")
    assert path.stat().st_size > tables.FAST_PATH_BYTES
    fast = read_run(path)
    monkeypatch.setattr(tables, "FAST_PATH_BYTES", 1 << 40)
    slow = read_run(path)
    assert fast.to_scores() == slow.to_scores()


@pytest.mark.parametrize("change", [
    "none", "double space in Q0", "empty tag at a line end", "leading blank", "tab-separated", "one tab among spaces",
    "a line without its tag", "extra fields everywhere", "a comment line", "a blank line of spaces", "carriage returns",
])
def test_fast_reader_reads_or_refuses_exactly_as_the_python_reader(tmp_path, monkeypatch, change):
    """The pyarrow path converts only the id and score columns; every other column's emptiness and every line's
    field count still decide, as the Python reader's whitespace splitting does."""
    from evalkit.core.errors import InputError
    from evalkit.io.formats import tables
    from evalkit.io.reading import read_run

    rng = np.random.default_rng(11)
    lines = [f"q{q} Q0 d{rng.integers(0, 10**5)} {r} {rng.random():.5f} t" for q in range(700) for r in range(60)]
    edit = {
        "double space in Q0": lambda ls: ls.__setitem__(100, ls[100].replace(" Q0 ", "  Q0 ")),
        "empty tag at a line end": lambda ls: ls.__setitem__(5, ls[5] + " "),
        "leading blank": lambda ls: ls.__setitem__(0, " " + ls[0]),
        "tab-separated": lambda ls: ls.__init__([line.replace(" ", "\t") for line in ls]),
        "one tab among spaces": lambda ls: ls.__setitem__(9, ls[9].replace(" Q0 ", "\tQ0 ")),
        "a line without its tag": lambda ls: ls.__setitem__(3000, ls[3000].rsplit(" ", 1)[0]),
        "extra fields everywhere": lambda ls: ls.__init__([line + " x y" for line in ls]),
        "a comment line": lambda ls: ls.insert(50, "# a comment"),
        "a blank line of spaces": lambda ls: ls.insert(70, "   "),
        "carriage returns": lambda ls: ls.__init__([line + "\r" for line in ls]),
    }.get(change)
    if edit:
        edit(lines)
    path = tmp_path / "big.trec"
    path.write_text("\n".join(lines) + "\n")
    assert path.stat().st_size > tables.FAST_PATH_BYTES

    def outcome():
        try:
            run = read_run(path)
        except InputError as exc:
            return str(exc)
        return run.to_scores(), run.warnings

    fast = outcome()
    monkeypatch.setattr(tables, "FAST_PATH_BYTES", 1 << 40)
    assert fast == outcome()

