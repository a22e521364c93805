"""BM25: analyzers, the two backends against each other and a hand computation, the index cache, SciFact nDCG@10."""
from __future__ import annotations

import math
import sys
import types

import numpy as np
import pytest

from evalkit.data.corpus import Corpus, Queries
from evalkit.core.errors import UsageError
from evalkit.pipelines.registry import get_system_class, load_system
from evalkit.systems import bm25_index
from evalkit.systems.analyzers import SpacyLemma, get_analyzer
from evalkit.systems.bm25 import BM25

from support.helpers import SHARED, shared_or_skip


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALKIT_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


TINY = Corpus.from_records(
    [
        {"id": "d1", "title": "a b", "text": "c"},
        {"id": "d2", "title": "", "text": "a a d"},
        {"id": "d3", "title": "b", "text": "e"},
    ]
)


def scores_of(run) -> dict[str, dict[str, float]]:
    return run.to_scores()


# ----------------------------------------------------------------- analyzers
def test_analyzers_on_inline_text():
    text = "The Mice were RUNNING in 2 mazes, e.g. COVID-19's."
    assert get_analyzer("whitespace")(text) == ["The", "Mice", "were", "RUNNING", "in", "2", "mazes,", "e.g.", "COVID-19's."]
    assert get_analyzer("simple")(text) == ["the", "mice", "were", "running", "in", "2", "mazes", "e", "g", "covid", "19", "s"]
    assert get_analyzer("stem")(text) == ["mice", "were", "run", "2", "maze", "e", "g", "covid", "19", "s"]
    assert get_analyzer("stem")("Generalization generalizes; THE generalized") == ["general", "general", "general"]
    assert get_analyzer("simple")("") == [] and get_analyzer("stem")("the of and") == []
    assert list(get_analyzer("simple").many(["A b", "C"])) == [["a", "b"], ["c"]]


def test_unknown_analyzer_and_bad_options():
    with pytest.raises(UsageError, match="unknown analyzer 'porter'.*known: simple, spacy-lemma, stem, whitespace"):
        get_analyzer("porter")
    with pytest.raises(UsageError, match="unknown analyzer"):
        BM25(analyzer="porter")
    with pytest.raises(UsageError, match="unknown bm25 backend 'lucene'"):
        BM25(backend="lucene")
    with pytest.raises(UsageError, match="0 <= b <= 1"):
        BM25(b=1.5)
    with pytest.raises(UsageError, match="unknown option 'k3'"):
        BM25(k3=1)
    with pytest.raises(UsageError, match="none of the fields abstract"):
        BM25(fields=["abstract"]).retrieve(TINY, Queries(["q"], ["b"]))


def test_spacy_missing_gives_install_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "spacy", None)  # import spacy -> ImportError
    with pytest.raises(UsageError, match=r"pip install spacy && python -m spacy download en_core_web_sm"):
        BM25(analyzer="spacy-lemma").retrieve(TINY, Queries(["q"], ["b"]))


def test_spacy_model_missing_gives_install_hint(monkeypatch):
    def load(name, disable=()):
        raise OSError(f"[E050] Can't find model '{name}'")

    monkeypatch.setitem(sys.modules, "spacy", types.SimpleNamespace(load=load))
    with pytest.raises(UsageError, match=r"model en_core_web_sm: pip install spacy && python -m spacy download"):
        SpacyLemma()


def fake_spacy(monkeypatch) -> None:
    """A stand-in spaCy whose 'model' lemmatises a few words, to run the real filtering code."""
    lemmas = {"mice": "mouse", "were": "be", "running": "run", "mazes": "maze"}
    stops = {"the", "were", "in"}

    def token(word):
        return types.SimpleNamespace(lemma_=lemmas.get(word.lower(), word), is_stop=word.lower() in stops,
                                     is_alpha=word.isalpha(), is_digit=word.isdigit(), like_num=word in {"two"})

    class Nlp:
        def __call__(self, text):
            return [token(w) for w in text.replace(",", " ,").split()]

        def pipe(self, texts, batch_size=256):
            return (self(t) for t in texts)

    monkeypatch.setitem(sys.modules, "spacy", types.SimpleNamespace(load=lambda name, disable=(): Nlp()))


def test_spacy_lemma_filters_stop_words_and_non_alphanumeric(monkeypatch):
    fake_spacy(monkeypatch)
    analyzer = SpacyLemma()
    assert analyzer("The Mice were running in 2 mazes , x-1") == ["mouse", "run", "2", "maze"]
    assert list(analyzer.many(["Mice", "two"])) == [["mouse"], ["two"]]


