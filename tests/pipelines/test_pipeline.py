"""Pipelines: config checks, stage order, fusion through evalkit.fusion, fitting, and ``evalkit run`` end to end."""
from __future__ import annotations

import dataclasses
import json

import pytest

from support.helpers import SHARED, run_cli, shared_or_skip
from evalkit.pipelines import registry
from evalkit.data.corpus import Corpus, Queries
from evalkit.data import Qrels, Run
from evalkit.core.errors import UsageError
from evalkit.fusion import fuse
from evalkit.pipelines.runner import Pipeline, judged_queries
from evalkit.pipelines.config import load_config, parse_config, shipped_configs
from evalkit.pipelines.stages import Reranker, Retriever, merge_reranked, option, rerank_candidates

CORPUS = Corpus.from_records(
    [
        {"id": "d1", "title": "sea level rise", "text": "ice sheets melt"},
        {"id": "d2", "title": "vitamin d", "text": "bone fractures in older adults"},
        {"id": "d3", "title": "sea ice", "text": "arctic record low"},
        {"id": "d4", "title": "coral", "text": "reefs bleach when the sea warms"},
    ]
)
QUERIES = Queries(["q1", "q2"], ["sea ice melt", "vitamin fractures"])


@dataclasses.dataclass
class WordOptions:
    field: str = option("title", "field to match")


class WordOverlap(Retriever):
    name = "word-overlap-test"
    Options = WordOptions

    def retrieve(self, corpus, queries, k=1000):
        texts = corpus.fields[self.options.field]
        return Run.from_scores({q: {d: float(len(set(t.split()) & set(text.split())) or 0.1 * (i + 1))
                                    for i, (d, t) in enumerate(zip(corpus.ids, texts))} for q, text in zip(queries.ids, queries.texts)})


class Reverse(Reranker):
    """Turns the top depth upside down; learnable, remembering what it was fitted on."""

    name = "reverse-test"
    learnable = True

    def fit(self, corpus, queries, qrels, first_stage=None):
        self.fitted_on = (list(queries.ids), sorted(map(str, first_stage.query_ids)) if first_stage is not None else None)
        return self

    def rerank(self, corpus, queries, run, depth=100):
        top = rerank_candidates(queries, run, depth, corpus, self.name)
        return merge_reranked(run, {q: {d: float(i) for i, d in enumerate(docs)} for q, docs in top.items()}, depth)


@pytest.fixture
def test_systems(monkeypatch):
    monkeypatch.setattr(registry, "_REGISTRY", {**registry._REGISTRY, WordOverlap.name: WordOverlap, Reverse.name: Reverse})


def config(*stages, **top):
    return parse_config({"name": "t", "stages": list(stages), **top})


def test_stages_chain_fuse_and_rerank(test_systems):
    pipeline = Pipeline(config(
        {"name": "title", "system": "word-overlap-test", "k": 4},
        {"name": "text", "system": "word-overlap-test", "options": {"field": "text"}},
        {"name": "rrf", "fuse": ["title", "text"], "method": "rrf", "params": {"k": 10}},
        {"name": "rev", "system": "reverse-test", "depth": 2},
        {"name": "final", "fuse": ["rrf", "rev"], "method": "rrf"},  # first stage kept in the result
    ))
    runs = pipeline.run(CORPUS, QUERIES)
    assert list(runs) == ["title", "text", "rrf", "rev", "final"]
    expected = fuse([runs["title"], runs["text"]], "rrf", params={"k": 10})
    assert runs["rrf"].to_lists() == expected.to_lists()
    fused, reranked = runs["rrf"].to_lists(), runs["rev"].to_lists()
    for q in fused:
        assert reranked[q][:2] == fused[q][:2][::-1] and reranked[q][2:] == fused[q][2:]
    assert runs["final"].to_lists() == fuse([runs["rrf"], runs["rev"]], "rrf").to_lists()


