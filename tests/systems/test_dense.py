"""Dense dual-encoder retriever on a tiny random BERT: chunk math by hand, search, prefixes,
real training steps, hard negatives, embedding cache, save/load and bad input."""
from __future__ import annotations

import functools

import numpy as np
import pytest

from evalkit.data.corpus import Corpus, Queries
from evalkit.data import Qrels, Run
from evalkit.core.errors import UsageError
from evalkit.pipelines.registry import load_system

from support.tiny_models import tiny_bert

pytestmark = pytest.mark.neural  # runs torch models (tiny local checkpoints)

TEXTS = [
    "Sea level rise is accelerating because of melting ice sheets in Greenland and Antarctica, "
    "and coastal cities face more frequent flooding as ocean temperatures rise every decade.",
    "Vitamin D supplementation reduces the risk of fractures in older adults.",
    "Coral reefs bleach when ocean temperatures rise.",
    "The vaccine showed 95 percent efficacy in the clinical trial.",
    "Gene expression in tumour cells is regulated by microRNA.",
    "Arctic sea ice extent reached a record low in September.",
]




@pytest.fixture(scope="module")
def model_path(tmp_path_factory) -> str:
    return tiny_bert(tmp_path_factory.mktemp("tiny-bert"), texts=TEXTS)


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return Corpus.from_records(
        [{"id": f"d{i}", "title": f"paper {i}", "text": t} for i, t in enumerate(TEXTS)], id_field="id"
    )


@pytest.fixture(scope="module")
def queries() -> Queries:
    return Queries(["q1", "q2", "q3"], ["sea level rise flooding", "vitamin fractures", "coral bleaching"])


def make(model_path: str, **options) -> "object":
    defaults = dict(model=model_path, embedding_cache="none", chunk_size=12, chunk_overlap=4, batch_size=4)
    return load_system("dense", **{**defaults, **options})


@functools.lru_cache(maxsize=2)
def hf_model(model_path: str):
    from transformers import AutoModel

    return AutoModel.from_pretrained(model_path).eval()


def hf_mean_pooled(model_path: str, ids: list[int]) -> np.ndarray:
    """Mean over the tokens of the last hidden state (tiny BERT's pooling), computed with transformers directly."""
    import torch

    model = hf_model(model_path)
    with torch.no_grad():
        hidden = model(input_ids=torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long)).last_hidden_state
    return hidden[0].mean(0).numpy()


def test_registered_and_options(model_path):
    system = make(model_path)
    assert type(system).__name__ == "DenseRetriever" and system.learnable
    assert load_system("dense").options.model == "intfloat/e5-large-v2"  # lazy: nothing loaded yet
    assert load_system("dense").options.query_prefix == "query: "


def test_chunk_windows_and_pooling_by_hand(model_path, corpus):
    system = make(model_path, passage_prefix="passage: ", chunk_size=12, chunk_overlap=4)
    tok = system.model.tokenizer
    text = system.document_texts(corpus)[0]
    assert text == f"paper 0 {tok.sep_token} {TEXTS[0]}"  # fields joined by the separator token
    assert make(model_path, field_separator="").document_texts(corpus)[0] == f"paper 0 {TEXTS[0]}"  # MTEB style
    body = tok(text, add_special_tokens=False)["input_ids"]
    prefix = tok("passage: ", add_special_tokens=False)["input_ids"]
    size = 12 - len(prefix)
    stride = size - 4
    starts = list(range(0, len(body), stride))
    starts = starts[: next(i for i, s in enumerate(starts) if s + size >= len(body)) + 1]
    expected = [[tok.cls_token_id, *prefix, *body[s : s + size], tok.sep_token_id] for s in starts]
    windows = system.token_windows([text], "passage: ", chunked=True)[0]
    assert windows == expected and len(windows) > 2
    assert all(len(w) <= 14 for w in windows)
    assert windows[1][1 + len(prefix) : 1 + len(prefix) + 4] == body[stride : stride + 4]  # 4 tokens of overlap
    per_chunk = np.stack([hf_mean_pooled(model_path, w) for w in expected])
    pooled = (per_chunk.mean(0) + per_chunk.max(0)) / 2
    pooled /= np.linalg.norm(pooled)
    got = system.encode([text], "passage: ", chunked=True)[0]
    np.testing.assert_allclose(got, pooled, atol=1e-5)
    truncated = system.encode([text], "passage: ", chunked=False)[0]  # one window of max_seq_length = 512
    whole = hf_mean_pooled(model_path, [tok.cls_token_id, *prefix, *body, tok.sep_token_id])
    np.testing.assert_allclose(truncated, whole / np.linalg.norm(whole), atol=1e-5)


