"""Metric registry and the parser for names such as ``mrr@5`` or ``nDCG@10``.

Every metric is one small module that registers its class with
:func:`register`; :func:`parse_metrics` turns user text into instances.
Names are case-insensitive; aliases follow ir_measures, ranx and trec_eval.
"""
from __future__ import annotations

import re

from evalkit.errors import UsageError
from evalkit.metrics.base import Judged, Metric, safe_divide

_REGISTRY: dict[str, type[Metric]] = {}
_SPEC = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_\-]*)\s*(?:@\s*(-?\d+)\s*)?$")


def register(cls: type[Metric]) -> type[Metric]:
    """Class decorator: make a metric known under its name and aliases."""
    for key in (cls.name, *cls.aliases):
        _REGISTRY[key.lower()] = cls
    return cls


def registered() -> list[type[Metric]]:
    """Each registered metric class once, in registration order."""
    return list(dict.fromkeys(_REGISTRY.values()))


def parse_metric(text: str) -> Metric:
    """``"mrr@5"`` -> ``MRR@5``; raises :class:`UsageError` on unknown names or bad cutoffs."""
    match = _SPEC.match(text)
    if not match:
        raise UsageError(f"cannot read metric {text!r} (write it as name or name@k, e.g. mrr@5)")
    name, k = match.group(1).lower(), match.group(2)
    cls = _REGISTRY.get(name)
    if cls is None:
        known = ", ".join(sorted(c.name for c in registered()))
        raise UsageError(f"unknown metric {match.group(1)!r} (known: {known})")
    if k is None:
        if cls.cutoff == "required":
            raise UsageError(f"metric {cls.name} needs a cutoff, e.g. {cls.name}@10")
        return cls()
    if cls.cutoff == "none":
        raise UsageError(f"metric {cls.name} takes no cutoff")
    if int(k) <= 0:
        raise UsageError(f"metric {text.strip()!r}: the cutoff k must be a positive integer")
    return cls(int(k))


def parse_metrics(spec: str | list[str] | tuple[str, ...]) -> list[Metric]:
    """Parse a space- or comma-separated list (or a list of such strings); duplicates dropped."""
    parts = [spec] if isinstance(spec, str) else list(spec)
    tokens = [t for part in parts for t in re.split(r"[\s,;]+", part) if t]
    if not tokens:
        raise UsageError("no metric given")
    return list(dict.fromkeys(parse_metric(t) for t in tokens))


from evalkit.metrics import (  # noqa: E402  (register the built-in metrics)
    average_precision,
    bpref,
    climatecheck_bpref,
    ndcg,
    precision,
    r_precision,
    recall,
    reciprocal_rank,
    success,
)

__all__ = ["Judged", "Metric", "parse_metric", "parse_metrics", "register", "registered", "safe_divide"]
