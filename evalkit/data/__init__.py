"""Columnar runs and relevance judgments.

A :class:`Run` holds one row per retrieved (query, document): integer codes
into the unique query and document ids, plus scores for scored runs or
``None`` for list submissions, whose ranking is the row order as written.
A :class:`Qrels` holds one row per judged (query, document) with a grade.
Both are built once by a reader and never mutated.
"""
from __future__ import annotations

import itertools
from dataclasses import FrozenInstanceError, dataclass, field, replace
from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

import numpy as np

from evalkit.core.digest import taken
from evalkit.data.ids import factorize

if TYPE_CHECKING:  # pragma: no cover
    from evalkit.core.digest import PendingDigest


class Source:
    """Where a run or gold came from (for messages and manifests): path, format, zip member and the sha256 of the file
    as stored. ``sha256`` may be given pending (an object whose ``result()`` gives it, :class:`evalkit.core.digest.Digest`):
    it is waited for when first asked for, so a command that shows no manifest never waits for a large input's hash."""

    __slots__ = ("path", "format", "member", "_sha256")
    path: str
    format: str
    member: str | None
    _sha256: "str | PendingDigest"  # the hash, or what gives it (taken by ``sha256``)

    def __init__(self, path: str, format: str, sha256: "str | PendingDigest" = "", member: str | None = None) -> None:
        for name, value in (("path", path), ("format", format), ("member", member), ("_sha256", sha256)):
            object.__setattr__(self, name, value)

    @property
    def sha256(self) -> str:
        digest = taken(self._sha256)  # still pending: taken now, once
        object.__setattr__(self, "_sha256", digest)
        return digest

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def _fields(self) -> tuple[str, str, str, str | None]:
        return self.path, self.format, self.sha256, self.member

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Source) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __reduce__(self):  # pickled (to a worker process) with its hash taken
        return Source, self._fields()

    def __repr__(self) -> str:
        return "Source(path={!r}, format={!r}, sha256={!r}, member={!r})".format(*self._fields())