def test_truncate_matches_sentence_transformers(model_path, corpus):
    system = make(model_path, chunking="truncate", max_seq_length=16, field_separator=" ", passage_prefix="passage: ")
    texts = system.document_texts(corpus)
    ours = system.encode(texts, "passage: ", chunked=False)
    theirs = system.model.encode(["passage: " + t for t in texts], normalize_embeddings=True)
    np.testing.assert_allclose(ours, theirs, atol=1e-5)


def test_prefixes_applied(model_path, queries):
    system = make(model_path, query_prefix="query: ")
    tok = system.model.tokenizer
    prefix = tok("query: ", add_special_tokens=False)["input_ids"]
    window = system.token_windows(["coral bleaching"], "query: ", chunked=False)[0][0]
    assert window[1 : 1 + len(prefix)] == prefix
    plain = make(model_path, query_prefix="")
    assert plain.token_windows(["coral bleaching"], "", chunked=False)[0][0][1:-1] == tok(
        "coral bleaching", add_special_tokens=False)["input_ids"]
    assert not np.allclose(system.encode_queries(queries), plain.encode_queries(queries))


def test_retrieve_top_k_sorted_cosine(model_path, corpus, queries):
    system = make(model_path)
    run = system.retrieve(corpus, queries, k=4)
    scores = run.to_scores()
    docs = system.corpus_embeddings(corpus)
    qvecs = system.encode_queries(queries)
    assert np.allclose(np.linalg.norm(docs, axis=1), 1, atol=1e-5)
    for qi, q in enumerate(queries.ids):
        ranked = list(scores[q].items())
        assert len(ranked) == 4
        values = [s for _, s in ranked]
        assert values == sorted(values, reverse=True)
        cos = docs @ qvecs[qi]
        assert [d for d, _ in ranked] == [corpus.ids[i] for i in np.argsort(-cos)[:4]]
        assert values[0] == pytest.approx(float(cos.max()), abs=1e-6)
    assert len(system.retrieve(corpus, queries, k=100).to_lists()["q1"]) == len(corpus)  # k > corpus size


def test_search_blocks_and_faiss_optional():
    from evalkit.systems.dense import search

    rng = np.random.default_rng(0)
    docs, qs = rng.normal(size=(50, 8)).astype(np.float32), rng.normal(size=(7, 8)).astype(np.float32)
    hits = search(qs, docs, 5, block=3)
    for qi, ranked in enumerate(hits):
        expected = np.argsort(-(docs @ qs[qi]))[:5]
        assert [r for r, _ in ranked] == expected.tolist()
    try:
        import faiss  # noqa: F401
    except ImportError:
        with pytest.raises(UsageError, match="faiss"):
            search(qs, docs, 5, backend="faiss")
    else:  # pragma: no cover - faiss is optional
        assert [[r for r, _ in h] for h in search(qs, docs, 5, backend="faiss")] == [[r for r, _ in h] for h in hits]


def test_training_changes_weights_and_excludes_positives(model_path, corpus, queries):
    from evalkit.systems.dense_training import mine_hard_negatives

    qrels = Qrels.from_dict({"q1": {"d0": 1, "d5": 1}, "q2": {"d1": 1}, "q3": {"d2": 1}})
    first = Run.from_lists({"q1": ["d0", "d5", "d2", "d3"], "q2": ["d1", "d4", "d0"], "q3": ["d3", "d2", "d1"]})
    negatives = mine_hard_negatives({"q1": ["d0", "d5"], "q2": ["d1"], "q3": ["d2"]}, first, 2)
    assert negatives == {"q1": ["d2", "d3"], "q2": ["d4", "d0"], "q3": ["d3", "d1"]}
    system = make(model_path, lr=5e-3, epochs=2, train_batch_size=2, n_hard_negatives=1, seed=1)
    before = {k: v.clone() for k, v in system.model.state_dict().items()}
    system.fit(corpus, queries, qrels, first_stage=first)
    after = system.model.state_dict()
    assert any(not np.allclose(before[k].numpy(), after[k].numpy()) for k in before)
    assert len(system.training_log) == 2
    assert all(np.isfinite(e["loss"]) and e["steps"] == 2 and e["hard_negatives"] == 3 for e in system.training_log)


def test_bm25_mining_and_remining(model_path, corpus, queries, monkeypatch, tmp_path):
    monkeypatch.setenv("EVALKIT_CACHE", str(tmp_path))
    from evalkit.systems import dense_training

    seen = []
    original = dense_training.mine_hard_negatives

    def spy(positives, run, n):
        out = original(positives, run, n)
        seen.append(out)
        return out

    monkeypatch.setattr(dense_training, "mine_hard_negatives", spy)
    qrels = Qrels.from_dict({"q1": {"d0": 1}, "q2": {"d1": 1}})
    system = make(model_path, epochs=2, train_batch_size=2, n_hard_negatives=2, remine_each_epoch=True, lr=1e-3)
    system.fit(corpus, queries, qrels)
    assert len(seen) == 2  # BM25 before epoch 1, the model itself before epoch 2
    for mined in seen:
        assert "d0" not in mined["q1"] and "d1" not in mined["q2"]
        assert all(len(v) <= 2 for v in mined.values()) and any(mined.values())
    assert all(len(v) == 2 for v in seen[1].values())  # dense search ranks every document


