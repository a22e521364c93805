"""The plugin contract: a reranker implements score(query, texts), a labeler label_pairs(...);
the base classes own candidates, texts, depth, merging, and plugins load through entry points."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from evalkit import registry
from evalkit.corpus import Corpus, Queries
from evalkit.data import Run
from evalkit.errors import UsageError
from evalkit.stages import DEFAULT_RERANK_DEPTH, Labeler, Reranker

PLUGIN = '''
from evalkit.stages import Labeler, Reranker


class WordOverlap(Reranker):
    """Scores a text by the number of query words it contains."""

    def score(self, query, texts):
        words = set(query.lower().split())
        return [float(len(words & set(text.lower().split()))) for text in texts]


class Keyword(Labeler):
    def label_pairs(self, claims, texts, query_ids):
        return ["Supports" if "rise" in text else "Not Enough Information" for text in texts]
'''


def corpus() -> Corpus:
    texts = {"d1": "ice melts", "d2": "sea level rise", "d3": "sea ice rise level", "d4": "nothing", "d5": "sea"}
    return Corpus(ids=list(texts), fields={"title": [""] * 5, "text": list(texts.values())})


def queries() -> Queries:
    return Queries(ids=["q1"], texts=["sea level rise"])


def first_stage() -> Run:
    return Run.from_lists({"q1": ["d4", "d1", "d5", "d2", "d3"]})


@pytest.fixture
def plugin_module(tmp_path, monkeypatch):
    (tmp_path / "overlap_plugin.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    return importlib.import_module("overlap_plugin")


def test_reranker_implements_only_score(plugin_module):
    reranker = type("Overlap", (plugin_module.WordOverlap,), {"name": "overlap"})()
    out = reranker.rerank(corpus(), queries(), first_stage(), depth=4)
    # top 4 of the input re-scored: d2 3 words, d5 1, d1 0, d4 0 (tie: doc id descending); d3 (5th) kept below
    assert out.to_lists() == {"q1": ["d2", "d5", "d4", "d1", "d3"]}
    assert out.name == "overlap"


def test_input_order_does_not_matter(plugin_module):
    reranker = type("Overlap", (plugin_module.WordOverlap,), {"name": "overlap"})()
    shuffled = Run.from_scores({"q1": {"d3": 1.0, "d2": 2.0, "d5": 3.0, "d1": 4.0, "d4": 5.0}})
    assert reranker.rerank(corpus(), queries(), shuffled, depth=4).to_lists() == \
        reranker.rerank(corpus(), queries(), first_stage(), depth=4).to_lists()


def test_default_depth_is_one_constant(plugin_module):
    reranker = type("Overlap", (plugin_module.WordOverlap,), {"name": "overlap"})()
    assert reranker.rerank_depth(None) == DEFAULT_RERANK_DEPTH == 100
    assert len(reranker.rerank(corpus(), queries(), first_stage()).to_lists()["q1"]) == 5


def test_labeler_implements_only_label_pairs(plugin_module):
    labeler = type("Kw", (plugin_module.Keyword,), {"name": "kw"})()
    out = labeler.label(corpus(), queries(), first_stage(), depth=3)
    assert out.to_lists() == {"q1": ["d4", "d1", "d5"]}
    assert list(out.labels) == ["Not Enough Information"] * 3


def test_wrong_number_of_scores_is_one_line():
    class Broken(Reranker):
        name = "broken"

        def score(self, query, texts):
            return [1.0]

    with pytest.raises(UsageError, match="returned 1 scores for 5 texts"):
        Broken().rerank(corpus(), queries(), first_stage(), depth=5)


def test_nothing_implemented_is_one_line():
    class Empty(Reranker):
        name = "empty"

    class Nothing(Labeler):
        name = "nothing"

    with pytest.raises(UsageError, match="implements neither score"):
        Empty().rerank(corpus(), queries(), first_stage())
    with pytest.raises(UsageError, match="does not implement label_pairs"):
        Nothing().label(corpus(), queries(), first_stage())


def test_register_without_name_is_one_line():
    class NoName(Reranker):
        def score(self, query, texts):
            return [0.0] * len(texts)

    with pytest.raises(UsageError, match="needs a `name`"):
        registry.register_system(NoName)


def dist_info(site, name: str, entries: str) -> None:
    info = site / f"{name}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[evalkit.systems]\n{entries}\n")


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


def test_broken_plugin_names_its_package(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    dist_info(site, "shiny-reranker", "shiny = shiny_missing_module:Shiny")
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run([sys.executable, "-m", "evalkit", "run", "shiny", "--corpus", "c.tsv", "--queries", "q.tsv", "--out", "o.trec"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "shiny-reranker" in done.stderr
