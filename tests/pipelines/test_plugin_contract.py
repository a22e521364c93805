"""The plugin contract: a reranker implements score(query, texts), a labeler label_claim(claim, texts);
the base classes own candidates, texts, depth, merging, labels, and plugins load through entry points
(named after the entry point when the class has no name; a broken one is one line)."""
from __future__ import annotations

import dataclasses
import os
import random
import subprocess
import sys

import pytest

from evalkit.pipelines import registry
from evalkit.data.corpus import Corpus, Queries
from evalkit.data import Run
from evalkit.core.errors import UsageError
from evalkit.pipelines.runner import Pipeline
from evalkit.pipelines.config import parse_config
from evalkit.pipelines.stages import DEFAULT_LABEL_DEPTH, DEFAULT_RERANK_DEPTH, Candidates, Engine, Labeler, Reranker, merge_reranked, System

PLUGIN = '''
from evalkit.pipelines.stages import Labeler, Reranker


class WordOverlap(Reranker):
    """Scores a text by the number of query words it contains."""

    def score(self, query, texts):
        words = set(query.lower().split())
        return [float(len(words & set(text.lower().split()))) for text in texts]


class Keyword(Labeler):
    """Supports when a text holds the claim's last word, else NEI."""

    def label_claim(self, claim, texts):
        word = claim.split()[-1].lower()
        return ["supports" if word in text.lower().split() else "NEI" for text in texts]
'''
SUPPORTS, NEI = "Supports", "Not Enough Information"


def corpus() -> Corpus:
    texts = {"d1": "ice melts", "d2": "sea level rise", "d3": "sea ice rise level", "d4": "nothing", "d5": "sea"}
    return Corpus(ids=list(texts), fields={"title": [""] * 5, "text": list(texts.values())})


def queries() -> Queries:
    return Queries(["q1"], ["sea level rise"])


def first_stage() -> Run:
    return Run.from_lists({"q1": ["d4", "d1", "d5", "d2", "d3"]}, name="first")


