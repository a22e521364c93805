"""Evaluation profiles: each shipped profile on small data where the naive setting gives another figure, checked
against pytrec_eval (trec_eval's code) under the profile's own setting; TOML profiles; how options compose."""
from __future__ import annotations

import pytest

import evalkit
from evalkit.core.errors import UsageError
from evalkit.tasks import get_task, task_for_dataset, tasks
from evalkit.tasks.profiles import ProfileTask
from support.helpers import REPO, run_cli

pytrec_eval = pytest.importorskip("pytrec_eval")

SHIPPED = ("trec-dl-2019-passage", "trec-dl-2020-passage", "trec-dl-2019-document", "trec-dl-2020-document",
           "msmarco-passage-dev", "beir", "beir-cqadupstack", "trec-covid")


def trec_eval(qrels: dict, run: dict, measure: str, level: int = 1) -> float:
    """The mean of one measure as trec_eval computes it (pytrec_eval), at relevance level ``level``."""
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {measure}, relevance_level=level)
    values = [v for query in evaluator.evaluate(run).values() for v in query.values()]
    return sum(values) / len(values)


GRADED = {"q1": {"d1": 3, "d2": 1, "d3": 2, "d4": 0}, "q2": {"d5": 1, "d6": 2, "d7": 1}}
GRADED_RUN = {"q1": {"d2": 9.0, "d4": 8.0, "d1": 7.0, "d3": 6.0}, "q2": {"d5": 9.0, "d7": 8.0, "d8": 7.0, "d6": 6.0}}


@pytest.mark.parametrize("name", ["trec-dl-2019-passage", "trec-dl-2020-passage"])
def test_dl_passage_binarises_at_grade_two(name):
    result = evalkit.score(GRADED_RUN, GRADED, task=name)
    assert result.official_name == "nDCG@10"
    assert result.means["MAP(rel=2)"] == pytest.approx(trec_eval(GRADED, GRADED_RUN, "map", 2), abs=1e-12)
    assert result.means["MRR(rel=2)"] == pytest.approx(trec_eval(GRADED, GRADED_RUN, "recip_rank", 2), abs=1e-12)
    naive = evalkit.score(GRADED_RUN, GRADED, task="trec", metrics="map mrr")
    assert naive.means["MAP"] != pytest.approx(result.means["MAP(rel=2)"])  # grade 1 counted: another MAP
    assert naive.means["MRR"] != pytest.approx(result.means["MRR(rel=2)"])
    assert result.means["nDCG@10"] == pytest.approx(trec_eval(GRADED, GRADED_RUN, "ndcg_cut_10"), abs=1e-12)


def deep_run(relevant_at: int, n: int, query: str = "q1") -> dict:
    """``n`` documents for ``query``, the relevant ``rel`` at rank ``relevant_at`` and ``top`` at rank 1."""
    docs = {f"x{i:04d}": float(n - i) for i in range(n)}
    names = list(docs)
    ranking = {name: docs[name] for name in names}
    ranking.pop(names[relevant_at - 1])
    ranking["rel"] = float(n - relevant_at + 1)
    ranking.pop(names[0])
    ranking["top"] = float(n)
    return {query: ranking}


DEEP_QRELS = {"q1": {"top": 1, "rel": 1}}


@pytest.mark.parametrize("name", ["trec-dl-2019-document", "trec-dl-2020-document"])
def test_dl_document_counts_the_top_hundred_at_grade_one(name):
    run = deep_run(relevant_at=150, n=200)
    result = evalkit.score(run, DEEP_QRELS, task=name)
    top100 = {"q1": dict(sorted(run["q1"].items(), key=lambda kv: -kv[1])[:100])}
    assert result.means["MAP"] == pytest.approx(trec_eval(DEEP_QRELS, top100, "map"), abs=1e-12)
    naive = evalkit.score(run, DEEP_QRELS, task="trec", metrics="map")
    assert naive.means["MAP"] == pytest.approx(trec_eval(DEEP_QRELS, run, "map"), abs=1e-12)
    assert naive.means["MAP"] > result.means["MAP"]  # the document at 150 counts only without the profile's depth
    graded = evalkit.score(GRADED_RUN, GRADED, task=name)  # grade 1 is relevant: as trec_eval's default
    assert graded.means["MAP"] == pytest.approx(trec_eval(GRADED, GRADED_RUN, "map", 1), abs=1e-12)


