"""The system registry and its one-line factory.

Systems register under a name, either with the :func:`register_system`
decorator or through the ``evalkit.systems`` entry-point group, which is how
third-party packages add systems without touching evalkit::

    # in the plugin's pyproject.toml
    [project.entry-points."evalkit.systems"]
    my-bm25 = "my_package.module:MyRetriever"

The built-in systems in ``systems/`` (installed as ``evalkit.systems``) are
declared the same way in evalkit's own ``setup.py``. Loading is lazy: a
system's module is imported only when the system is asked for. A class
without a ``name`` takes its entry-point name; a class that is not a
Retriever, Reranker or Labeler, or a plugin that cannot be imported, is one
:class:`~evalkit.core.errors.UsageError` line naming the plugin's distribution.

>>> from evalkit.pipelines.registry import load_system
>>> bm25 = load_system("bm25", analyzer="stem")          # doctest: +SKIP
"""
from __future__ import annotations

import dataclasses
import math
import typing
from typing import Any, Iterable, Mapping

from evalkit._version import DISTRIBUTION
from evalkit.core.entry_points import EntryPoint, entry_points
from evalkit.core.errors import UsageError
from evalkit.pipelines.stages import Labeler, Reranker, Retriever, System, option_fields

ENTRY_POINT_GROUP = "evalkit.systems"
_REGISTRY: dict[str, type[System]] = {}
_ENTRY_POINTS: dict[str, EntryPoint] | None = None


def _who(cls: Any) -> str:
    return getattr(cls, "name", None) or getattr(cls, "__qualname__", None) or repr(cls)


STAGE_CLASSES: dict[str, type[System]] = {"retriever": Retriever, "reranker": Reranker, "labeler": Labeler}


def _is_stage(cls: Any) -> bool:
    """A class of one of the stage contracts, whose ``kind`` is that contract's (a bare System subclass claiming a stage
    kind would register and then fail when run)."""
    contract = STAGE_CLASSES.get(getattr(cls, "kind", None) or "") if isinstance(cls, type) else None
    return contract is not None and issubclass(cls, contract)


def register_system(cls: type[System]) -> type[System]:
    """Class decorator: make ``cls`` available under ``cls.name``."""
    if not getattr(cls, "name", None) or not _is_stage(cls):
        raise UsageError(f"system class {_who(cls)} needs a `name` and must subclass Retriever, Reranker or Labeler "
                         f"(kind one of {', '.join(STAGE_CLASSES)})")
    option_fields(cls)
    _REGISTRY[cls.name] = cls
    return cls


def _entry_points() -> dict[str, EntryPoint]:
    global _ENTRY_POINTS
    if _ENTRY_POINTS is None:
        _ENTRY_POINTS = {ep.name: ep for ep in entry_points(ENTRY_POINT_GROUP)}
    return _ENTRY_POINTS


def refresh() -> None:
    """Forget cached entry points (after installing a plugin in the same process)."""
    global _ENTRY_POINTS
    _ENTRY_POINTS = None


def system_names() -> list[str]:
    return sorted(set(_REGISTRY) | set(_entry_points()))


def get_system_class(name: str) -> type[System]:
    if name in _REGISTRY:
        return _REGISTRY[name]
    entry = _entry_points().get(name)
    if entry is None:
        raise UsageError(f"unknown system {name!r} (known: {', '.join(system_names()) or 'none'})")
    dist_name = getattr(entry, "dist_name", None)
    builtin = entry.value.startswith("evalkit.systems.")
    hint = f"pip install '{DISTRIBUTION}[systems]'" if builtin or dist_name is None else f"pip install --force-reinstall {dist_name}"
    try:
        loaded = entry.load()
    except ImportError as exc:
        raise UsageError(f"system {name!r} needs a missing package ({exc}); try: {hint}") from None
    except Exception as exc:  # noqa: BLE001 - a broken plugin is one line, not a traceback
        raise UsageError(f"system plugin {name!r} ({entry.value}) of {dist_name or 'an unknown package'} cannot be loaded: "
                         f"{type(exc).__name__}: {exc}") from None
    if name in _REGISTRY:  # the module registered it (@register_system)
        return _REGISTRY[name]
    if not _is_stage(loaded):
        raise UsageError(f"system plugin {name!r} ({entry.value}) of {dist_name or 'an unknown package'} is not an evalkit system: "
                         "it must be a class that subclasses Retriever, Reranker or Labeler")
    if not getattr(loaded, "name", None):
        loaded.name = name  # the entry-point name is the default system name
    option_fields(loaded)
    _REGISTRY[name] = loaded
    return loaded


def load_system(name: str, **options: Any) -> System:
    """The one-line factory: ``load_system("bm25", k1=1.2)``."""
    return get_system_class(name)(**options)


