"""Cross-encoder reranker: real BCE training on a tiny BERT, negatives, reranking depth, save/load, bad input."""
from __future__ import annotations

import random

import pytest

pytest.importorskip("torch")
pytest.importorskip("sentence_transformers")

from evalkit.data.corpus import Corpus, Queries  # noqa: E402
from evalkit.data import Qrels, Run  # noqa: E402
from evalkit.core.errors import UsageError  # noqa: E402
from evalkit.pipelines.registry import get_system_class, load_system  # noqa: E402
from evalkit.systems.cross_encoder import CrossEncoderReranker, load_cross_encoder, score_pairs  # noqa: E402
from evalkit.systems.cross_encoder_training import bce_examples, check_training_data, sample_random  # noqa: E402

from support.tiny_models import SAMPLE_ABSTRACTS, tiny_bert  # noqa: E402

pytestmark = pytest.mark.neural  # runs torch models (tiny local checkpoints)

TEXTS = SAMPLE_ABSTRACTS[:12]
SMALL = dict(max_length=48, batch_size=4, eval_batch_size=8, epochs=2, lr=1e-3, show_progress=False, device="cpu")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> str:
    return tiny_bert(tmp_path_factory.mktemp("tiny-bert"), texts=TEXTS)


@pytest.fixture(scope="module")
def data():
    corpus = Corpus.from_records(
        [{"_id": f"d{i}", "title": f"Study {i}", "text": t} for i, t in enumerate(TEXTS)], id_field="_id"
    )
    queries = Queries(["q1", "q2", "q3"], ["melting ice and sea level", "vitamin D and fractures", "coral bleaching"])
    qrels = Qrels.from_dict({"q1": {"d0": 1, "d4": 1}, "q2": {"d1": 1, "d7": 0}, "q3": {"d6": 1}})
    rng = random.Random(0)
    first = Run.from_scores({q: {f"d{i}": rng.random() for i in range(len(TEXTS))} for q in queries.ids}, name="first")
    return corpus, queries, qrels, first


def test_registered_with_spec_defaults():
    cls = get_system_class("cross-encoder")
    assert cls is CrossEncoderReranker and cls.learnable and cls.kind == "reranker"
    o = cls().options
    assert (o.model, o.lr, o.batch_size, o.epochs, o.max_length, o.warmup, o.depth, o.fields) == (
        "allenai/scibert_scivocab_uncased", 2e-5, 16, 3, 512, 0.1, 10, ["title", "text"])


def test_bce_training_changes_weights_and_lowers_loss(tiny, data):
    import torch

    from evalkit.systems.cross_encoder_training import train_pairs

    corpus, queries, qrels, first = data
    system = load_system("cross-encoder", model=tiny, **SMALL)
    assert system.model.transformers_model.classifier.out_features == 1  # fresh one-logit head on a plain BERT
    before = {k: v.clone() for k, v in system.model.transformers_model.state_dict().items()}
    system.fit(corpus, queries, qrels, first_stage=first)
    after = system.model.transformers_model.state_dict()
    changed = [k for k in before if not torch.equal(before[k], after[k])]
    assert "classifier.weight" in changed and any("encoder.layer.0" in k for k in changed)
    # the loss really goes down when training goes on
    train_queries, positives = check_training_data(corpus, queries, qrels)
    examples = bce_examples(corpus, positives, first, 3, 10, 1, 0)
    before_loss = bce_loss(system.model, examples, corpus, train_queries)
    train_pairs(system.model, examples, corpus, train_queries, dataclass_replace(system.options, epochs=6))
    assert bce_loss(system.model, examples, corpus, train_queries) < before_loss


def bce_loss(model, examples, corpus, queries) -> float:
    """Mean binary cross-entropy of the examples, scored in eval mode (no dropout)."""
    import math

    q, pos = queries.as_dict(), corpus.position()
    s = score_pairs(model, [(q[a], corpus.text(pos[d])) for a, d, _ in examples], max_length=48, show_progress=False)
    return sum(math.log1p(math.exp(-x)) if y else math.log1p(math.exp(x)) for x, (_, _, y) in zip(s, examples)) / len(s)


def dataclass_replace(options, **changes):
    import dataclasses

    return dataclasses.replace(options, **changes)


