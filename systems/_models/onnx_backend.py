"""ONNX Runtime CPU inference for the transformer inside a sentence-transformers model: fp32 or int8.

``--set backend=onnx`` (fp32) or ``--set backend=onnx --set precision=int8``
on the dense retriever and the cross-encoder. The Hugging Face model inside
the sentence-transformers model (``model.transformers_model``) is exported
once to ONNX and, for int8, dynamically quantised; both files are cached
under the evalkit cache (``$EVALKIT_CACHE/onnx/<key>/``), the key a sha256
over the model's weights (:func:`~evalkit.systems._models.modelio.weights_sha256`)
and the export settings, so a second load of the same weights reuses them
and fine-tuned weights get their own entry. At run time
:class:`~evalkit.systems._models.onnx_module.OnnxModel` takes the Hugging
Face model's place: inference goes through an ``onnxruntime``
``InferenceSession``; the tokenising, batching and pooling of the systems
stay as they are.

Why not sentence-transformers' own ``backend="onnx"`` and
``export_dynamic_quantized_onnx_model``: both need ``optimum-onnx``, which
requires ``transformers<4.58`` (installing it would downgrade transformers
5). So the same steps are done with the libraries underneath: the torch
exporter (``torch.onnx.export``, TorchScript, opset 17), then
``onnxruntime.quantization.quantize_dynamic`` of the MatMuls with
per-channel symmetric int8 weights and uint8 activations quantised at run
time -- the dynamic scheme of sentence-transformers' helper (optimum's
``avx512_vnni`` / ``avx2`` configurations, ``is_static=False``).
"""
from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

from evalkit._version import DISTRIBUTION
from evalkit.errors import UsageError

BACKENDS = ("torch", "onnx")
ONNX_PRECISIONS = {"auto": "fp32", "fp32": "fp32", "float32": "fp32", "none": "fp32", "no": "fp32", "int8": "int8"}
OPSET = 17
FORMAT = 2  # bump when the export or quantisation settings change: old cache entries are then ignored
KINDS = {"features": "last_hidden_state", "logits": "logits"}
INSTALL_HINT = f"pip install '{DISTRIBUTION}[onnx]' (onnxruntime and onnx)"


def backend_option() -> Any:
    """The ``backend`` option of the dense retriever and the cross-encoder."""
    from evalkit.pipelines.stages import option

    return option("torch", "torch | onnx (ONNX Runtime on the CPU, exported once and cached; precision fp32 or int8)")


def check_backend(backend: str, precision: str, device: str) -> None:
    """One-line errors for option values that do not go together."""
    if backend not in BACKENDS:
        raise UsageError(f"option backend={backend!r}: choose torch or onnx")
    if backend == "torch" and precision == "int8":
        raise UsageError("option precision=int8 needs backend=onnx (int8 dynamic quantisation runs in ONNX Runtime)")
    if backend == "onnx":
        if precision not in ONNX_PRECISIONS:
            raise UsageError(f"option precision={precision!r} with backend=onnx: choose fp32 or int8 (bf16/fp16 are torch precisions)")
        if device not in ("auto", "cpu", ""):
            raise UsageError(f"option device={device!r} with backend=onnx: ONNX Runtime runs here on the CPU (use device=cpu or auto)")


def onnx_precision(precision: str) -> str:
    """``fp32`` or ``int8`` (``auto`` and the fp32 spellings are fp32)."""
    return ONNX_PRECISIONS[precision]


def _runtime() -> Any:
    try:
        import onnxruntime
    except ImportError:
        raise UsageError(f"backend=onnx needs ONNX Runtime: {INSTALL_HINT}") from None
    return onnxruntime


def input_names(torch_model: Any) -> list[str]:
    """The token inputs the model's forward takes (token_type_ids only where it has them)."""
    import inspect

    parameters = inspect.signature(torch_model.forward).parameters
    return ["input_ids", "attention_mask"] + (["token_type_ids"] if "token_type_ids" in parameters else [])


def export_key(torch_model: Any, kind: str) -> str:
    """sha256 over the weights and everything the exported graph depends on."""
    import torch
    import transformers

    from evalkit.systems._models.modelio import settings_key, weights_sha256

    return settings_key({
        "format": FORMAT, "weights": weights_sha256(torch_model), "kind": kind, "opset": OPSET,
        "class": type(torch_model).__name__, "torch": torch.__version__, "transformers": transformers.__version__,
    })