def test_run_file_stage_feeds_a_reranker(test_systems, tmp_path):
    first = tmp_path / "first.trec"
    first.write_text("q1 Q0 d3 1 3.0 x\nq1 Q0 d1 2 2.0 x\nq1 Q0 d4 3 1.0 x\nq9 Q0 d2 1 1.0 x\n")  # q9: not asked; q2: absent
    pipeline = Pipeline(config(
        {"run": str(first)},
        {"name": "rev", "system": "reverse-test", "depth": 2},
        {"name": "final", "fuse": ["first", "rev"]},
    ))
    runs = pipeline.run(CORPUS, QUERIES)
    assert runs["first"].to_lists() == {"q1": ["d3", "d1", "d4"]}  # restricted to the queries run
    assert runs["rev"].to_lists() == {"q1": ["d1", "d3", "d4"]}
    assert pipeline.file_runs["first"].source.sha256 and "final" in runs
    pipeline.fit(CORPUS, Queries(["q1"], ["sea"]), Qrels.from_dict({"q1": {"d1": 1}}))
    assert pipeline.systems["rev"].fitted_on == (["q1"], ["q1"])  # the file's run on the training queries
    pipeline.fit(CORPUS, Queries(["q7"], ["sea"]), Qrels.from_dict({"q7": {"d1": 1}}))
    assert pipeline.systems["rev"].fitted_on == (["q7"], None)  # not in the file: the system mines its own
    (tmp_path / "bad.trec").write_text("q1 Q0 d1\n")
    with pytest.raises(Exception, match="bad.trec:1"):
        Pipeline(config({"run": str(tmp_path / "bad.trec")}, {"name": "rev", "system": "reverse-test"}))


def test_run_restrict_keeps_order_scores_and_labels():
    run = Run.from_rows(["a", "b", "a", "c"], ["d1", "d2", "d3", "d4"], [1.0, 2.0, 3.0, 4.0], labels=["x", "y", "z", "w"])
    kept = run.restrict(["c", "a", "zz"])
    assert list(kept.query_ids) == ["a", "c"] and kept.to_lists() == {"a": ["d3", "d1"], "c": ["d4"]}
    assert kept.labels.tolist() == ["x", "z", "w"] and run.restrict(["a", "b", "c"]) is run
    listed = Run.from_lists({"a": ["d2", "d1"], "b": ["d9"]}).restrict(["a"])
    assert listed.to_lists() == {"a": ["d2", "d1"]} and listed.scores is None


def test_fit_runs_earlier_stages_on_training_queries(test_systems):
    pipeline = Pipeline(config({"name": "first", "system": "word-overlap-test"}, {"name": "rev", "system": "reverse-test", "depth": 2}))
    train = Queries(["t1", "t2", "t3"], ["sea", "coral reefs", "vitamin"])
    qrels = Qrels.from_dict({"t1": {"d1": 1}, "t3": {"d2": 1}})
    subset = judged_queries(train, qrels, "train.jsonl", "train.qrels")
    assert subset.ids == ["t1", "t3"]
    pipeline.fit(CORPUS, subset, qrels)
    assert pipeline.systems["rev"].fitted_on == (["t1", "t3"], ["t1", "t3"])
    with pytest.raises(UsageError, match="1 query ids of train.qrels are missing from this query file"):
        judged_queries(Queries(["t1"], ["x"]), qrels, "train.jsonl", "train.qrels")
    with pytest.raises(UsageError, match="none of the 2 query ids of train.qrels is in this query file"):
        judged_queries(Queries(["zz"], ["x"]), qrels, "train.jsonl", "train.qrels")


def test_fit_input_names_the_candidate_stage_and_only_needed_stages_run(test_systems):
    stages = [{"name": "title", "system": "word-overlap-test"}, {"name": "text", "system": "word-overlap-test", "options": {"field": "text"}},
              {"name": "rrf", "fuse": ["title", "text"]}]
    train = Queries(["t1", "t3"], ["sea", "vitamin"])
    qrels = Qrels.from_dict({"t1": {"d1": 1}, "t3": {"d2": 1}})
    for fit_input, ran, fitted in [(None, {"title", "text", "rrf"}, ["t1", "t3"]), ("title", {"title"}, ["t1", "t3"]), ("", set(), None)]:
        extra = {} if fit_input is None else {"fit_input": fit_input}
        pipeline = Pipeline(config(*stages, {"name": "rev", "system": "reverse-test", "input": "rrf", **extra}))
        pipeline.fit(CORPUS, train, qrels)
        assert {step.split(" on ")[0] for step in pipeline.timings if step.endswith("training queries")} == ran
        assert pipeline.systems["rev"].fitted_on == (["t1", "t3"], fitted)
    with pytest.raises(UsageError, match="input 'later' is not an earlier stage"):
        config(*stages, {"name": "rev", "system": "reverse-test", "fit_input": "later"}, {"name": "later", "system": "word-overlap-test"})


