"""Metric registry; :mod:`evalkit.metrics.parse` reads the names people type.

Every metric is one small module that registers its class with
:func:`register`; :func:`parse_metrics` turns user text into instances.
Names are case-insensitive; aliases follow ir_measures, ranx and trec_eval.
"""
from __future__ import annotations

from evalkit.metrics.base import Judged, Metric, safe_divide

_REGISTRY: dict[str, type[Metric]] = {}
_RULES: dict[str, str] = {}  # cutoff rule of a name when it differs from its class's ("required" / "none")


def register(cls: type[Metric]) -> type[Metric]:
    """Class decorator: make a metric known under its name and aliases.

    ``cutoff_aliases`` are names that need a cutoff (trec_eval families such as
    ``ndcg_cut``), ``set_aliases`` names that refuse one (trec_eval ``set_P``).
    """
    for key in (cls.name, *cls.aliases, *cls.cutoff_aliases, *cls.set_aliases):
        _REGISTRY[key.lower()] = cls
    _RULES.update({key.lower(): "required" for key in cls.cutoff_aliases})
    _RULES.update({key.lower(): "none" for key in cls.set_aliases})
    return cls


def registered() -> list[type[Metric]]:
    """Each registered metric class once, in registration order."""
    return list(dict.fromkeys(_REGISTRY.values()))


from evalkit.metrics import average_precision, bing, bpref  # noqa: E402
from evalkit.tasks.climatecheck2025 import bpref as climatecheck_bpref  # noqa: E402
from evalkit.metrics import (  # noqa: E402
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