def test_embedding_cache_hit_and_mismatch(model_path, corpus, queries, tmp_path, monkeypatch):
    folder = tmp_path / "emb"
    system = make(model_path, embedding_cache=str(folder))
    first = system.retrieve(corpus, queries, k=3).to_scores()
    assert sorted(p.name for p in folder.iterdir()) == ["embeddings.npy", "ids.json", "settings.json"]
    assert np.load(folder / "embeddings.npy", allow_pickle=False).dtype == np.float32

    def fail(*args, **kwargs):
        raise AssertionError("corpus re-encoded despite a cache hit")

    cached = make(model_path, embedding_cache=str(folder))
    monkeypatch.setattr(cached, "document_texts", fail)
    assert cached.retrieve(corpus, queries, k=3).to_scores() == first
    other = Corpus.from_records([{"id": "x1", "text": "coral"}, {"id": "x2", "text": "sea"}], id_field="id")
    with pytest.raises(UsageError, match="mismatched embedding cache"):
        cached.retrieve(other, queries, k=1)
    with pytest.raises(UsageError, match="mismatched embedding cache .*chunk_size"):
        make(model_path, embedding_cache=str(folder), chunk_size=10).retrieve(corpus, queries, k=1)
    monkeypatch.setenv("EVALKIT_CACHE", str(tmp_path / "auto"))
    auto = make(model_path, embedding_cache="auto")
    auto.retrieve(corpus, queries, k=1)
    assert len(list((tmp_path / "auto" / "dense").iterdir())) == 1
    # vectors computed in bf16 never stand in for fp32 ones (nor the reverse): the precision is part of the key
    make(model_path, embedding_cache="auto", precision="bf16").retrieve(corpus, queries, k=1)
    assert len(list((tmp_path / "auto" / "dense").iterdir())) == 2
    with pytest.raises(UsageError, match="mismatched embedding cache .*precision"):
        make(model_path, embedding_cache=str(folder), precision="bf16").retrieve(corpus, queries, k=1)


def test_save_load_round_trip(model_path, corpus, queries, tmp_path):
    from evalkit.systems.dense import DenseRetriever

    qrels = Qrels.from_dict({"q1": {"d0": 1}, "q2": {"d1": 1}, "q3": {"d2": 1}})
    system = make(model_path, lr=1e-3, train_batch_size=3, n_hard_negatives=0)
    system.fit(corpus, queries, qrels)
    before = system.retrieve(corpus, queries, k=3).to_scores()
    system.save(tmp_path / "saved")
    loaded = DenseRetriever.load(tmp_path / "saved")
    assert loaded.options.model == str(tmp_path / "saved" / "model")
    assert loaded.options.chunk_size == 12 and loaded.training_log == system.training_log
    after = loaded.retrieve(corpus, queries, k=3).to_scores()
    for q in before:
        assert list(after[q]) == list(before[q])
        assert list(after[q].values()) == pytest.approx(list(before[q].values()), abs=1e-5)


def test_bad_inputs(model_path, corpus, queries, tmp_path):
    with pytest.raises(UsageError, match="path does not exist"):
        load_system("dense", model=str(tmp_path / "nope")).retrieve(corpus, queries)
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match="not a sentence-transformers model folder"):
        load_system("dense", model=str(tmp_path / "empty")).retrieve(corpus, queries)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{not json")
    with pytest.raises(UsageError, match="cannot load"):
        load_system("dense", model=str(broken)).retrieve(corpus, queries)
    qrels = Qrels.from_dict({"q1": {"d0": 1, "ghost-7": 1}, "q2": {"ghost-3": 1}})
    with pytest.raises(UsageError, match=r"2 judged document id\(s\) are not in the corpus \(e.g. ghost-3, ghost-7\); wrong corpus\?"):
        make(model_path).fit(corpus, queries, qrels)
    with pytest.raises(UsageError, match="chunking"):
        load_system("dense", chunking="sliding")
    with pytest.raises(UsageError, match="fields"):
        load_system("dense", fields=["abstract"])
    with pytest.raises(UsageError, match="overlap"):
        load_system("dense", chunk_size=10, chunk_overlap=10)
    with pytest.raises(UsageError, match="none of the fields"):
        make(model_path, fields=["journal"]).retrieve(corpus, queries)
    with pytest.raises(UsageError, match="not a saved evalkit system"):
        load_system("dense").load(tmp_path)