@pytest.fixture
def plugin_module(tmp_path, monkeypatch):
    (tmp_path / "overlap_plugin.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "overlap_plugin", raising=False)
    import importlib

    yield importlib.import_module("overlap_plugin")
    sys.modules.pop("overlap_plugin", None)


@pytest.fixture
def clean_registry(monkeypatch):
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    registry.refresh()
    yield
    registry.refresh()


def named(cls: type, name: str) -> type:
    return type(cls.__name__, (cls,), {"name": name})


# ------------------------------------------------------------------ rerankers: the base class owns the plumbing
def test_reranker_implements_only_score(plugin_module):
    out = named(plugin_module.WordOverlap, "overlap")().rerank(corpus(), queries(), first_stage(), depth=4)
    # top 4 of the input re-scored: d2 3 words, d5 1, d1 0, d4 0 (tie: doc id descending); d3 (5th) kept below
    assert out.to_lists() == {"q1": ["d2", "d5", "d4", "d1", "d3"]}
    assert out.name == "overlap"


def test_ties_by_doc_id_descending_and_rest_below_in_order(plugin_module):
    reranker = named(plugin_module.WordOverlap, "overlap")()
    assert reranker.rerank(corpus(), queries(), first_stage(), depth=5).to_lists() == {"q1": ["d3", "d2", "d5", "d4", "d1"]}
    assert reranker.rerank(corpus(), queries(), first_stage(), depth=3).to_lists() == {"q1": ["d5", "d4", "d1", "d2", "d3"]}


def test_input_order_does_not_matter(plugin_module):
    reranker = named(plugin_module.WordOverlap, "overlap")()
    expected = reranker.rerank(corpus(), queries(), first_stage(), depth=4).to_scores()
    ranked = ["d4", "d1", "d5", "d2", "d3"]
    rows = [("q1", d, float(10 - i)) for i, d in enumerate(ranked)] + [("q2", d, 1.0) for d in ranked]
    two = Queries(["q2", "q1"], ["ice", "sea level rise"])
    for seed in range(5):
        random.Random(seed).shuffle(rows)
        run = Run.from_rows([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])
        assert reranker.rerank(corpus(), two, run, depth=4).to_scores()["q1"] == expected["q1"]


def test_default_depth_is_one_constant_overridable_by_the_class(plugin_module):
    reranker = named(plugin_module.WordOverlap, "overlap")()
    assert reranker.rerank_depth(None) == DEFAULT_RERANK_DEPTH == 100 and Labeler.default_depth == DEFAULT_LABEL_DEPTH == 10
    assert len(reranker.rerank(corpus(), queries(), first_stage()).to_lists()["q1"]) == 5
    shallow = type("Shallow", (plugin_module.WordOverlap,), {"name": "shallow", "default_depth": 3})()
    assert shallow.rerank(corpus(), queries(), first_stage()).to_lists() == {"q1": ["d5", "d4", "d1", "d2", "d3"]}
    assert shallow.rerank(corpus(), queries(), first_stage(), depth=5).to_lists()["q1"][0] == "d3"
    with pytest.raises(UsageError, match="depth must be positive"):
        reranker.rerank(corpus(), queries(), first_stage(), depth=0)


def test_model_calls_go_through_one_score_pairs_call_on_the_engine(plugin_module):
    calls = []

    class Recording(Engine):
        name = "recording"

        def run(self, work):
            calls.append(tuple(list(column) for column in work.columns))
            return super().run(work)

    reranker = named(plugin_module.WordOverlap, "overlap")()
    two = Queries(["q1", "q2"], ["sea level rise", "ice"])
    run = Run.from_lists({"q1": ["d4", "d1", "d5"], "q2": ["d1", "d3"]})
    out = reranker.rerank(corpus(), two, run, depth=2, engine=Recording())
    assert calls == [(["sea level rise", "sea level rise", "ice", "ice"], ["nothing", "ice melts", "ice melts", "sea ice rise level"])]
    assert out.to_lists() == {"q1": ["d4", "d1", "d5"], "q2": ["d3", "d1"]}


def test_an_instance_without_name_is_named_after_its_class(plugin_module):
    out = plugin_module.WordOverlap().rerank(corpus(), queries(), first_stage(), depth=2)
    assert out.name == "WordOverlap"


def test_merge_keeps_the_rest_below_even_for_huge_scores():
    run = Run.from_lists({"q": ["a", "b", "c", "d"]})
    merged = merge_reranked(run, {"q": {"b": 1e17, "a": 1e17 + 64}}, depth=2)
    assert merged.to_lists() == {"q": ["a", "b", "c", "d"]}
    scores = merged.to_scores()["q"]
    assert scores["b"] > scores["c"] > scores["d"]


def test_wrong_scores_are_one_line():
    class Broken(Reranker):
        name = "broken"

        def score(self, query, texts):
            return [1.0]

    class Infinite(Reranker):
        def score(self, query, texts):
            return [float("inf")] * len(texts)

    class Forgetful(Reranker):  # a listwise hook that loses a candidate
        def score_lists(self, candidates: Candidates):
            return {q: {d: 1.0 for d in docs[1:]} for q, docs in candidates.docs.items()}

    with pytest.raises(UsageError, match="returned 1 scores for 5 texts"):
        Broken().rerank(corpus(), queries(), first_stage(), depth=5)
    class Wordy(Reranker):
        def score(self, query, texts):
            return ["high"] * len(texts)

    with pytest.raises(UsageError, match="'Infinite': score inf .* is not a finite number"):
        Infinite().rerank(corpus(), queries(), first_stage())
    with pytest.raises(UsageError, match="'Wordy': score 'high' for query 'q1', document 'd4' is not a finite number"):
        Wordy().rerank(corpus(), queries(), first_stage())
    with pytest.raises(UsageError, match="'Forgetful': no score for document 'd4' of query 'q1'"):
        Forgetful().rerank(corpus(), queries(), first_stage())


def test_nothing_implemented_is_one_line():
    class Empty(Reranker):
        name = "empty"

    class Nothing(Labeler):
        name = "nothing"

    with pytest.raises(UsageError, match="implements neither score"):
        Empty().rerank(corpus(), queries(), first_stage())
    with pytest.raises(UsageError, match="does not implement label_pairs.* or label_claim"):
        Nothing().label(corpus(), queries(), first_stage())


# ------------------------------------------------------------------ labelers
def test_labeler_implements_only_label_claim(plugin_module):
    out = named(plugin_module.Keyword, "kw")().label(corpus(), queries(), first_stage(), depth=4)
    assert out.to_lists() == {"q1": ["d4", "d1", "d5", "d2"]}  # the ranking unchanged, cut at depth
    assert list(out.labels) == [NEI, NEI, NEI, SUPPORTS]  # "supports" / "NEI" in their canonical spelling
    assert len(named(plugin_module.Keyword, "kw")().label(corpus(), queries(), first_stage()).to_lists()["q1"]) == 5


def test_labeler_may_batch_with_label_pairs():
    class Batched(Labeler):
        def label_pairs(self, claims, texts, query_ids):
            return [SUPPORTS if "rise" in text else NEI for text in texts]

    out = Batched().label(corpus(), queries(), first_stage(), depth=5)
    assert list(out.labels) == [NEI, NEI, NEI, SUPPORTS, SUPPORTS] and out.name == "first+Batched"


def test_bad_labels_are_one_line():
    class Unsure(Labeler):
        def label_claim(self, claim, texts):
            return ["maybe"] * len(texts)

    class Short(Labeler):
        def label_claim(self, claim, texts):
            return [NEI]

    with pytest.raises(UsageError, match="label 'maybe' for query 'q1', document 'd4' is not one of Supports, Refutes"):
        Unsure().label(corpus(), queries(), first_stage())
    with pytest.raises(UsageError, match="label_claim\\(\\) returned 1 labels for 5 texts"):
        Short().label(corpus(), queries(), first_stage())


# ------------------------------------------------------------------ registration and pipelines
def test_registered_plugins_run_in_a_pipeline(plugin_module, clean_registry, tmp_path):
    registry.register_system(named(plugin_module.WordOverlap, "word-overlap"))
    registry.register_system(named(plugin_module.Keyword, "keyword-labels"))
    (tmp_path / "first.trec").write_text("".join(f"q1 Q0 {d} {r} {10 - r} x\n" for r, d in enumerate(first_stage().to_lists()["q1"], 1)))
    pipeline = Pipeline(parse_config({"name": "p", "stages": [
        {"run": str(tmp_path / "first.trec")},
        {"name": "rerank", "system": "word-overlap", "depth": 4},
        {"name": "verify", "system": "keyword-labels", "depth": 3},
    ]}))
    runs = pipeline.run(corpus(), queries())
    assert runs["rerank"].to_lists() == {"q1": ["d2", "d5", "d4", "d1", "d3"]}
    assert runs["verify"].to_lists() == {"q1": ["d2", "d5", "d4"]} and list(runs["verify"].labels) == [SUPPORTS, NEI, NEI]


def test_register_without_name_or_kind_is_one_line():
    class NoName(Reranker):
        def score(self, query, texts):
            return [0.0] * len(texts)

    class NoKind:
        name = "no-kind"

    class ClaimsAKind(System):  # a stage kind without the stage's contract (no retrieve): refused, not run and failed
        name = "claims-a-kind"
        kind = "retriever"

    class OtherContract(Reranker):  # a reranker saying it is a retriever
        name = "other-contract"
        kind = "retriever"

        def score(self, query, texts):
            return [0.0] * len(texts)

    @dataclasses.dataclass
    class Fine:
        x: int = 1

    class BadOptions(Reranker):
        name = "bad-options"
        Options = dict

    for cls, message in [(NoName, "NoName needs a `name`"), (NoKind, "no-kind needs a `name` and must subclass"),
                         (ClaimsAKind, "claims-a-kind needs a `name` and must subclass"),
                         (OtherContract, "other-contract needs a `name` and must subclass"),
                         (BadOptions, "bad-options: Options must be a dataclass")]:
        with pytest.raises(UsageError, match=message):
            registry.register_system(cls)
    assert registry.parse_set_options(type("Anon", (Reranker,), {"Options": Fine}), ["x=2"]) == {"x": 2}
    with pytest.raises(UsageError, match="unknown option 'y' for system Anon"):
        registry.parse_set_options(type("Anon", (Reranker,), {"Options": Fine}), ["y=2"])
    with pytest.raises(UsageError, match="Options must be a dataclass"):
        registry.parse_set_options(BadOptions, ["x=1"])


def dist_info(site, name: str, entries: str) -> None:
    info = site / f"{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[evalkit.systems]\n{entries}\n")


