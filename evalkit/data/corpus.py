"""Documents and queries as systems see them.

A :class:`Corpus` is columnar: document ids plus named text fields (``title``,
``text``/``abstract``, ``authors``, ``journal``, ...), each a list aligned with
the ids ('' where a document lacks the field). Systems choose which fields to
use (``fields = ["title", "text"]``). Readers for the concrete file formats
live in :mod:`evalkit.io.formats.collections`.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from evalkit.data import Qrels, Source
from evalkit.core.errors import UsageError


def _fingerprint(parts: Iterable[str]) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()


@dataclass(frozen=True, eq=False)
class Corpus:
    """Documents: ``ids[i]`` has text ``fields[name][i]`` for each field name."""

    ids: list[str]
    fields: dict[str, list[str]]
    source: Source | None = None
    metadata: dict[str, dict] = field(default_factory=dict)  # optional per-doc extras, by id

    def __post_init__(self) -> None:
        for name, values in self.fields.items():
            if len(values) != len(self.ids):
                raise ValueError(f"field {name!r} has {len(values)} values for {len(self.ids)} documents")

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def field_names(self) -> list[str]:
        return list(self.fields)

    def position(self) -> dict[str, int]:
        """``{doc id: index}`` (cached)."""
        cached = self.__dict__.get("_position")
        if cached is None:
            cached = {d: i for i, d in enumerate(self.ids)}
            object.__setattr__(self, "_position", cached)
        return cached

    def text(self, index: int, fields: Sequence[str] = ("title", "text"), separator: str = " ") -> str:
        """The chosen fields of one document joined by ``separator`` (empty fields skipped)."""
        parts = (self.fields[f][index] for f in fields if f in self.fields)
        return separator.join(p for p in parts if p)

    def texts(self, fields: Sequence[str] = ("title", "text"), separator: str = " ") -> list[str]:
        return [self.text(i, fields, separator) for i in range(len(self.ids))]

    def fingerprint(self) -> str:
        """sha256 over ids and all fields: the cache key of indexes and embeddings."""
        cached = self.__dict__.get("_fingerprint")
        if cached is None:
            names = sorted(self.fields)
            cached = _fingerprint(
                [*names, *(part for i, d in enumerate(self.ids) for part in (d, *(self.fields[n][i] for n in names)))]
            )
            object.__setattr__(self, "_fingerprint", cached)
        return cached

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, str]], id_field: str = "id", **kwargs) -> "Corpus":
        """Build from dicts such as ``{"id": "d1", "title": "...", "text": "..."}``."""
        records = list(records)
        names = list(dict.fromkeys(k for r in records for k in r if k != id_field))
        return cls(
            ids=[str(r[id_field]) for r in records],
            fields={n: [str(r.get(n) or "") for r in records] for n in names},
            **kwargs,
        )


@dataclass(frozen=True, eq=False)
class Queries:
    """Query ids and texts (aligned), plus optional per-query metadata."""

    ids: list[str]
    texts: list[str]
    source: Source | None = None
    metadata: dict[str, dict] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.ids)

    def as_dict(self) -> dict[str, str]:
        return dict(zip(self.ids, self.texts))

    def subset(self, keep: Iterable[str]) -> "Queries":
        wanted = set(keep)
        pairs = [(q, t) for q, t in zip(self.ids, self.texts) if q in wanted]
        return Queries([q for q, _ in pairs], [t for _, t in pairs], self.source, {q: self.metadata[q] for q, _ in pairs if q in self.metadata})

    def fingerprint(self) -> str:
        return _fingerprint([p for pair in zip(self.ids, self.texts) for p in pair])


def check_judged_docs(corpus: Corpus, qrels: Qrels, label: str | None = None) -> None:
    """Refuse qrels judging documents the corpus lacks (training on the wrong corpus).

    ``label`` names the qrels in the error (default: its file path or name).
    """
    position = corpus.position()
    missing = sorted({str(d) for d in qrels.doc_ids.tolist()} - set(position))
    if missing:
        where = label or (qrels.source.path if qrels.source is not None else qrels.name)
        raise UsageError(
            f"{where}: {len(missing)} judged document id(s) are not in the corpus (e.g. {', '.join(missing[:3])}); wrong corpus?"
        )