def describe_options(cls: type[System]) -> list[tuple[str, str, Any, str]]:
    """``(name, type, default, help)`` for each option of ``cls``."""
    fields = option_fields(cls)
    hints = typing.get_type_hints(cls.Options)
    out = []
    for f in fields:
        default = f.default if f.default is not dataclasses.MISSING else (f.default_factory() if f.default_factory is not dataclasses.MISSING else None)  # type: ignore[misc]
        out.append((f.name, _type_name(hints.get(f.name, str)), default, f.metadata.get("help", "")))
    return out


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", None) or str(tp).replace("typing.", "")


def coerce_value(tp: Any, text: str, key: str) -> Any:
    """Turn ``--set key=text`` into the option's declared type."""
    origin = typing.get_origin(tp)
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        if text.lower() in ("none", "null", ""):
            return None
        return coerce_value(args[0], text, key)
    if origin in (list, tuple) or tp in (list, tuple):
        inner = args[0] if args else str
        items = [coerce_value(inner, part.strip(), key) for part in text.split(",") if part.strip()]
        return items if origin is not tuple else tuple(items)
    try:
        if tp is bool:
            lowered = text.lower()
            if lowered in ("1", "true", "yes", "on"):
                return True
            if lowered in ("0", "false", "no", "off"):
                return False
            raise ValueError(text)
        if tp in (int, float, str):
            return tp(text)
    except ValueError:
        raise UsageError(f"option {key}={text!r}: expected {_type_name(tp)}") from None
    return text


def _value_fits(tp: Any, value: Any) -> bool:
    """Whether a config value (TOML, JSON) has the option's declared type: no guessing (``"no"`` is not a bool)."""
    origin = typing.get_origin(tp)
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return value is None or any(_value_fits(a, value) for a in args)
    if origin in (list, tuple) or tp in (list, tuple):
        inner = args[0] if args else Any
        return isinstance(value, (list, tuple)) and all(_value_fits(inner, v) for v in value)
    if tp is bool:
        return isinstance(value, bool)
    if tp is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if tp is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if tp is str:
        return isinstance(value, str)
    return True  # a type evalkit does not check (dicts of phases, plugin types): the system checks it


def check_option_values(cls: type[System], options: Mapping[str, Any], label: str) -> None:
    """Every option from a config file has its declared type (``fields = [1, 2]``, ``cache = "no"``: one line each)."""
    hints = typing.get_type_hints(cls.Options)
    for key, value in options.items():
        tp = hints.get(key)
        if tp is not None and not _value_fits(tp, value):
            shown = str(tp).replace("typing.", "") if typing.get_args(tp) else _type_name(tp)
            raise UsageError(f"{label}: options.{key} = {value!r} must be {shown}"
                             + (" (true or false)" if tp is bool else ""))


def owns_depth(cls: type[System]) -> bool:
    """A reranker or labeler whose ``depth`` is the stage's (the base class owns it) rather than an option it declares."""
    return getattr(cls, "kind", None) in ("reranker", "labeler") and "depth" not in {f.name for f in option_fields(cls)}


def split_stage_depth(cls: type[System], options: Mapping[str, Any], label: str) -> tuple[dict[str, Any], int | None]:
    """``options`` without a ``depth`` the base class owns (see :func:`owns_depth`), and that depth (checked), else None."""
    options = dict(options)
    if not owns_depth(cls) or "depth" not in options:
        return options, None
    depth = options.pop("depth")
    if not (isinstance(depth, int) and not isinstance(depth, bool) and 0 < depth <= 10_000_000):
        raise UsageError(f"{label}: depth = {depth!r} must be a whole number from 1 to 10,000,000")
    return options, depth


def parse_set_options(cls: type[System], pairs: Iterable[str]) -> dict[str, Any]:
    """``["k1=1.2", "fields=title,text"]`` -> typed options for ``cls`` (``depth`` for every reranker and labeler)."""
    known = {f.name for f in option_fields(cls)} | ({"depth"} if owns_depth(cls) else set())
    hints = {**({"depth": int} if owns_depth(cls) else {}), **typing.get_type_hints(cls.Options)}
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not key:
            raise UsageError(f"--set {pair!r}: write it as key=value")
        if key not in known:
            raise UsageError(f"unknown option {key!r} for system {_who(cls)} (known: {', '.join(sorted(known)) or 'none'})")
        options[key] = coerce_value(hints.get(key, str), value.strip(), key)
    return options


def distributed_work(cls: type) -> str:
    """What of system class ``cls`` a distributed engine runs remotely, for ``evalkit systems``: its
    ``distributed`` text, else by kind (a pointwise reranker's :meth:`score_pairs`, a ``label_claim``
    labeler's claims; an overridden ``score_lists`` / ``label_pairs`` or a retriever runs in the driver)."""
    declared = getattr(cls, "distributed", None)
    if declared is not None:
        return declared or "nothing (runs in the driver)"
    if issubclass(cls, Reranker) and cls.score_lists is Reranker.score_lists:
        return "score_pairs, units of whole model batches"
    if issubclass(cls, Labeler) and cls.label_pairs is Labeler.label_pairs:
        return "label_claim, whole claims per unit"
    return "nothing (runs in the driver)"