def test_entry_point_plugin_in_process_takes_the_entry_point_name(tmp_path, monkeypatch, clean_registry):
    site = tmp_path / "site"
    site.mkdir()
    (site / "ep_overlap_plugin.py").write_text(PLUGIN + "\n\nclass NotASystem:\n    pass\n")
    (site / "ep_broken_plugin.py").write_text("raise RuntimeError('half installed')\n")
    dist_info(site, "ep-overlap", "ep-overlap = ep_overlap_plugin:WordOverlap\nep-keyword = ep_overlap_plugin:Keyword\n"
                                  "ep-not-a-system = ep_overlap_plugin:NotASystem\nep-broken = ep_broken_plugin:Thing")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "ep_overlap_plugin", raising=False)
    registry.refresh()
    assert {"ep-overlap", "ep-keyword"} <= set(registry.system_names())
    reranker = registry.load_system("ep-overlap")
    assert reranker.name == "ep-overlap" and registry.get_system_class("ep-overlap").name == "ep-overlap"
    assert reranker.rerank(corpus(), queries(), first_stage(), depth=4).to_lists() == {"q1": ["d2", "d5", "d4", "d1", "d3"]}
    labeler = registry.load_system("ep-keyword")
    assert labeler.name == "ep-keyword" and list(labeler.label(corpus(), queries(), first_stage(), depth=2).labels) == [NEI, NEI]
    with pytest.raises(UsageError, match="'ep-not-a-system' .* of ep-overlap is not an evalkit system") as info:
        registry.get_system_class("ep-not-a-system")
    assert "\n" not in str(info.value)
    with pytest.raises(UsageError, match="'ep-broken' .* of ep-overlap cannot be loaded: RuntimeError: half installed"):
        registry.get_system_class("ep-broken")
    sys.modules.pop("ep_overlap_plugin", None)