@dataclass(frozen=True, eq=False)
class Run:
    """Ranked results: parallel per-row arrays over coded query and doc ids.

    ``scores is None`` marks a list submission: within a query, rows rank in
    the order they were written. Otherwise rows rank by the one rule of
    :mod:`evalkit.data.ranking` (score descending, ties by doc id descending).
    """

    query_ids: np.ndarray
    doc_ids: np.ndarray
    qidx: np.ndarray
    didx: np.ndarray
    scores: np.ndarray | None = None
    labels: np.ndarray | None = None
    declared_ranks: np.ndarray | None = None
    name: str = "run"
    source: Source | None = None
    warnings: tuple[str, ...] = field(default=())
    tag: str | None = None  # run tag of a TREC run (its last line's, as trec_eval's runid)
    # the file's columns as written (text, file order), for an official scorer that reads them so
    # (ClimateCheck: rank column, labels as typed); ``None`` for runs not read from such a file
    as_written: Mapping[str, tuple[str, ...]] | None = None

    # ----------------------------------------------------------- builders
    @classmethod
    def from_rows(
        cls,
        qids: Sequence[str],
        docs: Sequence[str],
        scores: Sequence[float] | np.ndarray | None = None,
        labels: Sequence[str] | None = None,
        declared_ranks: Sequence[int] | None = None,
        **kwargs,
    ) -> "Run":
        qidx, query_ids = factorize(qids)
        didx, doc_ids = factorize(docs)
        return cls(
            query_ids=query_ids,
            doc_ids=doc_ids,
            qidx=qidx,
            didx=didx,
            scores=None if scores is None else np.asarray(scores, dtype=np.float64),
            labels=None if labels is None else np.asarray(labels, dtype=object),
            declared_ranks=None if declared_ranks is None else np.asarray(declared_ranks, dtype=np.int64),
            **kwargs,
        )

    @classmethod
    def from_lists(cls, lists: Mapping[str, Sequence[str]], **kwargs) -> "Run":
        """A list submission: ``{query: [best doc, second doc, ...]}``."""
        answered = [q for q, ranked in lists.items() if len(ranked)]
        lengths = np.fromiter((len(lists[q]) for q in answered), dtype=np.int64, count=len(answered))
        didx, doc_ids = factorize(list(itertools.chain.from_iterable(lists.values())))
        query_ids = np.empty(len(answered), dtype=object)
        query_ids[:] = answered  # codes in first-seen order, as factorize of the repeated query ids gives
        run = cls(query_ids=query_ids, doc_ids=doc_ids, qidx=np.repeat(np.arange(len(answered), dtype=np.int64), lengths),
                  didx=didx, **kwargs)
        missing = [q for q, ranked in lists.items() if len(ranked) == 0]
        if missing:  # keep queries with empty lists: they were answered (with nothing)
            query_ids = np.concatenate([run.query_ids, np.array(missing, dtype=object)])
            run = replace(run, query_ids=query_ids)
        return run

    @classmethod
    def from_scores(cls, scores: Mapping[str, Mapping[str, float]], **kwargs) -> "Run":
        """A scored run: ``{query: {doc: score}}``."""
        qids = [q for q, docs in scores.items() for _ in docs]
        docs = [d for ranked in scores.values() for d in ranked]
        values = [s for ranked in scores.values() for s in ranked.values()]
        return cls.from_rows(qids, docs, np.asarray(values, dtype=np.float64), **kwargs)

    # ----------------------------------------------------------- views
    @property
    def is_scored(self) -> bool:
        return self.scores is not None

    @property
    def n_rows(self) -> int:
        return int(self.qidx.shape[0])

    def ranked(self):
        """The run in rank order (see :func:`evalkit.data.ranking.rank_run`); cached."""
        cached = self.__dict__.get("_ranked")
        if cached is None:
            from evalkit.data.ranking import rank_run

            cached = rank_run(self)
            object.__setattr__(self, "_ranked", cached)
        return cached

    def duplicated_queries(self) -> np.ndarray:
        """Codes of the queries whose list names some document more than once."""
        return self.ranked().duplicated_queries()

    def judgments_for(self, qrels: "Qrels"):
        """The run's judged rows against ``qrels`` when read against it (:mod:`evalkit.io.prejudged`), else ``None``."""
        return None

    def to_lists(self, depth: int | None = None) -> dict[str, list[str]]:
        """``{query: [doc, ...]}`` in rank order, first ``depth`` rows per query."""
        ranked = self.ranked()
        out: dict[str, list[str]] = {str(q): [] for q in self.query_ids}
        keep = ranked.rank <= depth if depth is not None else slice(None)
        for q, d in zip(ranked.qidx[keep].tolist(), ranked.didx[keep].tolist()):
            out[self.query_ids[q]].append(self.doc_ids[d])
        return out

    def to_scores(self, depth: int | None = None) -> dict[str, dict[str, float]]:
        """``{query: {doc: score}}`` whose score order reproduces the ranking exactly.

        For list runs the score is ``n - position + 1`` (distinct, descending);
        repeated documents keep their first (best) position. This is how runs
        are handed to ranx or pytrec_eval without changing their order.
        """
        ranked = self.ranked()
        out: dict[str, dict[str, float]] = {str(q): {} for q in self.query_ids}
        keep = ranked.first if depth is None else ranked.first & (ranked.rank <= depth)
        qs, ds, rs = ranked.qidx[keep], ranked.didx[keep], ranked.rank[keep]
        values = ranked.scores[keep] if self.is_scored else (-rs).astype(np.float64) + rs.max(initial=0) + 1
        for q, d, v in zip(qs.tolist(), ds.tolist(), values.tolist()):
            out[self.query_ids[q]][self.doc_ids[d]] = v
        return out

    def to_pandas(self):
        """The run in rank order as a DataFrame: ``query_id, doc_id, rank`` (1-based), ``score`` and ``label`` when present."""
        from evalkit.core.errors import require

        pd = require("pandas", "Run.to_pandas() (a DataFrame)")

        ranked = self.ranked()
        data = {
            "query_id": self.query_ids[ranked.qidx].astype(str),
            "doc_id": self.doc_ids[ranked.didx].astype(str),
            "rank": ranked.rank,
        }
        if ranked.scores is not None:
            data["score"] = ranked.scores
        if ranked.labels is not None:
            data["label"] = ranked.labels
        return pd.DataFrame(data)

    def with_name(self, name: str) -> "Run":
        return replace(self, name=name)

    def restrict(self, query_ids: Iterable[str]) -> "Run":
        """The rows of the queries in ``query_ids`` only (row order, scores and labels kept)."""
        wanted = {str(q) for q in query_ids}
        keep = np.fromiter((str(q) in wanted for q in self.query_ids), dtype=bool, count=len(self.query_ids))
        if keep.all():
            return self
        rows = keep[self.qidx]
        code = np.cumsum(keep) - 1

        def pick(values: np.ndarray | None) -> np.ndarray | None:
            return None if values is None else values[rows]

        return replace(
            self, query_ids=self.query_ids[keep], qidx=code[self.qidx[rows]], didx=self.didx[rows], scores=pick(self.scores),
            labels=pick(self.labels), declared_ranks=pick(self.declared_ranks), as_written=None,
        )


