"""The Python API: every input form gives the command line's figures (issue 13, "evalkit.score on a dict, a DataFrame,
a path and a Run, giving the same official score as the CLI")."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import evalkit
from evalkit.errors import UsageError
from helpers import REPO, run_cli

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
    assert evalkit.Run.from_pandas(frame).to_pandas()[["query_id", "doc_id", "score"]].values.tolist() == [["q", "d", 1.0]]