def test_negatives_exclude_positives(data):
    corpus, queries, qrels, first = data
    _, positives = check_training_data(corpus, queries, qrels)
    assert "d7" not in positives["q2"]  # grade 0 is not a positive
    examples = bce_examples(corpus, positives, first, hard=5, depth=12, n_random=4, seed=3)
    for query, docs in positives.items():
        negatives = [d for q, d, y in examples if q == query and y == 0.0]
        assert negatives and not set(negatives) & set(docs)
        assert sorted(d for q, d, y in examples if q == query and y == 1.0) == sorted(docs)
    # per positive: hard (5, from the top 12 minus positives) + random (4), distinct
    q1 = [(d, y) for q, d, y in examples if q == "q1"]
    assert len(q1) == 2 * (1 + 5 + 4)
    assert sample_random(random.Random(0), corpus.ids, 100, {"d0"}) and "d0" not in sample_random(random.Random(0), corpus.ids, 100, {"d0"})
    assert len(sample_random(random.Random(0), corpus.ids, 100, {"d0"})) == len(TEXTS) - 1
    # same seed, same examples
    assert examples == bce_examples(corpus, positives, first, hard=5, depth=12, n_random=4, seed=3)


def test_rerank_changes_only_the_top_depth(tiny, data):
    corpus, queries, qrels, first = data
    system = load_system("cross-encoder", model=tiny, **SMALL)
    depth = 5
    out = system.rerank(corpus, queries, first, depth=depth)
    before, after = first.to_lists(), out.to_lists()
    for query in queries.ids:
        assert set(after[query][:depth]) == set(before[query][:depth])
        assert after[query][depth:] == before[query][depth:]
    # the top is ordered by the model's own scores
    scores = out.to_scores()["q1"]
    pairs = [(queries.as_dict()["q1"], corpus.text(corpus.position()[d])) for d in after["q1"][:depth]]
    expected = score_pairs(system.model, pairs, max_length=48, show_progress=False)
    assert [scores[d] for d in after["q1"][:depth]] == pytest.approx(expected, abs=1e-5)
    assert expected == sorted(expected, reverse=True)
    # the depth option is the default
    assert load_system("cross-encoder", model=tiny, **{**SMALL, "show_progress": False}).options.depth == 10


def test_bf16_autocast_path_runs(tiny):
    model = load_cross_encoder(tiny, 32, "cpu")
    fp32 = score_pairs(model, [("sea ice", "ice sheets melt")], max_length=32, show_progress=False)
    bf16 = score_pairs(model, [("sea ice", "ice sheets melt")], max_length=32, precision="bf16", show_progress=False)
    assert bf16 == pytest.approx(fp32, abs=0.05)


def test_save_and_load(tiny, data, tmp_path):
    corpus, queries, qrels, first = data
    system = load_system("cross-encoder", model=tiny, **{**SMALL, "epochs": 1})
    system.fit(corpus, queries, qrels, first_stage=first)
    expected = system.rerank(corpus, queries, first).to_scores()
    folder = system.save(tmp_path / "ce")
    assert (folder / "evalkit-system.json").exists() and (folder / "model" / "config.json").exists()
    loaded = CrossEncoderReranker.load(folder)
    assert loaded.trained and loaded.options == system.options
    got = loaded.rerank(corpus, queries, first).to_scores()
    for query in expected:
        assert got[query] == pytest.approx(expected[query], abs=1e-5)


def test_first_stage_mined_with_bm25_when_missing(tiny, data):
    try:
        get_system_class("bm25")
    except UsageError:
        pytest.skip("bm25 system not installed")
    corpus, queries, qrels, _ = data
    system = load_system("cross-encoder", model=tiny, **{**SMALL, "epochs": 1, "hard_negatives": 2, "random_negatives": 0})
    system.fit(corpus, queries, qrels)
    assert system.trained


@pytest.mark.parametrize("kind", ["missing", "empty-folder", "file"])
def test_bad_model_path_is_one_line(tmp_path, kind):
    path = tmp_path / "model"
    if kind == "empty-folder":
        path.mkdir()
    elif kind == "file":
        path.write_text("not a model")
    with pytest.raises(UsageError) as err:
        _ = load_system("cross-encoder", model=str(path), device="cpu").model  # the model loads on first access
    assert "\n" not in str(err.value) and str(path) in str(err.value)