@dataclass(frozen=True, eq=False)
class Qrels:
    """Relevance judgments: one row per judged (query, doc) with a numeric grade.

    ``texts`` maps query ids to their text where the gold file carries it;
    ``labels`` keeps a per-judgment class label (e.g. ClimateCheck's
    Supports / Refutes / Not Enough Information).
    """

    query_ids: np.ndarray
    doc_ids: np.ndarray
    qidx: np.ndarray
    didx: np.ndarray
    grades: np.ndarray
    labels: np.ndarray | None = None
    texts: Mapping[str, str] | None = None
    name: str = "gold"
    source: Source | None = None
    as_written: Mapping[str, tuple[str, ...]] | None = None  # the gold's columns as written (see Run.as_written)
    layout: str = ""  # built in memory: the gold format its columns were read as (task detection); files: source.format

    @property
    def gold_format(self) -> str:
        """The format the gold was read as (``""``: judgments built in code), which task detection reads."""
        return self.source.format if self.source is not None else self.layout

    @classmethod
    def from_rows(cls, qids, docs, grades, labels=None, **kwargs) -> "Qrels":
        qidx, query_ids = factorize(qids)
        didx, doc_ids = factorize(docs)
        return cls(
            query_ids=query_ids,
            doc_ids=doc_ids,
            qidx=qidx,
            didx=didx,
            grades=np.asarray(grades, dtype=np.float64),
            labels=None if labels is None else np.asarray(labels, dtype=object),
            **kwargs,
        )

    @classmethod
    def from_dict(cls, judgments: Mapping[str, Mapping[str, float]], **kwargs) -> "Qrels":
        qids = [q for q, docs in judgments.items() for _ in docs]
        docs = [d for judged in judgments.values() for d in judged]
        grades = [g for judged in judgments.values() for g in judged.values()]
        return cls.from_rows(qids, docs, grades, **kwargs)

    @property
    def n_rows(self) -> int:
        return int(self.qidx.shape[0])

    def to_pandas(self):
        """The judgments as a DataFrame ``query_id, doc_id, relevance`` (and ``label`` when present)."""
        from evalkit.core.errors import require

        pd = require("pandas", "Qrels.to_pandas() (a DataFrame)")

        data = {"query_id": self.query_ids[self.qidx].astype(str), "doc_id": self.doc_ids[self.didx].astype(str), "relevance": self.grades}
        if self.labels is not None:
            data["label"] = self.labels
        return pd.DataFrame(data)

    def to_dict(self) -> dict[str, dict[str, int | float]]:
        out: dict[str, dict[str, int | float]] = {str(q): {} for q in self.query_ids}
        for q, d, g in zip(self.qidx.tolist(), self.didx.tolist(), self.grades.tolist()):
            out[self.query_ids[q]][self.doc_ids[d]] = int(g) if float(g).is_integer() else g
        return out

    def select(self, keep: np.ndarray, name: str | None = None) -> "Qrels":
        """The judgments of the rows ``keep`` (a boolean mask over rows) only; every query id stays a gold query.

        Labels and the columns as written are cut alike, so an official scorer reading them sees the same rows.
        """
        keep = np.asarray(keep, dtype=bool)
        written = None if self.as_written is None else {k: tuple(np.asarray(v, dtype=object)[keep].tolist()) for k, v in self.as_written.items()}
        return replace(
            self, qidx=self.qidx[keep], didx=self.didx[keep], grades=self.grades[keep],
            labels=None if self.labels is None else self.labels[keep], as_written=written, name=name or self.name,
        )

    def ideal_order(self) -> np.ndarray:
        """The judgment rows that enter an ideal ranking (grade >= 0) by query code, grade descending, then row (a
        stable sort): each query's ideal ranking (nDCG's, :func:`evalkit.metrics.evaluation.judge`), for any subset of
        queries kept in order by a selection. Cached: one sort per gold however many runs are scored on it."""
        cached = self.__dict__.get("_ideal_order")
        if cached is None:
            rows = np.flatnonzero(self.grades >= 0)
            cached = rows[np.lexsort((-self.grades[rows], self.qidx[rows]))]
            object.__setattr__(self, "_ideal_order", cached)
        return cached

    def query_order(self) -> np.ndarray:
        """The query codes by their ids, byte-wise (UTF-8 bytes sort as the code points do): the order in which
        trec_eval adds up a mean (:meth:`evalkit.metrics.evaluation.Evaluation.mean`). Cached, as above."""
        cached = self.__dict__.get("_query_order")
        if cached is None:
            cached = np.argsort(np.asarray(self.query_ids, dtype=str), kind="stable")
            object.__setattr__(self, "_query_order", cached)
        return cached

    def relevant_docs(self, relevance_level: float = 1) -> dict[str, list[str]]:
        """``{query: [relevant doc, ...]}`` in file order."""
        out: dict[str, list[str]] = {str(q): [] for q in self.query_ids}
        keep = self.grades >= relevance_level
        for q, d in zip(self.qidx[keep].tolist(), self.didx[keep].tolist()):
            out[self.query_ids[q]].append(self.doc_ids[d])
        return out
