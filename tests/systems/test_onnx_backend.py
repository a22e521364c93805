"""backend=onnx (ONNX Runtime, fp32 / int8) for the dense encoder and the cross-encoder, on tiny local models."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sentence_transformers")
pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

from evalkit.data.corpus import Corpus, Queries  # noqa: E402
from evalkit.data import Run  # noqa: E402
from evalkit.core.errors import UsageError  # noqa: E402
from evalkit.pipelines.registry import load_system, parse_set_options, get_system_class  # noqa: E402
from evalkit.systems._models import onnx_backend  # noqa: E402

from support.tiny_models import SAMPLE_ABSTRACTS, tiny_bert  # noqa: E402

pytestmark = pytest.mark.neural  # runs torch models (tiny local checkpoints)

QUERIES = ["melting ice and sea level", "vitamin D and fractures", "coral bleaching", "statins and cholesterol"]
CE = dict(max_length=48, eval_batch_size=4, show_progress=False)
DENSE = dict(query_prefix="", passage_prefix="", batch_size=4, embedding_cache="none")


@pytest.fixture(scope="module")
def encoder(tmp_path_factory) -> str:
    return tiny_bert(tmp_path_factory.mktemp("onnx-encoder"), texts=SAMPLE_ABSTRACTS)


@pytest.fixture(scope="module")
def cross(tmp_path_factory) -> str:
    return tiny_bert(tmp_path_factory.mktemp("onnx-cross"), texts=SAMPLE_ABSTRACTS, num_labels=1, seed=3)


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALKIT_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def counted(monkeypatch) -> dict[str, int]:
    """How often the export and the quantisation really run."""
    calls = {"export": 0, "quantize": 0}
    export, quantize = onnx_backend.export_onnx, onnx_backend.quantize_int8

    def counting_export(*args, **kwargs):
        calls["export"] += 1
        return export(*args, **kwargs)

    def counting_quantize(*args, **kwargs):
        calls["quantize"] += 1
        return quantize(*args, **kwargs)

    monkeypatch.setattr(onnx_backend, "export_onnx", counting_export)
    monkeypatch.setattr(onnx_backend, "quantize_int8", counting_quantize)
    return calls


def pairs() -> tuple[list[str], list[str]]:
    queries = [q for q in QUERIES for _ in range(3)]
    docs = [SAMPLE_ABSTRACTS[(i * 5) % len(SAMPLE_ABSTRACTS)] for i in range(len(queries))]
    return queries, docs


def test_cross_encoder_onnx_fp32_equals_torch_and_int8_runs(cross, counted):
    queries, docs = pairs()
    torch_scores = np.array(load_system("cross-encoder", model=cross, **CE).score_pairs(queries, docs))
    fp32 = load_system("cross-encoder", model=cross, backend="onnx", **CE)
    assert type(fp32.model.transformers_model).__name__ == "OnnxModel"
    np.testing.assert_allclose(fp32.score_pairs(queries, docs), torch_scores, atol=1e-5, rtol=1e-4)
    int8 = np.array(load_system("cross-encoder", model=cross, backend="onnx", precision="int8", **CE).score_pairs(queries, docs))
    assert int8.shape == torch_scores.shape and np.isfinite(int8).all()
    assert np.abs(int8 - torch_scores).max() < 0.05 * (np.abs(torch_scores).max() + 1e-3) + 1e-3
    assert counted == {"export": 1, "quantize": 1}  # int8 quantised the fp32 export already on disk


def test_dense_onnx_fp32_equals_torch_and_int8_runs(encoder):
    corpus = Corpus.from_records([{"id": f"d{i}", "text": t} for i, t in enumerate(SAMPLE_ABSTRACTS)], id_field="id")
    queries = Queries([f"q{i}" for i in range(len(QUERIES))], QUERIES)
    systems = {p: load_system("dense", model=encoder, backend=b, precision=p, **DENSE)
               for b, p in (("torch", "auto"), ("onnx", "fp32"), ("onnx", "int8"))}
    vectors = {p: s.corpus_embeddings(corpus) for p, s in systems.items()}
    np.testing.assert_allclose(vectors["fp32"], vectors["auto"], atol=1e-5)
    cosine = np.sum(vectors["int8"] * vectors["auto"], axis=1)
    assert vectors["int8"].shape == vectors["auto"].shape and cosine.min() > 0.95
    run = systems["int8"].retrieve(corpus, queries, k=5)
    assert isinstance(run, Run) and run.n_rows == 5 * len(QUERIES)
    identities = {p: s.model_identity() for p, s in systems.items()}
    assert len(set(identities.values())) == 3  # embedding caches never mix backends


@pytest.mark.parametrize("precision", ["int8", "fp32"])
def test_output_of_a_text_does_not_depend_on_its_batch(cross, encoder, precision):
    """Each text runs alone: a pair scored alone, or in another batch, scores the same (for int8, ONNX Runtime would
    otherwise quantise over the whole batch, padding included, and a score would move with its neighbours)."""
    queries, docs = pairs()
    ce = load_system("cross-encoder", model=cross, backend="onnx", precision=precision, **CE)
    batched = np.array(ce.score_pairs(queries, docs))
    alone = np.array([ce.score_pairs([q], [d])[0] for q, d in zip(queries, docs)])
    reversed_ = np.array(ce.score_pairs(queries[::-1], docs[::-1]))[::-1]
    np.testing.assert_allclose(alone, batched, rtol=0, atol=1e-6)
    np.testing.assert_allclose(reversed_, batched, rtol=0, atol=1e-6)
    texts = SAMPLE_ABSTRACTS[:6]
    corpus = Corpus.from_records([{"id": f"d{i}", "text": t} for i, t in enumerate(texts)], id_field="id")
    dense = load_system("dense", model=encoder, backend="onnx", precision=precision, **DENSE)
    together = dense.corpus_embeddings(corpus)
    for i, text in enumerate(texts):
        single = dense.corpus_embeddings(Corpus.from_records([{"id": "x", "text": text}], id_field="id"))
        np.testing.assert_allclose(single[0], together[i], rtol=0, atol=1e-6)


def test_text_spans_cut_right_and_left_padding_and_keep_odd_masks_whole():
    from evalkit.systems._models.onnx_module import text_spans

    mask = np.array([[1, 1, 1, 0], [0, 0, 1, 1], [1, 0, 1, 0], [1, 1, 1, 1]])
    assert text_spans(mask) == [slice(0, 3), slice(2, 4), slice(0, 4), slice(0, 4)]


def test_export_is_cached_across_loads(cross, encoder, counted, cache):
    queries, docs = pairs()
    first = load_system("cross-encoder", model=cross, backend="onnx", precision="int8", **CE).score_pairs(queries, docs)
    assert counted == {"export": 1, "quantize": 1}
    entries = list((cache / "onnx").iterdir())
    assert len(entries) == 1 and {p.name for p in entries[0].iterdir()} >= {"model.onnx", "model.int8.onnx", "int8.json"}
    again = load_system("cross-encoder", model=cross, backend="onnx", precision="int8", **CE).score_pairs(queries, docs)
    load_system("cross-encoder", model=cross, backend="onnx", precision="fp32", **CE).score_pairs(queries, docs)
    assert counted == {"export": 1, "quantize": 1} and again == first  # second load: no export, same scores
    load_system("dense", model=encoder, backend="onnx", **DENSE).encode(["ice"], "", chunked=False)
    assert counted["export"] == 2 and len(list((cache / "onnx").iterdir())) == 2  # another model, its own entry


def test_truncated_cache_entry_is_rebuilt(cross, counted, cache):
    """A cached export cut short (full disk, kill -9) is removed with a warning and exported again, never a failure on every run."""
    queries, docs = pairs()
    first = load_system("cross-encoder", model=cross, backend="onnx", precision="fp32", **CE).score_pairs(queries, docs)
    model = next((cache / "onnx").iterdir()) / "model.onnx"
    model.write_bytes(model.read_bytes()[: model.stat().st_size // 3])
    with pytest.warns(UserWarning, match="unreadable cached model .* rebuilding"):
        again = load_system("cross-encoder", model=cross, backend="onnx", precision="fp32", **CE).score_pairs(queries, docs)
    assert again == first and counted["export"] == 2
    assert load_system("cross-encoder", model=cross, backend="onnx", precision="fp32", **CE).score_pairs(queries, docs) == first


def test_changed_weights_are_re_exported(cross, counted):
    import torch

    queries, docs = pairs()
    system = load_system("cross-encoder", model=cross, backend="onnx", **CE)
    before = system.score_pairs(queries, docs)
    hf = system.model.transformers_model
    hf.train()  # as training does; then the weights change
    with torch.no_grad():
        hf.torch_model.classifier.bias += 1.0
    after = system.score_pairs(queries, docs)
    np.testing.assert_allclose(np.array(after) - np.array(before), 1.0, atol=1e-4)
    assert counted["export"] == 2


def test_pickled_system_reopens_its_session(cross):
    queries, docs = pairs()
    system = load_system("cross-encoder", model=cross, backend="onnx", precision="int8", **CE)
    scores = system.score_pairs(queries, docs)
    copy = pickle.loads(pickle.dumps(system))  # what the Ray engine ships to its actors
    assert copy.score_pairs(queries, docs) == scores


def test_saved_onnx_system_holds_torch_weights(cross, tmp_path):
    queries, docs = pairs()
    system = load_system("cross-encoder", model=cross, backend="onnx", **CE)
    system.model  # noqa: B018 - load
    folder = system.save(tmp_path / "saved")
    loaded = get_system_class("cross-encoder").load(folder)
    assert loaded.options.backend == "onnx"
    torch_scores = load_system("cross-encoder", model=str(folder / "model"), **CE).score_pairs(queries, docs)
    np.testing.assert_allclose(loaded.score_pairs(queries, docs), torch_scores, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("system", ["dense", "cross-encoder"])
@pytest.mark.parametrize("pairs_, expected", [
    (["backend=tensorrt"], "option backend='tensorrt': choose torch or onnx"),
    (["precision=int8"], "option precision=int8 needs backend=onnx"),
    (["backend=onnx", "precision=fp16"], "option precision='fp16' with backend=onnx: choose fp32 or int8"),
    (["backend=onnx", "device=cuda"], "option device='cuda' with backend=onnx"),
])
def test_bad_option_values_are_one_line(system, pairs_, expected):
    cls = get_system_class(system)
    with pytest.raises(UsageError) as info:
        cls(**parse_set_options(cls, pairs_))
    message = str(info.value)
    assert expected in message and "\n" not in message


def test_cli_refuses_bad_backend_in_one_line(cli, tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"_id": "d1", "title": "t", "text": "ice"}\n')
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"_id": "q1", "text": "ice"}\n')
    done = cli("run", "dense", "--corpus", corpus, "--queries", queries, "--set", "backend=onnx", "--set", "precision=bf16",
               "--out", tmp_path / "run.trec")
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "precision='bf16' with backend=onnx" in lines[0]


def test_graph_is_fused_and_int8_keeps_the_head_fp32(cross, cache):
    import json

    import onnx

    queries, docs = pairs()
    load_system("cross-encoder", model=cross, backend="onnx", precision="int8", **CE).score_pairs(queries, docs)
    entry = next((cache / "onnx").iterdir())
    fp32_ops = {n.op_type for n in onnx.load(str(entry / "model.onnx")).graph.node}
    assert {"Attention", "SkipLayerNormalization", "EmbedLayerNormalization"} <= fp32_ops  # eager export, fused
    int8 = onnx.load(str(entry / "model.int8.onnx")).graph.node
    assert any(n.op_type == "QAttention" for n in int8) and any(n.op_type == "MatMulInteger" for n in int8)
    head = [n for n in int8 if "classifier" in n.name]
    assert head and all(n.op_type in ("MatMul", "Add") for n in head)  # the classification head stays fp32
    settings = json.loads((entry / "int8.json").read_text())
    assert settings["reduce_range"] == (not onnx_backend.has_vnni()) and settings["format"] == onnx_backend.FORMAT


def test_an_unknown_architecture_keeps_the_exported_graph(tmp_path):
    class Config:
        model_type = "gpt2"
        num_attention_heads, hidden_size = 2, 32

    assert onnx_backend.fuse_graph(tmp_path / "missing.onnx", tmp_path / "out.onnx", Config()) is False
    assert not (tmp_path / "out.onnx").exists()


def test_training_runs_in_torch_and_inference_after_it_in_int8(encoder, cross, counted):
    """backend=onnx precision=int8 on learnable systems: fitting trains the torch weights (gradients through torch),
    re-mining and scoring after each change run the fresh int8 export."""
    from evalkit.data import Qrels

    corpus = Corpus.from_records([{"_id": f"d{i}", "title": "", "text": t} for i, t in enumerate(SAMPLE_ABSTRACTS)], id_field="_id")
    queries = Queries(["q1", "q2", "q3"], QUERIES[:3])
    qrels = Qrels.from_dict({"q1": {"d0": 1}, "q2": {"d1": 1}, "q3": {"d6": 1}})
    dense = load_system("dense", model=encoder, backend="onnx", precision="int8", epochs=2, remine_each_epoch=True, train_batch_size=2,
                        lr=1e-3, **DENSE)
    before = dense.corpus_embeddings(corpus)
    dense.fit(corpus, queries, qrels)
    assert counted["export"] == 2  # the zero-shot weights above, then the re-mining before epoch 2 on the epoch-1 weights
    after = dense.corpus_embeddings(corpus)
    assert counted["export"] == 3 and not np.allclose(before, after)  # the trained weights, exported once more
    ce = load_system("cross-encoder", model=cross, backend="onnx", precision="int8", epochs=1, batch_size=2, hard_negatives=1,
                     random_negatives=1, lr=1e-3, **CE)
    first = Run.from_scores({q: {f"d{i}": float(-i) for i in range(len(SAMPLE_ABSTRACTS))} for q in queries.ids})
    untrained = ce.score_pairs(*pairs())
    ce.fit(corpus, queries, qrels, first_stage=first)
    trained = ce.score_pairs(*pairs())
    assert not np.allclose(untrained, trained) and counted["export"] == 5 and counted["quantize"] == 5
    assert type(ce.model.transformers_model).__name__ == "OnnxModel"


def test_bf16_native_is_fp32_in_onnx_runtime(encoder, cross, monkeypatch):
    """bf16-native means bf16 where the device computes it natively: ONNX Runtime's CPU kernels do not, so its
    outputs equal fp32's, on a CPU with AMX as on one without (and no torch autocast wraps the session)."""
    from evalkit.systems._models import modelio

    monkeypatch.setattr(modelio, "cpu_flags", lambda: {"avx2", "amx_bf16"})
    texts = SAMPLE_ABSTRACTS[:6]
    fp32 = load_system("dense", model=encoder, backend="onnx", precision="fp32", **DENSE)
    native = load_system("dense", model=encoder, backend="onnx", precision="bf16-native", **DENSE)
    assert np.array_equal(native.encode(texts, "", chunked=False), fp32.encode(texts, "", chunked=False))
    corpus = Corpus.from_records([{"id": f"d{i}", "text": t} for i, t in enumerate(texts)], id_field="id")
    assert native.cache_settings(corpus)["precision"] == fp32.cache_settings(corpus)["precision"] == "fp32"
    assert load_system("dense", model=encoder, precision="bf16-native", **DENSE).cache_settings(corpus)["precision"] == "bf16"
    ce32 = load_system("cross-encoder", model=cross, backend="onnx", precision="fp32", **CE)
    ce_native = load_system("cross-encoder", model=cross, backend="onnx", precision="bf16-native", **CE)
    assert ce_native.score(QUERIES[0], texts) == ce32.score(QUERIES[0], texts)


def test_an_export_killed_midway_leaves_a_temporary_the_next_export_removes(tmp_path):
    """The export's temporaries are evalkit's named temporaries: a dead process's leftover is removed by the next one."""
    import os
    import subprocess
    import sys

    target = tmp_path / "model.onnx"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True).stdout.strip()
    left = onnx_backend._tmp(target)
    left = left.with_name(left.name.replace(f"-{os.getpid()}-", f"-{dead}-"))
    left.write_bytes(b"half an export")
    fresh = onnx_backend._tmp(target)
    assert not left.exists() and fresh.parent == tmp_path and fresh.name.startswith(".model.onnx.evalkit-")
