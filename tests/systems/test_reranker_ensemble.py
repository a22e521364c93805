"""Reranker ensemble: margin-loss training for real, RRF of members = evalkit.fusion.fuse, configs, save/load, bad input."""
from __future__ import annotations

import random

import pytest

pytest.importorskip("torch")
pytest.importorskip("sentence_transformers")

from evalkit.data.corpus import Corpus, Queries  # noqa: E402
from evalkit.data import Qrels, Run  # noqa: E402
from evalkit.core.errors import UsageError  # noqa: E402
from evalkit.fusion import fuse  # noqa: E402
from evalkit.pipelines.registry import get_system_class, load_system, parse_set_options  # noqa: E402
from evalkit.systems.cross_encoder_training import negative_pools, train_triplets, triplets  # noqa: E402
from evalkit.systems.reranker_ensemble import MemberConfig, RerankerEnsemble  # noqa: E402

from support.tiny_models import SAMPLE_ABSTRACTS, tiny_bert  # noqa: E402

pytestmark = pytest.mark.neural  # runs torch models (tiny local checkpoints)

TEXTS = SAMPLE_ABSTRACTS[:10]
SMALL = dict(max_length=48, eval_batch_size=8, batch_size=4, epochs=1, lr=1e-3, random_negatives=2, hard_negatives=2,
             pool_depth=8, hard_pool=5, depth=6, show_progress=False, device="cpu")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> str:
    return tiny_bert(tmp_path_factory.mktemp("tiny-bert"), texts=TEXTS)


@pytest.fixture(scope="module")
def data():
    corpus = Corpus.from_records([{"_id": f"d{i}", "title": "", "text": t} for i, t in enumerate(TEXTS)], id_field="_id")
    queries = Queries(["q1", "q2"], ["melting ice and sea level", "vitamin D and fractures"])
    qrels = Qrels.from_dict({"q1": {"d0": 1, "d4": 1}, "q2": {"d1": 1}})
    rng = random.Random(1)
    first = Run.from_scores({q: {f"d{i}": rng.random() for i in range(len(TEXTS))} for q in queries.ids}, name="first")
    return corpus, queries, qrels, first


@pytest.fixture(scope="module")
def trained(tiny, data):
    corpus, queries, qrels, first = data
    configs = [f"model={tiny};margin=1;seed=1", {"model": tiny, "margin": 0.5, "lr": 5e-4, "seed": 2}]
    return load_system("reranker-ensemble", configs=configs, **SMALL).fit(corpus, queries, qrels, first_stage=first)


def test_registered_with_spec_defaults():
    cls = get_system_class("reranker-ensemble")
    assert cls is RerankerEnsemble and cls.learnable
    system = cls()
    o = system.options
    assert (o.random_negatives, o.hard_negatives, o.pool_depth, o.hard_pool, o.rrf_k) == (10, 5, 1000, 500, 60)
    assert [c.model for c in system.member_configs] == ["BAAI/bge-reranker-large", "BAAI/bge-reranker-v2-m3"]


def test_config_forms(tiny):
    system = RerankerEnsemble(configs=["model=m1;margin=0.5;batch_size=8;lr=1e-5;seed=3", {"model": "m2", "batch-size": 4}, "m3"],
                              margin=2.0, lr=3e-5, seed=7)
    assert system.member_configs == [
        MemberConfig("m1", 0.5, 8, 1e-5, 3), MemberConfig("m2", 2.0, 4, 3e-5, 7), MemberConfig("m3", 2.0, 16, 3e-5, 7)]
    # the CLI form: --set configs=a,b (comma-separated list of compact strings)
    options = parse_set_options(RerankerEnsemble, ["configs=model=a;seed=1,model=b;seed=2"])
    assert [c.seed for c in RerankerEnsemble(**options).member_configs] == [1, 2]
    for bad, message in [("model=a;colour=red", "unknown key"), ("model=a;lr=fast", "bad value"), ("model=a;lr=-1", "positive"),
                         ("model=a;margin", "key=value"), (3, "expected a table")]:
        with pytest.raises(UsageError, match=message):
            RerankerEnsemble(configs=[bad])


