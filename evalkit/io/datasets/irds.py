"""Reading ``irds:<dataset id>`` through ir_datasets: judgments, queries and documents, streamed.

Judgments are streamed from ``qrels_iter()`` into TREC qrels lines
(``query_id iteration doc_id grade``) held in memory and read by the TREC
qrels reader, with every rule a file meets; their sha256 is the manifest's.
Queries and documents are streamed from ``queries_iter()`` / ``docs_iter()``
into the collection readers' records (a record's fields named as a file's
columns would be: ``doc_id`` -> id, ``body`` -> text, ...); their sha256 is
taken over the records as read (one sorted-keys JSON object a line).

A few ids name the union of several datasets (:data:`COMPOSITES`, e.g.
``beir/cqadupstack``: its 12 forums); each part's query and document ids are
then prefixed with the part's last name (``android/123``), so parts never
collide, and a run of the union must use the same ids. An evaluation profile
macro-averages over them (:mod:`evalkit.tasks.profiles`).
"""
from __future__ import annotations

import contextlib
import hashlib
import json
from typing import Any, Iterator

from evalkit.io.datasets import PREFIX
from evalkit.core.errors import EvalkitError, UsageError, shown

EXTRA = "pip install 'evalkit-ir[datasets]'"
CQADUPSTACK_FORUMS = ("android", "english", "gaming", "gis", "mathematica", "physics", "programmers", "stats", "tex",
                      "unix", "webmasters", "wordpress")
# ids that name the union of several ir_datasets datasets: id -> the parts' ids (prefix = each part's last name)
COMPOSITES: dict[str, tuple[str, ...]] = {
    "beir/cqadupstack": tuple(f"beir/cqadupstack/{forum}" for forum in CQADUPSTACK_FORUMS),
}
ENTITIES = {"qrels": "judgments", "queries": "queries", "docs": "documents"}


def ir_datasets_module() -> Any:
    """The ``ir_datasets`` module, or one line naming the extra that brings it."""
    try:
        import ir_datasets
    except ImportError:
        raise UsageError(f"irds: ids are read through ir_datasets, which is not installed: {EXTRA}") from None
    return ir_datasets


def version() -> str:
    return str(getattr(ir_datasets_module(), "__version__", "unknown"))


def parts(name: str) -> list[tuple[str | None, str]]:
    """``(id prefix or None, ir_datasets id)`` of each dataset ``name`` stands for."""
    composite = COMPOSITES.get(name)
    if composite is None:
        return [(None, name)]
    return [(part.rsplit("/", 1)[1], part) for part in composite]


def load(name: str, entity: str) -> Any:
    """The ir_datasets dataset ``name``, checked to provide ``entity`` (``qrels``, ``queries`` or ``docs``)."""
    irds = ir_datasets_module()
    label = PREFIX + name
    if not name or name != name.strip():
        raise UsageError(f"{shown(label)}: write a dataset id after irds:, e.g. irds:beir/scifact/test")
    try:
        dataset = irds.load(name)
    except KeyError:
        raise UsageError(f"{shown(label)}: ir_datasets {version()} knows no dataset of that id "
                         "(its ids are listed at ir-datasets.com)") from None
    with fetching(label):
        has = getattr(dataset, f"has_{entity}")()
    if not has:
        raise UsageError(f"{shown(label)}: this dataset has no {ENTITIES[entity]} in ir_datasets "
                         "(a split of it may, e.g. .../test or .../dev)")
    return dataset


@contextlib.contextmanager
def fetching(label: str) -> Iterator[None]:
    """ir_datasets' failures as one line: a file to download by hand, a download that failed, a broken cache."""
    try:
        yield
    except EvalkitError:
        raise
    except FileNotFoundError as exc:
        raise UsageError(f"{shown(label)}: ir_datasets needs a file you download yourself (its message above says "
                         f"which and where it goes): {shown(str(exc), 200)}") from None
    except Exception as exc:  # noqa: BLE001 - a stranger's dataset or a failed download: one line, not a traceback
        raise UsageError(f"{shown(label)}: ir_datasets could not read it: {type(exc).__name__}: {shown(str(exc), 200)}") from None


def _checked_id(value: object, what: str, label: str, line: int) -> str:
    text = value if isinstance(value, str) else str(value)
    if not text or any(c.isspace() for c in text):
        raise UsageError(f"{shown(label)}: judgment {line}: {what} {shown(text)} is empty or holds a blank")
    return text


def qrels_lines(name: str) -> bytes:
    """The judgments of ``name`` as TREC qrels lines (``query_id iteration doc_id grade``), in ir_datasets' order."""
    label = PREFIX + name
    lines: list[str] = []
    for prefix, part in parts(name):
        dataset = load(part, "qrels")
        lead = "" if prefix is None else prefix + "/"
        with fetching(PREFIX + part):
            for qrel in dataset.qrels_iter():
                line = len(lines) + 1
                query = lead + _checked_id(qrel.query_id, "query id", label, line)
                doc = lead + _checked_id(qrel.doc_id, "doc id", label, line)
                iteration = _checked_id(getattr(qrel, "iteration", "0") or "0", "iteration", label, line)
                lines.append(f"{query} {iteration} {doc} {qrel.relevance}\n")
    if not lines:
        raise UsageError(f"{shown(label)}: ir_datasets gave no judgments")
    return "".join(lines).encode("utf-8")


class _Taken:
    """The sha256 of records hashed while they were read (``result()`` once the reading is done)."""

    def __init__(self) -> None:
        self.digest = hashlib.sha256()

    def result(self) -> str:
        return self.digest.hexdigest()


def records(name: str, kind: str) -> "tuple[Iterator[tuple[int, dict[str, Any]]], Any]":
    """The documents (``kind="document"``) or queries (``"query"``) of ``name`` as the collection readers' raw records
    ``(number, {field: value})``, and their :class:`~evalkit.data.Source` (sha256 taken as they are read)."""
    from evalkit.data import Source

    entity = "docs" if kind == "document" else "queries"
    label = PREFIX + name
    taken = _Taken()
    datasets = [(prefix, part, load(part, entity)) for prefix, part in parts(name)]  # an unknown id: one line now

    def iterate() -> Iterator[tuple[int, dict[str, Any]]]:
        number = 0
        for prefix, part, dataset in datasets:
            with fetching(PREFIX + part):
                for item in (dataset.docs_iter() if entity == "docs" else dataset.queries_iter()):
                    number += 1
                    record = {key: value for key, value in item._asdict().items() if not isinstance(value, (dict, bytes))}
                    if prefix is not None:
                        key = "doc_id" if entity == "docs" else "query_id"
                        record[key] = f"{prefix}/{record[key]}"
                    taken.digest.update(json.dumps(record, sort_keys=True, default=str, allow_nan=False).encode("utf-8") + b"\n")
                    yield number, record

    return iterate(), Source(path=label, format="irds", sha256=taken)


def manifest_fields(name: str) -> dict[str, str]:
    """What a manifest records of a dataset beside its sha256: the id and ir_datasets' version."""
    return {"dataset": name, "ir_datasets": version()}


__all__ = ["COMPOSITES", "CQADUPSTACK_FORUMS", "fetching", "ir_datasets_module", "load", "manifest_fields", "parts",
           "qrels_lines", "records", "version"]
