"""ONNX Runtime CPU inference for the transformer inside a sentence-transformers model: fp32 or int8.

``--set backend=onnx`` (fp32) or ``--set backend=onnx --set precision=int8``
on the dense retriever and the cross-encoder. The Hugging Face model inside
the sentence-transformers model (``model.transformers_model``) is exported
once to ONNX, its graph fused, and, for int8, dynamically quantised; the
files are cached under the evalkit cache (``$EVALKIT_CACHE/onnx/<key>/``),
the key a sha256 over the model's weights
(:func:`~evalkit.systems._models.modelio.weights_sha256`) and the export
settings, so a second load of the same weights reuses them and fine-tuned
weights get their own entry. At run time
:class:`~evalkit.systems._models.onnx_module.OnnxModel` takes the Hugging
Face model's place: inference goes through an ``onnxruntime``
``InferenceSession``; the tokenising, batching and pooling of the systems
stay as they are.

The steps, and why each (``bench/onnx_speed.py`` times them):

1. **Export** with the torch exporter (``torch.onnx.export``, TorchScript,
   opset 17) from a copy of the model switched to *eager* attention. The
   default attention of transformers 5 (``sdpa``) traces into a graph of
   mask arithmetic and unfused products that ONNX Runtime runs slower than
   torch.
2. **Fuse** with ONNX Runtime's transformer optimizer
   (``onnxruntime.transformers.optimizer``, model type ``bert`` for the
   BERT / RoBERTa / XLM-R families): one ``Attention`` node per layer,
   ``EmbedLayerNormalization``, ``SkipLayerNormalization``, ``BiasGelu``.
   Same scores as torch to ~1e-6; a graph the optimizer does not know is
   kept as exported.
3. **int8**: ``quantize_dynamic`` of the ``MatMul`` and fused ``Attention``
   weights, per-channel symmetric int8, activations quantised at run time
   (uint8) over each text alone: :class:`~.onnx_module.OnnxModel` runs a
   session one text at a time, cut to its tokens, so that a text's int8
   output never depends on its batch (ONNX Runtime takes one scale over an
   operator's whole input). The embeddings, the pooler, the classification head and
   each layer's feed-forward down projection stay fp32 (:func:`fp32_node`:
   the last halves the error against fp32, for a small part of int8's
   speed). On x86 CPUs without
   VNNI (AVX2 only, e.g. AMD Zen 3) the uint8 x int8 products are summed in
   16-bit pairs that saturate; the weights are then quantised to 7 bits
   (``reduce_range``), as ONNX Runtime's documentation advises, which halves
   the error against fp32 at no cost in speed.
4. **Session**: intra-op threads = torch's thread count (one per worker
   process under the local engine), no spinning between operators (a
   spinning thread burns a core another process could use), one inter-op
   thread, memory patterns off (shapes change with every batch).

Why not sentence-transformers' own ``backend="onnx"`` and
``export_dynamic_quantized_onnx_model``: both need ``optimum-onnx``, which
requires ``transformers<4.58`` (installing it would downgrade transformers 5).
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from evalkit._version import DISTRIBUTION
from evalkit.core.errors import UsageError

BACKENDS = ("torch", "onnx")
# bf16-native (bf16 where the device computes it natively) is fp32 here: ONNX Runtime's CPU kernels have no bf16
ONNX_PRECISIONS = {"auto": "fp32", "fp32": "fp32", "float32": "fp32", "none": "fp32", "no": "fp32", "bf16-native": "fp32", "int8": "int8"}
OPSET = 17
FORMAT = 4  # bump when the export, fusion or quantisation settings change: old cache entries are then ignored
FUSED_MODEL_TYPES = {"bert", "roberta", "xlm-roberta", "camembert", "electra"}  # the optimizer's "bert" fusions apply
FP32_NODES = ("pooler", "classifier")  # node names kept fp32 by the int8 quantisation
FFN_DOWN = ("/output/dense/", "/ffn/lin2/")  # the feed-forward down projections (BERT family, DistilBERT): kept fp32
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
    """``fp32`` or ``int8`` (``auto``, ``bf16-native`` and the fp32 spellings are fp32)."""
    return ONNX_PRECISIONS[precision]


def autocast_precision(backend: str, precision: str) -> str:
    """The precision torch's autocast runs at around a system's inference: the option's own with backend=torch;
    fp32 with backend=onnx, where ONNX Runtime computes (fp32 or int8 inside its graph) and no autocast wraps it."""
    return precision if backend == "torch" else "fp32"


def inference_precision(backend: str, device: str, precision: str) -> str:
    """What a system's inference computes in (``fp32``, ``bf16``, ``fp16``, ``int8``): a cache key's part
    (:func:`~evalkit.systems._models.modelio.precision_tag` for torch, :func:`onnx_precision` for ONNX Runtime)."""
    from evalkit.systems._models import modelio

    return modelio.precision_tag(device, precision) if backend == "torch" else onnx_precision(precision)


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
    """A fresh hidden name beside ``path`` (``.NAME.evalkit-HOST-PID-RANDOM.tmp``); the leftovers of a killed process in
    that cache folder are removed first (:func:`evalkit.io.writing.temporaries.clean_stale_temporaries`)."""
    from evalkit.io.writing.temporaries import clean_stale_temporaries, temporary_name

    clean_stale_temporaries(path.parent)
    return temporary_name(path, "tmp")


def export_onnx(torch_model: Any, kind: str, target: Path) -> None:
    """``torch.onnx.export`` of a CPU copy of ``torch_model`` (the exporter alters the module it traces) to ``target``."""
    import copy
    import warnings

    import torch

    names = input_names(torch_model)
    output = KINDS[kind]
    model = copy.deepcopy(torch_model).to("cpu").eval()
    eager_attention(model)

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


def eager_attention(model: Any) -> None:
    """Switch a copied model to transformers' eager attention (the pattern ONNX Runtime's fusions recognise)."""
    setter = getattr(model, "set_attn_implementation", None)
    try:
        if callable(setter):
            setter("eager")
        elif getattr(model, "config", None) is not None:
            model.config._attn_implementation = "eager"
    except (ValueError, AttributeError, TypeError):  # a model without that choice exports as it is
        pass


def fuse_graph(source: Path, target: Path, config: Any) -> bool:
    """ONNX Runtime's transformer fusions of ``source`` into ``target``; False (nothing written) for other architectures."""
    model_type = getattr(config, "model_type", "")
    heads, hidden = getattr(config, "num_attention_heads", 0), getattr(config, "hidden_size", 0)
    if model_type not in FUSED_MODEL_TYPES or not heads or not hidden:
        return False
    import logging

    from onnxruntime.transformers.optimizer import optimize_model

    tmp = _tmp(target)
    quiet = logging.getLogger("onnxruntime.transformers")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        optimized = optimize_model(str(source), model_type="bert", num_heads=int(heads), hidden_size=int(hidden), opt_level=0)
        optimized.save_model_to_file(str(tmp))
        os.replace(tmp, target)
        return True
    except Exception:  # noqa: BLE001 - the unfused graph is correct, only slower
        return False
    finally:
        quiet.setLevel(level)
        tmp.unlink(missing_ok=True)