@pytest.mark.parametrize(
    "stages, top, message",
    [
        ([{"system": "bm25", "colour": 1}], {}, "stage 1: unknown key 'colour'"),
        ([{"system": "bm25", "fuse": ["a", "b"]}], {}, "give exactly one of system = NAME, fuse = [STAGES] or run = FILE"),
        ([{"system": "bm25", "run": "first.trec"}], {}, "give exactly one of system = NAME, fuse = [STAGES] or run = FILE"),
        ([{"name": "a", "system": "bm25"}, {"name": "a", "system": "bm25"}], {}, "name 'a' used twice"),
        ([{"name": "a", "system": "bm25"}, {"name": "r", "system": "bm25", "input": "zz"}], {}, "input 'zz' is not an earlier stage"),
        ([{"name": "a", "system": "bm25"}, {"fuse": ["a"]}], {}, "fuse needs at least two earlier stages"),
        ([{"name": "a", "system": "bm25", "k": 0}], {}, "must be a whole number from 1"),
        ([{"name": "a", "system": "bm25"}], {"output": "b"}, "output 'b' is not a stage"),
        ([{"name": "a", "system": "bm25"}], {"colour": "x"}, "unknown key 'colour'"),
        ([], {}, "no [[stages]] given"),
    ],
)
def test_config_structure_errors(stages, top, message):
    with pytest.raises(UsageError) as info:
        parse_config({"stages": stages, **top}, "my.toml")
    assert info.value.one_line().startswith("my.toml: ") and message in info.value.one_line()


def test_unknown_system_option_and_fusion_method():
    with pytest.raises(UsageError, match="unknown system 'nosuch'"):
        Pipeline(config({"system": "nosuch"}))
    with pytest.raises(UsageError, match="unknown option 'colour' for system bm25"):
        Pipeline(config({"system": "bm25", "options": {"colour": "red"}}))
    with pytest.raises(UsageError, match="unknown fusion method"):
        Pipeline(config({"name": "a", "system": "bm25"}, {"name": "b", "system": "bm25"}, {"fuse": ["a", "b"], "method": "magic"}))


def test_shipped_configs_all_build():
    configs = shipped_configs()
    assert "bm25" in configs
    for name, path in configs.items():
        pipeline = Pipeline(load_config(path))
        assert pipeline.config.stages, name


@pytest.mark.realdata
def test_cli_run_config_on_medline(tmp_path):
    shared_or_skip(SHARED / "medline")
    cfg = tmp_path / "two.toml"
    cfg.write_text(
        'name = "medline-two"\nseed = 7\n[[stages]]\nname = "stem"\nsystem = "bm25"\nk = 100\noptions = { analyzer = "stem" }\n'
        '[[stages]]\nname = "simple"\nsystem = "bm25"\nk = 100\noptions = { analyzer = "simple", k1 = 1.2 }\n'
        '[[stages]]\nname = "rrf"\nfuse = ["stem", "simple"]\nmethod = "rrf"\n'
    )
    out = tmp_path / "med.trec"
    args = ["run", cfg, "--corpus", SHARED / "medline/MED.ALL", "--queries", SHARED / "medline/MED.QRY", "--out", out,
            "--gold", SHARED / "medline/MED.REL", "--report", tmp_path / "med.md"]
    done = run_cli(*args, env={"EVALKIT_CACHE": str(tmp_path / "cache")})
    assert done.returncode == 0, done.stderr
    assert "stage rrf: fuse stem, simple (rrf)" in done.stderr and "nDCG@10" in done.stdout
    manifest = json.loads((tmp_path / "med.trec.manifest.json").read_text())
    assert manifest["seed"] == 7 and manifest["options"]["config"]["stages"][1]["options"] == {"analyzer": "simple", "k1": 1.2}
    assert {e["role"] for e in manifest["inputs"]} == {"corpus", "queries"} and all(len(e["sha256"]) == 64 for e in manifest["inputs"])
    for stage in ("stem", "simple", "rrf"):
        assert (tmp_path / f"med.{stage}.trec").exists()
    assert "medline-two" in out.read_text().split("\n", 1)[0]
    assert (tmp_path / "med.md").exists() and (tmp_path / "med.first-relevant-rank.png").exists()
    scored = run_cli("score", out, SHARED / "medline/MED.REL", "-m", "map")
    assert scored.returncode == 0 and "MAP" in scored.stdout
    again = run_cli(*args)
    assert again.returncode == 2 and "exists; pass --force" in again.stderr