def _tmp(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")


def export_onnx(torch_model: Any, kind: str, target: Path) -> None:
    """``torch.onnx.export`` of a CPU copy of ``torch_model`` (the exporter alters the module it traces) to ``target``."""
    import copy
    import warnings

    import torch

    names = input_names(torch_model)
    output = KINDS[kind]
    model = copy.deepcopy(torch_model).to("cpu").eval()

    class Graph(torch.nn.Module):
        """Positional token inputs in, one tensor out: what the exporter traces."""

        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *inputs: Any) -> Any:
            return getattr(self.model(**dict(zip(names, inputs)), return_dict=True), output)

    example = tuple(torch.ones((2, 8), dtype=torch.long) if n != "token_type_ids" else torch.zeros((2, 8), dtype=torch.long)
                    for n in names)
    axes = {n: {0: "batch", 1: "sequence"} for n in names}
    axes[output] = {0: "batch", 1: "sequence"} if kind == "features" else {0: "batch"}
    tmp = _tmp(target)
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(Graph().eval(), example, str(tmp), input_names=names, output_names=[output], dynamic_axes=axes,
                              opset_version=OPSET, do_constant_folding=True, dynamo=False)
        os.replace(tmp, target)
    except UsageError:
        raise
    except Exception as exc:  # noqa: BLE001 - an architecture the exporter cannot trace is one line
        raise UsageError(f"backend=onnx: cannot export {type(torch_model).__name__} to ONNX: "
                         f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}") from None
    finally:
        tmp.unlink(missing_ok=True)


def quantize_int8(source: Path, target: Path) -> None:
    """Dynamic int8 quantisation of the MatMuls: per-channel symmetric int8 weights, uint8 activations per batch.

    The MatMuls are where int8 saves time; the embedding lookups (Gather) stay
    fp32 (quantising them only saves memory and costs accuracy: all-MiniLM-L6-v2
    on SciFact abstracts, mean-pooled cosine to fp32 >= 0.990 instead of 0.986).
    """
    import logging

    _runtime()
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError:
        raise UsageError(f"backend=onnx precision=int8 needs the onnx package: {INSTALL_HINT}") from None
    tmp = _tmp(target)
    quiet = logging.getLogger()
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # "consider pre-processing before quantization" and the like
    try:
        quantize_dynamic(str(source), str(tmp), weight_type=QuantType.QInt8, per_channel=True, op_types_to_quantize=["MatMul"])
        os.replace(tmp, target)
    finally:
        quiet.setLevel(level)
        tmp.unlink(missing_ok=True)


def exported_model(torch_model: Any, kind: str, precision: str) -> Path:
    """The cached ONNX file of ``torch_model`` at ``precision`` (``fp32`` / ``int8``), exported on first use."""
    from evalkit.systems._models.modelio import cache_dir

    _runtime()
    key = export_key(torch_model, kind)
    folder = cache_dir("onnx", key[:24])
    fp32, int8, done = folder / "model.onnx", folder / "model.int8.onnx", folder / f"{precision}.json"
    wanted = fp32 if precision == "fp32" else int8
    if done.exists() and wanted.exists():
        return wanted
    if not fp32.exists():
        export_onnx(torch_model, kind, fp32)
    if precision == "int8":
        quantize_int8(fp32, int8)
    settings = {"format": FORMAT, "key": key, "kind": kind, "precision": precision, "inputs": input_names(torch_model),
                "opset": OPSET, "model_class": type(torch_model).__name__}
    from evalkit.outputs import atomic_write

    atomic_write(done, json.dumps(settings, indent=1, sort_keys=True) + "\n", force=True)  # last: the entry is complete
    return wanted


def session(path: Path) -> Any:
    """An ONNX Runtime CPU session on ``path`` using torch's thread count (``torch.set_num_threads``)."""
    import torch

    ort = _runtime()
    options = ort.SessionOptions()
    options.intra_op_num_threads = max(1, torch.get_num_threads())
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def cached_session(torch_model: Any, kind: str, precision: str) -> Any:
    """A session on the cached export of ``torch_model``; an entry ONNX Runtime cannot load (truncated by a full disk
    or a killed process) is removed with a warning and exported again, as the BM25 index cache rebuilds its entries."""
    import warnings

    path = exported_model(torch_model, kind, precision)
    try:
        return session(path)
    except Exception as exc:  # noqa: BLE001 - onnxruntime's own error classes (InvalidProtobuf, Fail, ...) for a broken file
        reason = " ".join(str(exc).split())[:200]
        warnings.warn(f"backend=onnx: unreadable cached model {path} ({type(exc).__name__}: {reason}); rebuilding", stacklevel=2)
    for stale in ("model.onnx", "model.int8.onnx", "fp32.json", "int8.json"):
        (path.parent / stale).unlink(missing_ok=True)
    return session(exported_model(torch_model, kind, precision))