# ----------------------------------------------------------------- the formula
def test_rank_bm25_equals_hand_computation():
    # whitespace tokens: d1 = a b c (3), d2 = a a d (3), d3 = b e (2); N = 3, avgdl = 8/3
    k1, b, avgdl = 1.2, 0.75, 8 / 3
    idf1, idf2 = math.log(2.5 / 1.5), math.log(1.5 / 2.5)  # df 1 (c, d, e) and df 2 (a, b: negative)
    floor = 0.25 * (3 * idf1 + 2 * idf2) / 5  # rank-bm25: negative idf -> epsilon * mean idf

    def tfc(tf, dl):
        return tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))

    expected = {"d1": floor * tfc(1, 3) + idf1 * tfc(1, 3), "d2": floor * tfc(2, 3), "d3": 0.0}
    for backend in ("rank-bm25", "sparse"):
        run = BM25(analyzer="whitespace", k1=k1, b=b, backend=backend).retrieve(TINY, Queries(["q"], ["a c"]), k=10)
        got = scores_of(run)["q"]
        assert list(got) == ["d1", "d2"]  # d3 shares no term: not returned
        for doc, value in got.items():
            assert value == pytest.approx(expected[doc], rel=1e-6)


def assert_same_runs(corpus: Corpus, queries: Queries, **options) -> None:
    runs = {b: scores_of(BM25(backend=b, **options).retrieve(corpus, queries, k=len(corpus))) for b in ("rank-bm25", "sparse")}
    reference, fast = runs["rank-bm25"], runs["sparse"]
    assert set(reference) == set(fast) == set(queries.ids)
    for qid in queries.ids:
        assert set(reference[qid]) == set(fast[qid]), qid
        ref = np.array([reference[qid][d] for d in fast[qid]])  # reference scores in the fast ranking's order
        got = np.array(list(fast[qid].values()))
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
        assert np.all(np.diff(ref) <= 1e-5)  # same ranking up to float32 near-ties


def test_backends_agree_on_inline_corpus():
    queries = Queries(["q1", "q2", "q3", "q4"], ["a b", "a a e", "b c d e", "zzz"])
    assert_same_runs(TINY, queries, analyzer="whitespace")


@pytest.mark.realdata
def test_backends_agree_on_medline(monkeypatch):
    from evalkit.io.formats.collections import read_corpus, read_queries

    monkeypatch.setattr(bm25_index, "ROW_CHUNK", 100)  # weights computed in 11 chunks
    monkeypatch.setattr(bm25_index, "MAX_BATCH_CELLS", 5000)  # queries scored 4 at a time

    folder = shared_or_skip(SHARED / "medline")
    corpus, queries = read_corpus(folder / "MED.ALL"), read_queries(folder / "MED.QRY")
    for analyzer in ("whitespace", "stem"):
        assert_same_runs(corpus, queries, analyzer=analyzer)


# ----------------------------------------------------------------- run shape
def test_top_k_ties_follow_the_ranking_rule():
    corpus = Corpus.from_records([{"id": d, "text": "same words"} for d in ("d1", "d9", "d10", "d2")])
    for backend in ("rank-bm25", "sparse"):
        run = BM25(backend=backend).retrieve(corpus, Queries(["q"], ["words"]), k=2)
        assert run.to_lists() == {"q": ["d9", "d2"]}  # equal scores: doc id descending, byte-wise


def test_empty_corpus_empty_queries_and_no_hits():
    queries = Queries(["q1", "q2", "q3"], ["", "the of", "unseen"])
    for backend in ("rank-bm25", "sparse"):
        run = BM25(backend=backend).retrieve(Corpus(ids=[], fields={"title": [], "text": []}), queries, k=5)
        assert run.to_lists() == {"q1": [], "q2": [], "q3": []}
        run = BM25(analyzer="simple", backend=backend).retrieve(TINY, Queries(["q1", "q2", "q3", "q4"], ["", "...", "unseen", "a"]), k=5)
        lists = run.to_lists()
        assert set(lists) == {"q1", "q2", "q3", "q4"} and lists["q1"] == lists["q2"] == lists["q3"] == []
        assert lists["q4"] == ["d2", "d1"]
        empty_docs = Corpus.from_records([{"id": "d1", "text": ""}, {"id": "d2", "text": "the"}])
        assert BM25(backend=backend).retrieve(empty_docs, Queries(["q"], ["x"])).to_lists() == {"q": []}
    with pytest.raises(UsageError, match="k must be positive"):
        BM25().retrieve(TINY, queries, k=0)