def has_vnni() -> bool:
    """Whether this CPU has 8-bit dot products (AVX512-VNNI / AVX-VNNI), which do not saturate in 16 bits."""
    from evalkit.systems._models.modelio import cpu_flags

    return not cpu_flags().isdisjoint(("avx512_vnni", "avx_vnni", "amx_int8"))


def fp32_node(name: str) -> bool:
    """Nodes int8 leaves alone: the pooler and the classification head (cheap; they carry the score) and each
    layer's feed-forward down projection, whose input (after GELU, 4x wide, heavy-tailed) loses most in 8 bits and
    whose quantising costs about what its int8 product saves."""
    lowered = name.lower()
    return any(part in lowered for part in FP32_NODES) or (any(part in lowered for part in FFN_DOWN) and "attention" not in lowered)


def quantize_int8(source: Path, target: Path, reduce_range: bool | None = None) -> None:
    """Dynamic int8 quantisation of the MatMul and Attention weights: per-channel symmetric int8 (7-bit without VNNI:
    ``reduce_range``), uint8 activations per input (the session is run one text at a time); the embeddings and the :func:`fp32_node` nodes stay fp32."""
    import logging

    _runtime()
    try:
        import onnx
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError:
        raise UsageError(f"backend=onnx precision=int8 needs the onnx package: {INSTALL_HINT}") from None
    keep = [name for node in onnx.load(str(source), load_external_data=False).graph.node if fp32_node(node.name)
            for name in (node.name, f"{node.name}_MatMul")]  # the quantiser turns a Gemm into NAME_MatMul + Add
    tmp = _tmp(target)
    quiet = logging.getLogger()
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # "consider pre-processing before quantization" and the like
    try:
        quantize_dynamic(str(source), str(tmp), weight_type=QuantType.QInt8, per_channel=True,
                         reduce_range=not has_vnni() if reduce_range is None else reduce_range,
                         op_types_to_quantize=["MatMul", "Attention"], nodes_to_exclude=keep,
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})  # fused nodes have no inferred types
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
    exported, fp32, int8 = folder / "model.exported.onnx", folder / "model.onnx", folder / "model.int8.onnx"
    done = folder / f"{precision}.json"
    wanted = fp32 if precision == "fp32" else int8
    if done.exists() and wanted.exists():
        return wanted
    if not fp32.exists():
        if not exported.exists():
            export_onnx(torch_model, kind, exported)
        if not fuse_graph(exported, fp32, getattr(torch_model, "config", None)):
            os.replace(exported, fp32)
        exported.unlink(missing_ok=True)
    reduce_range = not has_vnni()
    if precision == "int8":
        quantize_int8(fp32, int8, reduce_range)
    settings = {"format": FORMAT, "key": key, "kind": kind, "precision": precision, "inputs": input_names(torch_model),
                "opset": OPSET, "model_class": type(torch_model).__name__, "reduce_range": reduce_range}
    from evalkit.io.transactions import atomic_write

    atomic_write(done, json.dumps(settings, indent=1, sort_keys=True, allow_nan=False) + "\n", force=True)  # last: the entry is complete
    return wanted


def session(path: Path) -> Any:
    """An ONNX Runtime CPU session on ``path`` using torch's thread count (``torch.set_num_threads``), no spinning."""
    import torch

    ort = _runtime()
    options = ort.SessionOptions()
    options.intra_op_num_threads = max(1, torch.get_num_threads())
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.enable_mem_pattern = False  # every batch has its own shape
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
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
