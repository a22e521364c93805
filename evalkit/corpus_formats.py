"""Compatibility name: the collection and query readers live in :mod:`evalkit.formats.collections`
(one module per format under :mod:`evalkit.formats`, registered like run and gold formats)."""
from __future__ import annotations

from evalkit.formats.collections import detect_collection as detect
from evalkit.formats.collections import format_names, parse_mapping, read_corpus, read_queries

FORMATS = format_names()

__all__ = ["FORMATS", "detect", "parse_mapping", "read_corpus", "read_queries"]