def test_broken_model_folder_is_one_line(tmp_path):
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(UsageError) as err:
        load_cross_encoder(str(tmp_path), 32, "cpu")
    assert "cannot load" in str(err.value) and "\n" not in str(err.value)


def test_training_ids_not_in_corpus_refused(tiny, data):
    corpus, queries, _, first = data
    system = load_system("cross-encoder", model=tiny, **SMALL)
    with pytest.raises(UsageError, match="not in the corpus"):
        system.fit(corpus, queries, Qrels.from_dict({"q1": {"d0": 1, "nope": 1}}), first_stage=first)
    with pytest.raises(UsageError, match="not in the queries"):
        system.fit(corpus, queries, Qrels.from_dict({"q9": {"d0": 1}}), first_stage=first)
    with pytest.raises(UsageError, match="no relevant"):
        system.fit(corpus, queries, Qrels.from_dict({"q1": {"d0": 0}}), first_stage=first)
    with pytest.raises(UsageError, match="fields"):
        load_system("cross-encoder", model=tiny, fields=["abstract"], **{k: v for k, v in SMALL.items()}).rerank(corpus, queries, first)
    with pytest.raises(UsageError, match="depth"):
        system.rerank(corpus, queries, first, depth=-1)
    foreign = Run.from_rows(["q1"], ["elsewhere-1"], [1.0], name="foreign")
    with pytest.raises(UsageError, match="document 'elsewhere-1' of run foreign is not in the corpus"):
        system.rerank(corpus, queries, foreign)


def test_head_learning_rate_groups(tiny):
    from evalkit.systems.cross_encoder_training import param_groups

    hf = load_cross_encoder(tiny, 32, "cpu").transformers_model
    body, head = param_groups(hf, 1e-4, 1e-3)
    assert body["lr"] == 1e-4 and head["lr"] == 1e-3
    assert {id(p) for p in head["params"]} == {id(hf.classifier.weight), id(hf.classifier.bias)}
    assert len(body["params"]) + len(head["params"]) == len(list(hf.parameters()))
    assert len(param_groups(hf, 1e-4, 0.0)) == 1


def test_training_phases_run_in_order_with_their_own_options(tiny, data, monkeypatch):
    from evalkit.systems import cross_encoder_training

    corpus, queries, qrels, first = data
    seen = []
    real = cross_encoder_training.train_pairs

    def spy(model, examples, corpus_, queries_, options, **keywords):
        seen.append((options.epochs, options.max_length, options.lr, sum(1 for e in examples if e[2] == 0.0)))
        return real(model, examples, corpus_, queries_, options, **keywords)

    monkeypatch.setattr(cross_encoder_training, "train_pairs", spy)
    phases = [{"epochs": 1, "max_length": 24, "lr": 1e-3, "hard_negatives": 1, "random_negatives": 0},
              {"epochs": 1, "max_length": 48, "lr": 5e-4, "hard_negatives": 2, "random_negatives": 1}]
    system = load_system("cross-encoder", model=tiny, **{**SMALL, "phases": phases})
    system.fit(corpus, queries, qrels, first_stage=first)
    positives = 4  # q1: d0, d4; q2: d1; q3: d6
    assert seen == [(1, 24, 1e-3, positives * 1), (1, 48, 5e-4, positives * 3)]
    assert system.trained and system.options.max_length == 48  # reranking keeps the stage's own max_length


@pytest.mark.parametrize("phases, message", [
    ([{"epoch": 1}], "phase 1: unknown key 'epoch'"),
    ([{"epochs": 1}, {"epochs": 1.5}], "phase 2: epochs = 1.5 must be a whole number"),
    ([{"lr": "fast"}], "phase 1: lr = 'fast' must be a number"),
    (["x"], "phase 1 must be a table"),
    ({"epochs": 1}, "phases must be a list of tables"),
])
def test_bad_phases_refused_before_any_model_loads(phases, message):
    with pytest.raises(UsageError, match=message):
        load_system("cross-encoder", model="/nonexistent", phases=phases)