def test_triplets_and_margin_training_for_real(tiny, data):
    import torch

    from evalkit.systems.cross_encoder import CrossEncoderReranker

    corpus, queries, qrels, first = data
    positives = {"q1": ["d0", "d4"], "q2": ["d1"]}
    pools = negative_pools(first, positives, 6)
    items = triplets(corpus, positives, pools, hard=2, n_random=3, seed=0)
    assert len(items) == 3 * 5
    assert all(neg not in positives[q] and pos in positives[q] for q, pos, neg in items)
    assert all(neg in pools[q] for q, pos, neg in items[3:5])  # hard ones come from the pool
    member = CrossEncoderReranker(model=tiny, max_length=48, batch_size=5, epochs=6, lr=1e-3, show_progress=False, device="cpu")
    before = {k: v.clone() for k, v in member.model.transformers_model.state_dict().items()}
    loss_before = margin_loss(member.model, items, corpus, queries)
    train_triplets(member.model, items, corpus, queries, member.options, margin=1.0)
    after = member.model.transformers_model.state_dict()
    assert any(not torch.equal(before[k], after[k]) for k in before)
    assert margin_loss(member.model, items, corpus, queries) < loss_before


def margin_loss(model, items, corpus, queries, margin=1.0):
    """Mean max(0, m - (s+ - s-)) over the triplets, scored in eval mode (no dropout)."""
    from evalkit.systems.cross_encoder import score_pairs

    q, pos = queries.as_dict(), corpus.position()
    pairs = [(q[a], corpus.text(pos[d])) for a, p, n in items for d in (p, n)]
    s = score_pairs(model, pairs, max_length=48, show_progress=False)
    return sum(max(0.0, margin - (s[i] - s[i + 1])) for i in range(0, len(s), 2)) / len(items)


def test_members_trained_and_fused_with_rrf(trained, data):
    corpus, queries, _, first = data
    assert len(trained.members) == 2 and all(m.trained for m in trained.members)
    assert trained.members[0].options.seed == 1 and trained.members[1].options.lr == 5e-4
    members = trained.member_runs(corpus, queries, first)
    out = trained.rerank(corpus, queries, first)
    expected = fuse(members, method="rrf", rrf_k=60, depth=6)
    depth = trained.options.depth
    got, want, before = out.to_lists(), expected.to_lists(), first.to_lists()
    for query in queries.ids:
        assert got[query][:depth] == want[query]  # the top is exactly evalkit.fusion.fuse (RRF, k=60)
        assert got[query][depth:] == before[query][depth:]  # the rest stays below, in its order
    # RRF by hand for one document
    doc = want["q1"][0]
    ranks = [m.to_lists(depth)["q1"].index(doc) + 1 for m in members]
    assert expected.to_scores()["q1"][doc] == pytest.approx(sum(1 / (60 + r) for r in ranks))


def test_save_and_load(trained, data, tmp_path):
    corpus, queries, _, first = data
    folder = trained.save(tmp_path / "ens")
    assert (folder / "member-0" / "model" / "config.json").exists() and (folder / "member-1" / "evalkit-system.json").exists()
    loaded = RerankerEnsemble.load(folder)
    assert len(loaded.members) == 2 and loaded.options == trained.options
    assert loaded.rerank(corpus, queries, first).to_lists() == trained.rerank(corpus, queries, first).to_lists()


def test_pool_reranked_by_base_model(tiny, data, monkeypatch):
    import evalkit.systems.reranker_ensemble as module

    corpus, queries, qrels, first = data
    calls = []
    real = module.rerank_run
    monkeypatch.setattr(module, "rerank_run", lambda *a, **k: calls.append(a[4]) or real(*a, **k))
    system = load_system("reranker-ensemble", configs=[tiny], **{**SMALL, "pool_rerank": True})
    system.fit(corpus, queries, qrels, first_stage=first)
    assert calls == [8]  # the base model re-ranks the BM25 pool to pool_depth once per base model


def test_bad_inputs(tmp_path, data):
    corpus, queries, qrels, first = data
    with pytest.raises(UsageError, match="does not exist"):
        load_system("reranker-ensemble", configs=[str(tmp_path / "none")], **SMALL).rerank(corpus, queries, first)
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match="not a cross-encoder model folder"):
        load_system("reranker-ensemble", configs=[str(tmp_path / "empty")], **SMALL).fit(corpus, queries, qrels, first)
    with pytest.raises(UsageError, match="not in the corpus"):
        load_system("reranker-ensemble", configs=["x"], **SMALL).fit(corpus, queries, Qrels.from_dict({"q1": {"zz": 1}}), first)
    with pytest.raises(UsageError, match="at least one"):
        RerankerEnsemble(models=[], configs=[])
