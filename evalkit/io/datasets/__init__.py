"""Data by name: gold, queries and corpora read through ir_datasets as ``irds:<dataset id>``.

Wherever evalkit takes a gold, a query file or a corpus, ``irds:beir/scifact/test``
names a dataset of `ir_datasets <https://ir-datasets.com>`_ by its own id instead
of a file: the judgments (or queries, or documents) are streamed from
ir_datasets' iterators into the same readers a file goes through, so a dataset
and the same data as a file give the same figures. The manifest records the
dataset id, ir_datasets' version and the sha256 of what was read (the judgments
as TREC qrels lines, ``query_id 0 doc_id grade``).

ir_datasets is an optional extra (``pip install 'evalkit-ir[datasets]'``); its
download messages and progress pass through to the terminal.
"""
from __future__ import annotations

PREFIX = "irds:"


def is_dataset_id(value: object) -> bool:
    """Whether ``value`` names an ir_datasets dataset (``irds:<id>``) rather than a file."""
    return isinstance(value, str) and value.startswith(PREFIX)


def dataset_name(value: str) -> str:
    """``irds:beir/scifact/test`` -> ``beir/scifact/test``."""
    return value[len(PREFIX):]


__all__ = ["PREFIX", "dataset_name", "is_dataset_id"]
