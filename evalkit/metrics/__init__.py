"""Metric registry; :mod:`evalkit.metrics.parse` reads the names people type.

Every metric is one small module that registers its class with
:func:`register`; :func:`parse_metrics` turns user text into instances.
Names are case-insensitive; aliases follow ir_measures, ranx and trec_eval.
"""
from __future__ import annotations

from evalkit.metrics.base import Judged, Metric, safe_divide

_REGISTRY: dict[str, type[Metric]] = {}
_RULES: dict[str, str] = {}  # cutoff rule of a name when it differs from its class's ("required" / "none")


def register(cls: type[Metric] | None = None, *, after: str | None = None):
    """Class decorator (``@register``, or ``@register(after="GM-Bpref")``): make a metric known under its name and aliases.

    ``cutoff_aliases`` are names that need a cutoff (trec_eval families such as
    ``ndcg_cut``), ``set_aliases`` names that refuse one (trec_eval ``set_P``).
    ``after``: the metric it is listed after (a metric a plugin registers keeps its place in ``evalkit metrics``).
    """
    if cls is None:
        return lambda metric: register(metric, after=after)
    keys = [key.lower() for key in (cls.name, *cls.aliases, *cls.cutoff_aliases, *cls.set_aliases)]
    anchor = _REGISTRY.get(after.lower()) if after else None
    if anchor is None:
        _REGISTRY.update({key: cls for key in keys})
    else:
        items = [(key, value) for key, value in _REGISTRY.items() if key not in keys]
        at = max(i for i, (_, value) in enumerate(items) if value is anchor) + 1
        _REGISTRY.clear()
        _REGISTRY.update(items[:at] + [(key, cls) for key in keys] + items[at:])
    _RULES.update({key.lower(): "required" for key in cls.cutoff_aliases})
    _RULES.update({key.lower(): "none" for key in cls.set_aliases})
    return cls


ENTRY_POINT_GROUP = "evalkit.metrics"  # modules that register metrics of their own (a task's variants: ClimateCheck's Bpref)


def known() -> dict[str, type[Metric]]:
    """Every name the registry knows, lower-cased, the metrics that plugins register through entry points included."""
    from evalkit.core.entry_points import import_plugins

    import_plugins(ENTRY_POINT_GROUP)
    return _REGISTRY


def registered() -> list[type[Metric]]:
    """Each registered metric class once, in registration order (a plugin's after the built-ins)."""
    return list(dict.fromkeys(known().values()))


from evalkit.metrics import average_precision, bing, bpref  # noqa: E402
from evalkit.metrics import (  # noqa: E402  (the built-in metrics register themselves)
    counts,
    dcg,
    f_measure,
    g_measure,
    gmap,
    infap,
    iprec,
    judged,
    judged_share,
    ndcg,
    ndcg_rel,
    precision,
    r_precision,
    rbp,
    recall,
    reciprocal_rank,
    relative_precision,
    rndcg,
    rprec_mult,
    set_ap,
    success,
    trec_text,
    utility,
    yaap,
)

from evalkit.metrics.parse import parse_metric, parse_metrics  # noqa: E402

__all__ = ["Judged", "Metric", "parse_metric", "parse_metrics", "register", "registered", "safe_divide"]