@pytest.mark.realdata
def test_cli_run_single_system_with_set_and_submission(tmp_path):
    gold = shared_or_skip(SHARED / "checkthat2025-4b/queries/subtask4b_query_tweets_dev.tsv")
    corpus = tmp_path / "collection.tsv"
    import csv as _csv

    with open(gold, newline="", encoding="utf-8") as handle:
        rows = list(_csv.DictReader(handle, delimiter="\t"))[:40]
    papers = {r["cord_uid"]: r["tweet_text"] for r in rows}
    with open(corpus, "w", newline="", encoding="utf-8") as handle:
        writer = _csv.writer(handle, delimiter="\t")
        writer.writerows([["cord_uid", "title", "abstract"], *([uid, "paper", text] for uid, text in papers.items())])
    queries = tmp_path / "q.tsv"
    with open(queries, "w", newline="", encoding="utf-8") as handle:
        writer = _csv.writer(handle, delimiter="\t")
        writer.writerows([["post_id", "tweet_text", "cord_uid"], *([r["post_id"], r["tweet_text"] + " paper", r["cord_uid"]] for r in rows)])
    out, sub = tmp_path / "run.trec", tmp_path / "sub.zip"
    done = run_cli("run", "bm25", "--set", "analyzer=simple", "--set", "k1=0.9", "--corpus", corpus, "--queries", queries,
                   "--out", out, "--k", "10", "--submit", "checkthat2025-4b", "--submission", sub, "--gold", queries,
                   env={"EVALKIT_CACHE": str(tmp_path / "cache")})
    assert done.returncode == 0, done.stderr
    assert "MRR@5" in done.stdout and sub.exists() and (tmp_path / "sub.zip.manifest.json").exists()
    assert run_cli("validate", sub, "--task", "checkthat2025-4b", "--gold", queries).returncode == 0


@pytest.mark.parametrize(
    "case, message",
    [
        ("dup", "corpus.jsonl:2: duplicate document id 'd1' (first on line 1)"),
        ("empty", "corpus.jsonl:2: document 'd2' has no text"),
        ("pickle", "collection.pkl: is a pickle; unpickling runs code"),
        ("system", "bm26: no such config file, shipped config (airwaves-bm25, "),
        ("option", "unknown option 'colour' for system bm25"),
        ("set", "option k1='high': expected float"),
        ("config", "bad.toml: stage 1: unknown key 'sytem'"),
        ("train", "train.qrels: 1 judged document id(s) are not in the corpus (e.g. d9); wrong corpus?"),
        ("train-queries", "1 query ids of"),
        ("input-retriever", "--input: bm25 is a retriever; --input feeds a reranker or labeler"),
        ("input-config", "--input goes with one reranker or labeler; in a config file, write a stage with run = FILE"),
        ("input-bad", "first.trec:1: cannot recognise the format (expected one of: climatecheck-run, checkthat-list, trec-run; force one with --input-format)"),
        ("input-foreign", "cross-encoder: document 'elsewhere' of run input is not in the corpus (wrong corpus?)"),
    ],
)
def test_cli_run_bad_input(tmp_path, case, message):
    good = '{"_id": "d1", "text": "sea"}\n{"_id": "d2", "text": "ice"}\n'
    corpus_text = {"dup": '{"_id": "d1", "text": "a"}\n{"_id": "d1", "text": "b"}\n', "empty": '{"_id": "d1", "text": "a"}\n{"_id": "d2", "text": ""}\n'}
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(corpus_text.get(case, good))
    if case == "pickle":
        corpus = tmp_path / "collection.pkl"
        corpus.write_bytes(b"\x80\x04N.")
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"_id": "q1", "text": "sea"}\n')
    (tmp_path / "bad.toml").write_text('[[stages]]\nsytem = "bm25"\n')
    (tmp_path / "train.qrels").write_text("q1 0 d1 1\n" + ("q1 0 d9 1\n" if case == "train" else "q7 0 d1 1\n"))
    (tmp_path / "first.trec").write_text("q1 Q0 elsewhere 1 1.0 x\n" if case == "input-foreign" else "q1 Q0\n")
    config = {"system": "bm26", "config": str(tmp_path / "bad.toml"), "input-config": "airwaves-bm25",
              "input-bad": "cross-encoder", "input-foreign": "cross-encoder"}.get(case, "bm25")
    tiny = ["--set", "model=" + str(tmp_path / "no-model-needed")]  # the corpus check comes before any model is loaded
    extra = {"option": ["--set", "colour=red"], "set": ["--set", "k1=high"],
             "input-retriever": ["--input", tmp_path / "first.trec"], "input-config": ["--input", tmp_path / "first.trec"],
             "input-bad": ["--input", tmp_path / "first.trec"], "input-foreign": ["--input", tmp_path / "first.trec", *tiny],
             "train": ["--train-queries", queries, "--train-qrels", tmp_path / "train.qrels"],
             "train-queries": ["--train-queries", queries, "--train-qrels", tmp_path / "train.qrels"]}.get(case, [])
    out = tmp_path / "out.trec"
    done = run_cli("run", config, "--corpus", corpus, "--queries", queries, "--out", out, *extra)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert message in lines[-1] and "Traceback" not in done.stderr
    assert not out.exists() and not (tmp_path / "out.trec.manifest.json").exists()


def test_systems_lists_bm25_with_options():
    done = run_cli("systems")
    assert done.returncode == 0
    assert "bm25  (retriever)" in done.stdout and "k1 (float, default 1.5)" in done.stdout and "shipped pipeline configs:" in done.stdout