def test_msmarco_dev_is_mrr_over_the_top_ten():
    run = deep_run(relevant_at=12, n=30)
    qrels = {"q1": {"rel": 1}}
    result = evalkit.score(run, qrels, task="msmarco-passage-dev")
    assert result.official_name == "MRR@10" and result.official == 0.0
    naive = evalkit.score(run, qrels, task="trec", metrics="mrr")
    assert naive.means["MRR"] == pytest.approx(1 / 12)


def test_beir_removes_a_query_from_its_own_ranking():
    qrels = {"a1": {"a7": 1, "a9": 1}, "a2": {"a3": 1}}
    run = {"a1": {"a1": 9.0, "a7": 8.0, "a5": 7.0, "a9": 6.0}, "a2": {"a2": 5.0, "a4": 4.0, "a3": 3.0}}
    result = evalkit.score(run, qrels, task="beir")
    without_self = {q: {d: s for d, s in docs.items() if d != q} for q, docs in run.items()}
    assert result.official == pytest.approx(trec_eval(qrels, without_self, "ndcg_cut_10"), abs=1e-12)
    naive = evalkit.score(run, qrels, task="trec", metrics="ndcg@10")
    assert naive.official == pytest.approx(trec_eval(qrels, run, "ndcg_cut_10"), abs=1e-12)
    assert naive.official < result.official
    assert any("2 rows whose document id equals their query id removed" in note for note in result.policy)


def test_cqadupstack_is_the_mean_of_the_forums_means():
    qrels = {"android/1": {"android/d1": 1}, "english/1": {"english/d1": 1}, "english/2": {"english/d2": 1},
             "english/3": {"english/d3": 1}}
    run = {"android/1": {"android/d1": 1.0}, "english/1": {"english/x": 1.0}, "english/2": {"english/x": 1.0},
           "english/3": {"english/x": 1.0}}
    result = evalkit.score(run, qrels, task="beir-cqadupstack")
    assert result.official == pytest.approx(0.5)  # (1.0 + 0.0) / 2 forums
    assert evalkit.score(run, qrels, task="beir", metrics="ndcg@10").official == pytest.approx(0.25)  # per query: 1/4


def test_trec_covid_keeps_its_depth_and_judged_at_ten():
    run = deep_run(relevant_at=1001, n=1100)
    result = evalkit.score(run, DEEP_QRELS, task="trec-covid")
    assert list(result.means)[:5] == ["nDCG@10", "P@5", "Bpref", "MAP", "Judged@10"]
    naive = evalkit.score(run, DEEP_QRELS, task="trec", metrics="map")
    assert naive.means["MAP"] > result.means["MAP"]
    top = {"q1": dict(sorted(run["q1"].items(), key=lambda kv: -kv[1])[:1000])}
    assert result.means["MAP"] == pytest.approx(trec_eval(DEEP_QRELS, top, "map"), abs=1e-12)


def test_every_shipped_profile_has_sources_and_is_picked_by_its_ids():
    names = {task.name for task in tasks()}
    assert set(SHIPPED) <= names
    for name in SHIPPED:
        task = get_task(name)
        assert isinstance(task, ProfileTask) and task.sources and task.dataset_ids
    picks = {"msmarco-passage/trec-dl-2019/judged": "trec-dl-2019-passage", "msmarco-passage/trec-dl-2020": "trec-dl-2020-passage",
             "msmarco-document/trec-dl-2019": "trec-dl-2019-document", "msmarco-passage/dev/small": "msmarco-passage-dev",
             "beir/scifact/test": "beir", "beir/arguana": "beir", "beir/quora/test": "beir", "beir/cqadupstack": "beir-cqadupstack",
             "beir/cqadupstack/android": "beir", "cord19/trec-covid": "trec-covid", "beir/trec-covid": "beir"}
    for dataset, profile in picks.items():
        found = task_for_dataset(dataset)
        assert found is not None and found[0].name == profile, dataset
    assert task_for_dataset("antique/test") is None  # no profile: the gold's format decides (trec), as for a file


