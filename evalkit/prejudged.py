"""A TREC run read against the gold it is scored on: its judged rows ranked in the reading pass, its other rows only counted.

Scoring needs, of a run, only its queries, how many rows each retrieved and
where each judged document ranks (see :class:`~evalkit.metrics.base.Judged`).
A 5,000,000-row run against 150,000 judgments holds 500,000 distinct documents,
and coding them (a table larger than the cache, probed at random) is most of
reading it. :func:`read_judged` reads the run query by query instead
(:mod:`evalkit._native`'s ``judge_run``): each query's rows are kept until its
last one, then its judged rows are ranked against its own rows by the one
ranking rule (score descending, ties by document id descending,
:mod:`evalkit.ranking`): rank = 1 + the rows ranked before. Nothing else of
the run is kept.

The result is a :class:`DeferredRun`: a :class:`~evalkit.data.Run` whose
queries, tag and warnings are known now and whose rows (document ids, codes,
scores) are read by the general reader the first time anything asks for them,
so every other use of the run gives what it gives for any run. Scoring it
against the same gold takes :class:`RunJudgments` instead of ranking it. The
pass declines (the general reader reads the run, with its messages) wherever
the general reader could decide anything else: a line it refuses, a query
whose rows are not contiguous, a document listed twice for one query (the
repeat warning), a NUL byte.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from evalkit.data import Qrels, Run, Source
from evalkit.ids import object_array

DEFERRED = ("doc_ids", "qidx", "didx", "scores")  # the fields a DeferredRun reads when first asked for


@dataclass(frozen=True, eq=False)
class RunJudgments:
    """A run's rows as scoring against ``qrels`` needs them: rows per run query (codes of ``Run.query_ids``), each
    run query's place in ``qrels.query_ids`` (-1: not there; the lookup its rows were judged by) and, for each row
    whose document is judged for its query (any grade), its query code, rank and judgment row in ``qrels``; grouped
    by query code, rank ascending."""

    qrels: Qrels
    rows_per_query: np.ndarray
    gold_of: np.ndarray
    hit_query: np.ndarray
    hit_rank: np.ndarray
    hit_row: np.ndarray

    def judged(self, run_query_pos: np.ndarray, depth: int | None, pooled: bool
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(qpos, rank, grade, pool_qpos, pool_rank)`` of the evaluated queries (``run_query_pos``: per run query, its
        evaluated position or -1), as :func:`evalkit.evaluation.judge` defines them: rows judged with a grade >= 0,
        and (``pooled``) those judged with a negative grade; ``depth`` keeps the top of each ranking."""
        qpos = run_query_pos[self.hit_query]
        keep = qpos >= 0
        if depth is not None:
            keep &= self.hit_rank <= depth
        grade = self.qrels.grades[self.hit_row]
        judged = keep & (grade >= 0)
        empty = np.zeros(0, dtype=np.int64)
        pool = keep & (grade < 0) if pooled else None
        return (qpos[judged], self.hit_rank[judged], grade[judged],
                qpos[pool] if pooled else empty, self.hit_rank[pool] if pooled else empty)

    def retrieved(self, depth: int | None) -> np.ndarray:
        """Rows retrieved per run query, at most ``depth``."""
        return self.rows_per_query if depth is None else np.minimum(self.rows_per_query, depth)


class DeferredRun(Run):
    """A :class:`~evalkit.data.Run` read against one gold (:func:`read_judged`): its rows are read by ``reread`` (the
    general reader) when first asked for; scored against that gold, it is never read again."""

    def __getattr__(self, name: str):  # only for attributes not set: the deferred fields before their first use
        if name not in DEFERRED:
            raise AttributeError(name)
        full = self.__dict__["_reread"]()
        if full.query_ids.tolist() != self.query_ids.tolist():  # the two readers disagree: a bug, never a result
            raise RuntimeError(f"{self.name}: the run read again has other queries than its judged reading")
        for field in DEFERRED:
            object.__setattr__(self, field, getattr(full, field))
        return getattr(full, name)

    def named(self, name: str, source: Source | None) -> "DeferredRun":
        """The same run under ``name`` and ``source``, its rows still unread (``dataclasses.replace`` reads them)."""
        run = object.__new__(DeferredRun)
        for key, value in {**self.__dict__, "name": name, "source": source}.items():
            object.__setattr__(run, key, value)
        return run

    def with_name(self, name: str) -> "DeferredRun":
        return self.named(name, self.source)

    def judgments_for(self, qrels: Qrels) -> RunJudgments | None:
        found = self.__dict__.get("_judgments")  # none on a copy made by dataclasses.replace (a Run like any other)
        return found if found is not None and found.qrels is qrels else None

    def duplicated_queries(self) -> np.ndarray:
        if "_judgments" in self.__dict__:
            return np.zeros(0, dtype=np.int64)  # the judged reading declines a run that lists a document twice
        return super().duplicated_queries()


def read_judged(data: bytes, qrels: Qrels, reread: Callable[[], Run], *, warnings: Callable[[int, int], tuple[str, ...]],
                tag: Callable[[], str | None]) -> DeferredRun | None:
    """The TREC run ``data`` read against ``qrels`` (name and source: :meth:`DeferredRun.named`); ``None`` where the
    general reader must read it (or without the compiled kernel). ``reread`` reads it the general way (its rows are
    taken from there); ``warnings(n_extra, first_extra)`` and ``tag()`` give what that reader's run carries."""
    from evalkit import kernels

    # declined on a NUL byte too (judge_run.c): numpy's str arrays drop trailing NULs, the general reader decides
    found = kernels.judge_run(data, qrels.query_ids.tolist(), qrels.qidx, qrels.didx, qrels.doc_ids.tolist())
    if found is None:
        return None
    n_extra, first_extra, query_ids, rows_per_query, gold_of, hit_query, hit_rank, hit_row = found
    run = object.__new__(DeferredRun)
    fields = dict(query_ids=object_array(query_ids), labels=None,
                  declared_ranks=None, name="run", source=None, warnings=warnings(n_extra, first_extra), tag=tag(),
                  as_written=None, _reread=reread,
                  _judgments=RunJudgments(qrels, rows_per_query, gold_of, hit_query, hit_rank, hit_row))
    for key, value in fields.items():
        object.__setattr__(run, key, value)
    return run
