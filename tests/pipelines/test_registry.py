"""The system registry: decorator registration, entry points, options from --set."""
from __future__ import annotations

from importlib import metadata

import pytest

from evalkit.pipelines import registry
from evalkit.data.corpus import Corpus, Queries
from evalkit.data import Run
from evalkit.core.errors import UsageError
from evalkit.pipelines.stages import Retriever, option




import dataclasses


@dataclasses.dataclass
class TitleMatchOptions:
    k1: float = option(1.5, "unused weight")
    fields: list[str] = option(["title"], "fields to match")
    lowercase: bool = option(True, "lower-case before matching")


class TitleMatch(Retriever):
    """Scores a document by the number of query words in its chosen fields."""

    name = "title-match-test"
    description = "test retriever"
    Options = TitleMatchOptions

    def retrieve(self, corpus: Corpus, queries: Queries, k: int = 1000) -> Run:
        texts = corpus.texts(self.options.fields)
        scores = {}
        for qid, text in zip(queries.ids, queries.texts):
            words = set(text.lower().split())
            scored = {d: float(len(words & set(t.lower().split()))) for d, t in zip(corpus.ids, texts)}
            scores[qid] = dict(sorted(scored.items(), key=lambda kv: -kv[1])[:k])
        return Run.from_scores(scores, name=self.name)


def test_entry_point_plugin_is_found_and_runs(monkeypatch):
    ep = metadata.EntryPoint(name="title-match-test", value=f"{__name__}:TitleMatch", group=registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(registry, "_ENTRY_POINTS", {"title-match-test": ep})
    monkeypatch.setattr(registry, "_REGISTRY", {})
    assert "title-match-test" in registry.system_names()
    system = registry.load_system("title-match-test", fields=["title", "text"])
    corpus = Corpus.from_records([{"id": "d1", "title": "sea level", "text": "rise"}, {"id": "d2", "title": "plants", "text": ""}])
    run = system.retrieve(corpus, Queries(["q"], ["Sea level rise"]), k=2)
    assert run.to_lists() == {"q": ["d1", "d2"]}


def test_set_options_are_typed_and_checked():
    options = registry.parse_set_options(TitleMatch, ["k1=1.2", "fields=title, text", "lowercase=no"])
    assert options == {"k1": 1.2, "fields": ["title", "text"], "lowercase": False}
    with pytest.raises(UsageError, match="unknown option 'b'"):
        registry.parse_set_options(TitleMatch, ["b=0.75"])
    with pytest.raises(UsageError, match="expected float"):
        registry.parse_set_options(TitleMatch, ["k1=high"])
    with pytest.raises(UsageError, match="unknown option 'nope'"):
        TitleMatch(nope=1)


def test_unknown_system():
    with pytest.raises(UsageError, match="unknown system 'nosuch'"):
        registry.load_system("nosuch")


def test_describe_options():
    rows = registry.describe_options(TitleMatch)
    assert rows[0] == ("k1", "float", 1.5, "unused weight")


def test_save_and_load_round_trip(tmp_path):
    system = TitleMatch(k1=2.0)
    system.save(tmp_path / "saved")
    assert TitleMatch.load(tmp_path / "saved").options.k1 == 2.0


PLUGIN = '''
import dataclasses
from evalkit.data import Run
from evalkit.pipelines.stages import Retriever, option


@dataclasses.dataclass
class Options:
    bonus: float = option(0.0, "added to every score")


class LengthRetriever(Retriever):
    """Prefers short documents (a toy, but a real installed plugin)."""

    name = "shortest-first"
    description = "third-party test plugin"
    Options = Options

    def retrieve(self, corpus, queries, k=1000):
        texts = corpus.texts()
        scores = {d: self.options.bonus - len(t) for d, t in zip(corpus.ids, texts)}
        top = dict(sorted(scores.items(), key=lambda kv: -kv[1])[:k])
        return Run.from_scores({q: top for q in queries.ids})
'''


def test_installed_plugin_distribution_is_discovered_by_the_cli(tmp_path):
    """A package with an ``evalkit.systems`` entry point in its dist-info, as pip would install it."""
    from support.helpers import run_cli

    site = tmp_path / "site"
    (site / "evalkit_plugin_demo").mkdir(parents=True)
    (site / "evalkit_plugin_demo" / "__init__.py").write_text(PLUGIN)
    info = site / "evalkit_plugin_demo-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: evalkit-plugin-demo\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[evalkit.systems]\nshortest-first = evalkit_plugin_demo:LengthRetriever\n")
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"_id": "long", "text": "a much longer document"}\n{"_id": "short", "text": "tiny"}\n')
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"_id": "q1", "text": "anything"}\n')
    import os

    env = {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    listed = run_cli("systems", env=env)
    assert "shortest-first  (retriever) third-party test plugin" in listed.stdout and "bonus (float, default 0.0)" in listed.stdout
    done = run_cli("run", "shortest-first", "--set", "bonus=1", "--corpus", corpus, "--queries", queries, "--out", tmp_path / "r.trec", env=env)
    assert done.returncode == 0, done.stderr
    lines = (tmp_path / "r.trec").read_text().splitlines()
    assert [line.split()[2] for line in lines] == ["short", "long"]


def test_system_modules_import_no_heavy_library():
    """Listing or configuring systems must not load torch / transformers / sentence-transformers / ranx."""
    import subprocess
    import sys

    code = (
        "import sys, evalkit.pipelines.runner, evalkit.cli.run\n"
        "from evalkit.pipelines.registry import get_system_class, system_names\n"
        "[get_system_class(n) for n in system_names()]\n"
        "print(sorted(m for m in ('torch', 'transformers', 'sentence_transformers', 'ranx') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
