"""The Python API: every input form gives the command line's figures (issue 13, "evalkit.score on a dict, a DataFrame,
a path and a Run, giving the same official score as the CLI")."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import evalkit
from evalkit.core.errors import UsageError
from support.helpers import REPO, run_cli

LIST_RUN, LIST_GOLD = REPO / "gold" / "examples" / "tweets_run.tsv", REPO / "gold" / "examples" / "tweets_gold.tsv"


def cli_json(*args) -> dict:
    done = run_cli(*map(str, args), "--output", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def trec_files(tmp_path_factory):
    """A scored TREC run with ties, a repeated document and a query the gold lacks; graded qrels with an unanswered query."""
    folder = tmp_path_factory.mktemp("api")
    rng = np.random.default_rng(7)
    run_lines, qrels_lines = [], []
    for q in range(40):
        docs = rng.choice(200, size=30, replace=False)
        scores = np.round(rng.random(30), 1)  # one decimal: many ties, ordered by doc id descending
        run_lines += [f"q{q} Q0 d{d} {r + 1} {s} tag\n" for r, (d, s) in enumerate(zip(docs, scores))]
        qrels_lines += [f"q{q} 0 d{d} {int(rng.integers(0, 3))}\n" for d in rng.choice(200, size=8, replace=False)]
    run_lines.append("q0 Q0 d999 31 0.0 tag\n")
    qrels_lines.append("q99 0 d1 1\n")  # never answered: counts 0 under missing=zero
    run, qrels = folder / "run.trec", folder / "qrels.txt"
    run.write_text("".join(run_lines))
    qrels.write_text("".join(qrels_lines))
    return run, qrels


def as_dict(run: evalkit.Run) -> dict:
    frame = run.to_pandas()
    out: dict = {}
    for q, d, s in zip(frame["query_id"], frame["doc_id"], frame["score"]):
        out.setdefault(q, {})[d] = s
    return out


def test_score_same_official_from_every_input_form(trec_files):
    run_path, qrels_path = trec_files
    expected = cli_json("score", run_path, qrels_path, "--metrics", "ndcg@10 map mrr@10")
    run, qrels = evalkit.read_run(run_path), evalkit.read_qrels(qrels_path)
    frame = run.to_pandas().rename(columns={"query_id": "qid", "doc_id": "docno"})  # alias column names
    shuffled = frame.sample(frac=1.0, random_state=1)  # input order never matters for scored runs
    qrels_frame = qrels.to_pandas()
    forms = {"path": (run_path, qrels_path), "Run": (run, qrels), "DataFrame": (frame, qrels_frame),
             "shuffled DataFrame": (shuffled, qrels_frame), "dict": (as_dict(run), {q: dict(zip(g["doc_id"], g["relevance"]))
                                                                                   for q, g in qrels_frame.groupby("query_id")})}
    for form, (the_run, the_gold) in forms.items():
        result = evalkit.score(the_run, the_gold, metrics="ndcg@10 map mrr@10")
        assert result.task == expected["task"] == "trec", form
        assert result.official_name == expected["official"]["metric"], form
        assert result.official == pytest.approx(expected["official"]["value"], abs=1e-12), form
        for label, value in expected["metrics"].items():
            assert result.means[label] == pytest.approx(value, abs=1e-12), (form, label)
        per_query = result.per_query
        assert list(per_query.columns) == list(result.means) and per_query.index.name == "query_id"
        assert per_query.loc["q99", "nDCG@10"] == 0.0  # the unanswered gold query counts 0
        assert per_query.mean()["MAP"] == pytest.approx(result.means["MAP"], abs=1e-12)
        assert result.manifest["task"] == "trec" and len(result.manifest["inputs"]) == 2
    in_memory = evalkit.score(as_dict(run), qrels).manifest["inputs"][0]
    assert in_memory["format"] == "in-memory" and len(in_memory["sha256"]) == 64


def test_list_submission_forms_keep_list_order():
    expected = cli_json("score", LIST_RUN, LIST_GOLD)
    run = evalkit.read_run(LIST_RUN)
    lists = {q: list(g.sort_values("rank")["doc_id"]) for q, g in run.to_pandas().groupby("query_id")}
    for form in (LIST_RUN, run, lists):
        result = evalkit.score(form, LIST_GOLD)
        assert result.task == expected["task"] == "checkthat2025-4b"
        assert (result.official_name, result.official) == ("MRR@5", pytest.approx(expected["official"]["value"], abs=1e-12))
    reversed_lists = {q: docs[::-1] for q, docs in lists.items()}
    assert evalkit.score(reversed_lists, LIST_GOLD).official != pytest.approx(expected["official"]["value"])


def test_compare_and_fuse_equal_the_commands(trec_files, tmp_path):
    run_path, qrels_path = trec_files
    other = tmp_path / "other.trec"
    lines = run_path.read_text().splitlines()
    other.write_text("".join(f"{' '.join(p[:4])} {1 - float(p[4]):.1f} other\n" for p in (line.split() for line in lines)))
    expected = cli_json("compare", qrels_path, run_path, other, "--permutations", "2000", "--bootstrap", "2000")
    result = evalkit.compare(qrels_path, run_path, other, permutations=2000, bootstrap=2000)
    table = result.to_pandas()
    assert (result.baseline, result.metric) == (expected["baseline"], expected["metric"]) == ("run", "nDCG@10")
    [pair] = expected["comparisons"]
    row = table.loc[pair["run"]]
    assert row["difference"] == pytest.approx(pair["difference"], abs=1e-12) and row["wins"] == pair["wins"]
    for test, outcome in pair["tests"].items():  # seeded: the same p-values
        assert row[f"p_{test}"] == pytest.approx(outcome["p_value"], abs=1e-12), test
        assert row[f"p_{test}_adjusted"] == pytest.approx(outcome["p_adjusted"], abs=1e-12), test
    twice = evalkit.compare(qrels_path, run_path, run_path, permutations=200, bootstrap=200)
    [compared] = twice.to_pandas().index.tolist()  # one file given twice: two names, as the command line gives them
    assert compared.endswith("run#2") and twice.baseline.endswith("run#1")
    fused_path = tmp_path / "fused.trec"
    done = run_cli("fuse", str(run_path), str(other), "--out", str(fused_path), "--method", "combsum")
    assert done.returncode == 0, done.stderr
    from_cli = evalkit.read_run(fused_path).to_pandas()
    from_api = evalkit.fuse(run_path, other, method="combsum").to_pandas()
    merged = from_cli.merge(from_api, on=["query_id", "doc_id"], suffixes=("_cli", "_api"))
    assert len(merged) == len(from_cli) == len(from_api)
    assert np.allclose(merged["score_cli"], merged["score_api"], atol=1e-12, rtol=0)


def test_bad_inputs_are_one_clear_error():
    with pytest.raises(UsageError, match="cannot use a int as a run"):
        evalkit.score(3, {"q": {"d": 1}})
    with pytest.raises(UsageError, match="a run dict maps query ids"):
        evalkit.score({"q": 3}, {"q": {"d": 1}})
    with pytest.raises(UsageError, match="unknown task"):
        evalkit.score({"q": {"d": 1.0}}, {"q": {"d": 1}}, task="nope")
    with pytest.raises(UsageError, match="compare needs at least two runs"):
        evalkit.compare({"q": {"d": 1}}, {"q": {"d": 1.0}})
    frame = pd.DataFrame({"query_id": ["q"], "doc_id": ["d"], "score": [1.0]})
    assert evalkit.as_run(frame).to_pandas()[["query_id", "doc_id", "score"]].values.tolist() == [["q", "d", 1.0]]


# --- in-memory inputs meet the file readers' rules (issue 22): each an evalkit error, never a bare exception
SCORES = {"q": {"a": 1.0, "b": 0.5}}
JUDGED = {"q": {"a": 1, "b": 0}}
BAD_INPUTS = {
    "DataFrame gold judging one pair twice": (SCORES, pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "a"], "relevance": [0, 1]}),
                                              "judged twice"),
    "dict gold judging one pair twice (1 and '1')": (SCORES, {"q": {1: 0, "1": 1}}, "judged twice"),
    "NaN score in a dict run": ({"q": {"a": float("nan")}}, JUDGED, "not a finite number"),
    "inf score in a dict run": ({"q": {"a": float("inf"), "b": 0.5}}, JUDGED, "not a finite number"),
    "NaN score in a DataFrame run": (pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "score": [np.nan]}), JUDGED, "row 1"),
    "inf grade": (SCORES, {"q": {"a": float("inf")}}, "grade inf is not a finite number"),
    "NaN grade": (SCORES, {"q": {"a": float("nan")}}, "grade nan is not a finite number"),
    "NaN grade in a DataFrame": (SCORES, pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevance": [np.nan]}), "grade"),
    "keys 1 and '1' in a run": ({"q": {1: 1.0, "1": 2.0}}, JUDGED, "one id once written as text"),
    "query keys 1 and '1'": ({1: {"a": 1.0}, "1": {"b": 1.0}}, JUDGED, "one id once written as text"),
    "NaN query id": ({float("nan"): {"a": 1.0}}, JUDGED, "query id is missing"),
    "None doc id": ({"q": {None: 1.0}}, JUDGED, "doc id is missing"),
    "None id in a DataFrame": (pd.DataFrame({"query_id": [None], "doc_id": ["a"], "score": [1.0]}), JUDGED, "query id is missing"),
    "float id": ({"q": {1.5: 1.0}}, JUDGED, "ids are text or integers"),
    "empty id": ({"q": {" ": 1.0}}, JUDGED, "empty doc id"),
    "text score": ({"q": {"a": "abc"}}, JUDGED, "score 'abc' is not a number"),
    "None score": ({"q": {"a": None}}, JUDGED, "score is missing"),
    "huge int score": ({"q": {"a": 10**400}}, JUDGED, "beyond a float's range"),
    "boolean score": ({"q": {"a": True}}, JUDGED, "not a number"),
    "list score": ({"q": {"a": [1]}}, JUDGED, "not a number"),
    "empty gold dict": (SCORES, {}, "no judgments"),
    "gold dict of empty queries": (SCORES, {"q": {}}, "no judgments"),
    "empty run dict": ({}, JUDGED, "no query"),
    "duplicated DataFrame column": (pd.DataFrame([["q", "a", 1.0, 2.0]], columns=["query_id", "doc_id", "score", "score"]), JUDGED,
                                    "column 'score' appears twice"),
    "duplicated gold column": (SCORES, pd.DataFrame([["q", "a", 1, 0]], columns=["query_id", "doc_id", "relevance", "Relevance"]),
                               "appears twice"),
    "empty DataFrame run": (pd.DataFrame({"query_id": [], "doc_id": [], "score": []}), JUDGED, "no rows"),
    "gold dict of lists": (SCORES, {"q": ["a"]}, "maps query ids"),
}


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_in_memory_inputs_are_checked_as_files_are(case):
    run, gold, message = BAD_INPUTS[case]
    with pytest.raises(evalkit.core.errors.EvalkitError, match=message):
        evalkit.score(run, gold)


@pytest.mark.parametrize("entry", ["score", "compare", "fuse"])
def test_non_finite_scores_refused_by_every_entry(entry):
    bad = {"q": {"a": float("inf"), "b": 0.5}}
    calls = {"score": lambda: evalkit.score(bad, JUDGED), "compare": lambda: evalkit.compare(JUDGED, SCORES, bad),
             "fuse": lambda: evalkit.fuse(SCORES, bad)}
    with pytest.raises(UsageError, match="not a finite number"):
        calls[entry]()


def test_bad_metric_lists_are_one_clear_error():
    for metrics in (123, [1], {"mrr": 5}):
        with pytest.raises(UsageError, match="metrics"):
            evalkit.score(SCORES, JUDGED, metrics=metrics)
    with pytest.raises(UsageError, match="a metric is a name"):
        evalkit.compare(JUDGED, SCORES, SCORES, metric=5)
    with pytest.raises(UsageError, match="depth"):
        evalkit.score(SCORES, JUDGED, depth=10**20)
    with pytest.raises(UsageError, match="seed"):
        evalkit.compare(JUDGED, SCORES, SCORES, seed=10**20)


def test_numeric_text_and_integer_ids_read_as_a_file_would():
    """A score written as text follows the file rule; integer ids are their digits (a gold file read with pandas)."""
    as_text = evalkit.score({"q": {"a": "1.0", "b": "0.5"}}, JUDGED, metrics="mrr@10")
    assert as_text.official == 1.0
    numbered = evalkit.score({7: {11: 1.0, 12: 0.5}}, {"7": {"11": 1, "12": 0}}, metrics="mrr@10")
    assert numbered.official == 1.0


def test_the_tasks_own_files_read_with_pandas():
    """The 4b submission (post_id, preds) and gold (post_id, tweet_text, cord_uid) as pandas reads them score as the files do,
    and a relevance column added to the gold does not switch the task (MRR@5 stays official)."""
    expected = evalkit.score(LIST_RUN, LIST_GOLD)
    submission, gold = pd.read_csv(LIST_RUN, sep="\t"), pd.read_csv(LIST_GOLD, sep="\t")
    for the_run, the_gold in ((submission, gold), (LIST_RUN, gold), (submission, LIST_GOLD), (submission, gold.assign(relevance=1))):
        result = evalkit.score(the_run, the_gold)
        assert (result.task, result.official_name) == ("checkthat2025-4b", "MRR@5")
        assert result.official == pytest.approx(expected.official, abs=1e-12)
        assert "checkthat" in result.task_reason and result.task_reason in result.policy
    generic = evalkit.score(LIST_RUN, evalkit.read_qrels(LIST_GOLD).to_pandas())  # generic columns: trec, and said so
    assert generic.task == "trec" and "gold's columns" in generic.task_reason and "task=" in generic.task_reason
    named = evalkit.score(LIST_RUN, evalkit.read_qrels(LIST_GOLD).to_pandas(), task="checkthat2025-4b")
    assert named.official == pytest.approx(expected.official, abs=1e-12) and "as named" in named.task_reason
    with pytest.raises(UsageError, match=r"run DataFrame, row 2: query 't1' appears twice \(first in row 1\)"):
        evalkit.score(pd.concat([submission.iloc[:1], submission.iloc[:1]]), gold)


def test_climatecheck_frames_and_the_task_choice():
    gold = pd.DataFrame({"claim_id": ["c1", "c1", "c2"], "abstract_id": ["a1", "a2", "b1"],
                         "annotation": ["Supports", "Not Enough Information", "Refutes"]})
    labelled = pd.DataFrame({"claim_id": ["c1", "c2"], "abstract_id": ["a1", "b1"], "rank": [1, 1], "label": ["Supports", "Refutes"]})
    auto = evalkit.score(labelled, gold)
    assert auto.task == "climatecheck2025-retrieval" and any("Subtask I does not score" in w for w in auto.warnings)
    named = evalkit.score(labelled, gold, task="climatecheck2025-verification")
    assert named.task == "climatecheck2025-verification" and named.official == pytest.approx(2.0)


def test_runs_and_gold_built_in_code_meet_the_same_rules():
    with pytest.raises(UsageError, match="score nan of query 'q' is not a finite number"):
        evalkit.score(evalkit.Run.from_scores({"q": {"a": float("nan")}}), JUDGED)
    with pytest.raises(UsageError, match="doc id 1 is not text"):
        evalkit.score(evalkit.Run.from_scores({"q": {1: 1.0}}), JUDGED)
    with pytest.raises(UsageError, match="grade inf"):
        evalkit.score(SCORES, evalkit.Qrels.from_dict({"q": {"a": float("inf")}}))
    with pytest.raises(UsageError, match="judged twice"):
        evalkit.score(SCORES, evalkit.Qrels.from_rows(["q", "q"], ["a", "a"], [0, 1]))
    assert evalkit.score(evalkit.Run.from_scores(SCORES), evalkit.Qrels.from_dict(JUDGED), metrics="mrr").official == 1.0


def test_a_sources_hash_and_a_scores_manifest_are_taken_when_first_asked_for(trec_files):
    """A Source given its sha256 pending waits for it only when asked (once); equal, hashed, pickled and shown as
    with the digest itself. ``score``'s manifest is built on first use, then the same object."""
    import dataclasses
    import hashlib
    import pickle

    from evalkit.data import Source

    class Pending:
        calls = 0

        def result(self) -> str:
            self.calls += 1
            return "ab" * 32

    pending = Pending()
    source = Source("run.trec", "trec-run", pending)
    assert pending.calls == 0
    assert source.sha256 == "ab" * 32 and source.sha256 == "ab" * 32 and pending.calls == 1
    plain = Source("run.trec", "trec-run", "ab" * 32)
    assert source == plain and hash(source) == hash(plain) and source != Source("run.trec", "trec-run", "cd" * 32)
    assert pickle.loads(pickle.dumps(Source("x", "f", Pending(), "m"))) == Source("x", "f", "ab" * 32, "m")
    assert repr(plain) == "Source(path='run.trec', format='trec-run', sha256='" + "ab" * 32 + "', member=None)"
    with pytest.raises(dataclasses.FrozenInstanceError):
        plain.path = "other"  # type: ignore[misc]
    run, qrels = trec_files
    result = evalkit.score(str(run), str(qrels), metrics=["map"])
    assert "_manifest" not in result.__dict__
    manifest = result.manifest
    assert result.manifest is manifest and manifest["command"] == "score" and manifest["created"]
    assert [entry["sha256"] for entry in manifest["inputs"]] == [hashlib.sha256(path.read_bytes()).hexdigest() for path in (run, qrels)]
    # the pending manifest keeps no run or gold alive (a file's Source, an in-memory input's entry)
    held = [cell.cell_contents for cell in result.manifest_of.__closure__ or ()]
    assert not any(isinstance(value, (evalkit.Run, evalkit.Qrels)) for value in held)
    in_memory = evalkit.score(evalkit.Run.from_rows(["q0"], ["d1"], [1.0]), str(qrels), metrics=["map"], allow_partial=True)
    assert [entry["format"] for entry in in_memory.manifest["inputs"]] == ["in-memory", "trec-qrels"]