def test_entry_point_plugin_gets_its_name_and_runs_in_a_pipeline(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "overlap_plugin.py").write_text(PLUGIN)
    dist_info(site, "overlap-plugin", "word-overlap = overlap_plugin:WordOverlap\nkeyword-labels = overlap_plugin:Keyword")
    (tmp_path / "corpus.tsv").write_text("id\ttext\n" + "".join(f"{d}\t{t}\n" for d, t in zip(corpus().ids, corpus().fields["text"])))
    (tmp_path / "queries.tsv").write_text("q1\tsea level rise\n")
    (tmp_path / "first.trec").write_text("".join(f"q1 Q0 {d} {r} {10 - r} x\n" for r, d in enumerate(["d4", "d1", "d5", "d2", "d3"], 1)))
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run([sys.executable, "-m", "evalkit", "run", "word-overlap", "--corpus", "corpus.tsv", "--queries", "queries.tsv",
                           "--input", "first.trec", "--out", "out.trec"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = (tmp_path / "out.trec").read_text().splitlines()
    assert [line.split()[2] for line in lines] == ["d3", "d2", "d5", "d4", "d1"]  # d3, d2: 3 words each, doc id descending
    assert all(line.split()[5] == "word-overlap" for line in lines)  # the entry-point name became the system name
    listed = subprocess.run([sys.executable, "-m", "evalkit", "systems"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert "word-overlap" in listed.stdout and "keyword-labels" in listed.stdout
    # the base class owns depth: a reranker that implements only score takes it from --set depth=N or --depth N
    for depth_args in (["--set", "depth=2"], ["--depth", "2"]):
        done = subprocess.run([sys.executable, "-m", "evalkit", "run", "word-overlap", "--corpus", "corpus.tsv", "--queries", "queries.tsv",
                               "--input", "first.trec", "--out", "d.trec", "--force", *depth_args], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        lines = (tmp_path / "d.trec").read_text().splitlines()
        assert [line.split()[2] for line in lines] == ["d4", "d1", "d5", "d2", "d3"]  # only d4, d1 re-scored (1 word each: tie)
    config = tmp_path / "cfg.toml"
    config.write_text('[[stages]]\nname = "first"\nrun = "first.trec"\n[[stages]]\nname = "wo"\nsystem = "word-overlap"\noptions = { depth = 2 }\n')
    done = subprocess.run([sys.executable, "-m", "evalkit", "run", "cfg.toml", "--corpus", "corpus.tsv", "--queries", "queries.tsv",
                           "--out", "c.trec"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert [line.split()[2] for line in (tmp_path / "c.trec").read_text().splitlines()] == ["d4", "d1", "d5", "d2", "d3"]


def test_broken_plugin_names_its_package(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    dist_info(site, "shiny-reranker", "shiny = shiny_missing_module:Shiny")
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run([sys.executable, "-m", "evalkit", "run", "shiny", "--corpus", "c.tsv", "--queries", "q.tsv", "--out", "o.trec"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "pip install --force-reinstall shiny-reranker" in done.stderr and "evalkit-ir[systems]" not in done.stderr


# ------------------------------------------------------------------ docs/plugins.md stays true
def docs_block(marker: str) -> str:
    """The fenced block right after ``<!-- plugins-test: MARKER -->`` in docs/plugins.md."""
    import re

    from support.helpers import REPO

    text = (REPO / "docs" / "plugins.md").read_text()
    match = re.search(rf"<!-- plugins-test: {re.escape(marker)} -->\n```\w*\n(.+?)\n```", text, re.S)
    assert match, f"docs/plugins.md has no block marked {marker}"
    return match.group(1)


def test_docs_example_installs_and_runs_its_pipeline(tmp_path, monkeypatch, clean_registry):
    import tomllib

    project = tomllib.loads(docs_block("pyproject"))
    entries = project["project"]["entry-points"]["evalkit.systems"]
    site = tmp_path / "site"
    (site / "overlap_systems").mkdir(parents=True)
    (site / "overlap_systems" / "__init__.py").write_text(docs_block("package"))
    dist_info(site, project["project"]["name"], "\n".join(f"{name} = {target}" for name, target in entries.items()))
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "overlap_systems", raising=False)
    registry.refresh()
    assert [registry.get_system_class(name).name for name in entries] == ["overlap", "overlap-rerank", "overlap-verify"]
    assert ("depth", "int", 20, "rerank the top DEPTH documents of the input run") in registry.describe_options(
        registry.get_system_class("overlap-rerank"))
    runs = Pipeline(parse_config(tomllib.loads(docs_block("pipeline")))).run(corpus(), queries())
    assert runs["first"].to_lists() == {"q1": ["d3", "d2", "d5", "d4", "d1"]}
    assert runs["rerank"].to_lists() == runs["first"].to_lists()
    assert runs["verify"].to_lists() == runs["first"].to_lists()
    assert list(runs["verify"].labels) == [SUPPORTS, SUPPORTS, NEI, NEI, NEI]
    sys.modules.pop("overlap_systems", None)