def test_registered_under_bm25_with_documented_options():
    assert get_system_class("bm25") is BM25
    system = load_system("bm25", analyzer="simple", fields=["text"])
    assert system.config()["options"]["fields"] == ["text"] and "epsilon" not in system.config()["options"]
    assert "0.25 * mean idf" in BM25.description and "Lucene" in BM25.description


# ----------------------------------------------------------------- the cache
def test_second_retrieve_loads_the_cached_index(monkeypatch, cache):
    queries = Queries(["q"], ["a c"])
    for backend in ("sparse", "rank-bm25"):
        first = BM25(backend=backend).retrieve(TINY, queries)

        def no_rebuild(self, corpus):
            raise AssertionError("index rebuilt although cached")

        with monkeypatch.context() as patch:
            patch.setattr(BM25, "build_index", no_rebuild)
            second = BM25(backend=backend).retrieve(TINY, queries)
        assert scores_of(second) == scores_of(first)
    folders = [p for p in cache.joinpath("bm25").iterdir()]
    assert len(folders) == 2 and all((p / "meta.json").exists() for p in folders)
    assert not list(cache.rglob("*.pkl")) and not list(cache.rglob("*.pickle"))


@pytest.mark.parametrize("change", [{"k1": 1.2}, {"b": 0.5}, {"analyzer": "simple"}, {"fields": ["text"]}, {"backend": "rank-bm25"}])
def test_cache_invalidates_when_a_key_part_changes(monkeypatch, change):
    BM25().retrieve(TINY, Queries(["q"], ["b"]))
    built = []
    original = BM25.build_index
    monkeypatch.setattr(BM25, "build_index", lambda self, corpus: built.append(1) or original(self, corpus))
    BM25().retrieve(TINY, Queries(["q"], ["b"]))
    assert built == []
    BM25(**change).retrieve(TINY, Queries(["q"], ["b"]))
    assert built == [1]
    other = Corpus.from_records([{"id": "d1", "title": "a b", "text": "c CHANGED"}, {"id": "d2", "text": "a"}])
    BM25().retrieve(other, Queries(["q"], ["b"]))
    assert built == [1, 1]
    BM25(cache=False).retrieve(TINY, Queries(["q"], ["b"]))
    assert built == [1, 1, 1]


def test_unreadable_cache_is_rebuilt(cache):
    run = BM25().retrieve(TINY, Queries(["q"], ["b"]))
    (folder,) = cache.joinpath("bm25").iterdir()
    (folder / "data.npy").write_bytes(b"not an array")
    with pytest.warns(UserWarning, match="unreadable cached index"):
        again = BM25().retrieve(TINY, Queries(["q"], ["b"]))
    assert scores_of(again) == scores_of(run)


def test_cache_key_covers_every_part():
    base = {"corpus": "x", "analyzer": "stem", "fields": ["title", "text"], "k1": 1.5, "b": 0.75, "backend": "sparse"}
    keys = {bm25_index.cache_key(base)} | {bm25_index.cache_key({**base, name: "other"}) for name in base}
    assert len(keys) == 1 + len(base)


# ----------------------------------------------------------------- real data
@pytest.mark.realdata
def test_scifact_stem_ndcg10_reaches_published_bm25():
    from evalkit.io.formats.collections import read_corpus, read_queries
    from evalkit.metrics.evaluation import evaluate
    from evalkit.io.reading import read_qrels
    from evalkit.metrics import parse_metrics

    folder = shared_or_skip(SHARED / "scifact")
    qrels = read_qrels(str(folder / "qrels" / "test.tsv"))
    queries = read_queries(folder / "queries.jsonl").subset(qrels.query_ids.tolist())
    assert len(queries) == 300
    run = BM25(analyzer="stem").retrieve(read_corpus(folder / "corpus.jsonl"), queries, k=100)
    ndcg = evaluate(run, qrels, parse_metrics("ndcg@10")).means["nDCG@10"]
    assert ndcg >= 0.68  # published BEIR BM25: 0.665 (multifield) / 0.679 (flat); measured 0.6861


def test_unicode_terms_survive_the_cache():
    corpus = Corpus.from_records([{"id": "d1", "text": "Über α-helix"}, {"id": "d2", "text": "beta sheet"}, {"id": "d3", "text": "coil"}])
    assert get_analyzer("simple")("Über α-helix") == ["über", "α", "helix"]
    for backend in ("sparse", "rank-bm25"):
        first = BM25(analyzer="simple", backend=backend).retrieve(corpus, Queries(["q"], ["über α"]))
        again = BM25(analyzer="simple", backend=backend).retrieve(corpus, Queries(["q"], ["über α"]))
        assert first.to_lists() == again.to_lists() == {"q": ["d1"]}