def test_the_profiles_command_lists_every_profile_with_its_sources():
    done = run_cli("profiles")
    assert done.returncode == 0, done.stderr
    for name in SHIPPED + ("checkthat2025-4b", "climatecheck2025-retrieval"):
        assert f"\n{name}\n" in f"\n{done.stdout}"
    assert done.stdout.count("  source: ") >= len(SHIPPED)
    page = (REPO / "docs" / "guide" / "datasets.md").read_text()
    for name in SHIPPED:
        assert f"`{name}`" in page, f"docs/guide/datasets.md does not describe {name}"


def test_a_profile_level_wins_over_relevance_level_for_its_measures_only():
    passage = evalkit.score(GRADED_RUN, GRADED, task="trec-dl-2019-passage", relevance_level=3, metrics="map")
    assert passage.means["MAP(rel=2)"] == pytest.approx(trec_eval(GRADED, GRADED_RUN, "map", 2), abs=1e-12)
    assert passage.means["MAP"] == pytest.approx(trec_eval(GRADED, GRADED_RUN, "map", 3), abs=1e-12)
    assert any("keep the profile's" in note for note in passage.policy)
    document = evalkit.score(GRADED_RUN, GRADED, task="trec-dl-2019-document", relevance_level=2)
    assert document.means["MAP"] == pytest.approx(trec_eval(GRADED, GRADED_RUN, "map", 2), abs=1e-12)
    deeper = evalkit.score(deep_run(150, 200), DEEP_QRELS, task="trec-dl-2019-document", depth=1000)
    assert deeper.means["MAP"] == pytest.approx(trec_eval(DEEP_QRELS, deep_run(150, 200), "map"), abs=1e-12)


PROFILE_TOML = """[profile]
name = "my-track-2026"
description = "My track: nDCG@10, AP at grade 2, the top 1000"
measures = "ndcg@10 map(rel=2)"
depth = 1000
exclude_self = true
sources = ["My track's overview, 2026"]
"""


def test_a_toml_profile_scores_as_the_class_it_describes(tmp_path):
    path = tmp_path / "my.toml"
    path.write_text(PROFILE_TOML)
    by_file = evalkit.score(GRADED_RUN, GRADED, task=str(path))
    assert by_file.task == "my-track-2026" and list(by_file.means) == ["nDCG@10", "MAP(rel=2)"]
    assert by_file.means["MAP(rel=2)"] == pytest.approx(trec_eval(GRADED, GRADED_RUN, "map", 2), abs=1e-12)
    run = tmp_path / "run.trec"
    run.write_text("".join(f"{q} Q0 {d} 0 {s} r\n" for q, docs in GRADED_RUN.items() for d, s in docs.items()))
    gold = tmp_path / "gold.qrels"
    gold.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in GRADED.items() for d, g in docs.items()))
    done = run_cli("score", run, gold, "--task", path, "-o", "tsv")
    assert done.returncode == 0, done.stderr
    assert f"{by_file.means['MAP(rel=2)']:.4f}" in done.stdout


@pytest.mark.parametrize("body, message", [
    ("[profile]\nname = 'x'\nmeasures = 'ndcg@10'\nimport = 'os'\n", "unknown key"),
    ("[profile]\nname = 'x'\nmeasures = 'ndcg@10'\ndepth = -3\n", "positive whole number"),
    ("[profile]\nname = 'x'\nmeasures = 'ndcg@10'\ndepth = true\n", "positive whole number"),
    ("[profile]\nname = 'x'\n", "needs measures"),
    ("[profile]\nname = 'x'\nmeasures = 'nosuchmeasure@10'\n", "nosuchmeasure"),
    ("[other]\nname = 'x'\n", "one [profile] table"),
    ("name = = 1\n", "not a TOML profile"),
    ("[profile]\nname = 'x'\nmeasures = 'ndcg@10'\nsources = [1, 2]\n", "a list of strings"),
])
def test_a_hostile_profile_file_is_one_line(tmp_path, body, message):
    path = tmp_path / "bad.toml"
    path.write_text(body)
    with pytest.raises(UsageError, match=message.replace("[", r"\[")):
        evalkit.score(GRADED_RUN, GRADED, task=str(path))
    done = run_cli("tasks")  # the registry is untouched by a bad file
    assert done.returncode == 0
