"""The plumbing every reranker and labeler shares (the base classes in :mod:`evalkit.pipelines.stages` use it).

* :func:`check_fields` -- the chosen text fields exist in the corpus;
* :func:`rerank_candidates` -- each query's top ``depth`` of a run, by the ranking rule;
* :func:`doc_text_lookup` -- ``doc id -> text`` of the chosen fields;
* :class:`Candidates` -- all of that together, what a listwise hook receives;
* :func:`merge_reranked` -- the re-scored top above the rest of the run;
* :func:`labelled_run` -- the top ``depth`` rows with one label each.

Plugins need none of it (the base classes call it); it is public for systems
that compose others (the reranker ensemble) or override ``rerank`` itself.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from evalkit.data.corpus import Corpus, Queries
from evalkit.data import Run
from evalkit.core.errors import UsageError, listed, unquoted


def check_fields(corpus: Corpus, fields: Sequence[str]) -> None:
    """Refuse (one line) when none of ``fields`` is in the corpus."""
    if not any(f in corpus.fields for f in fields):
        raise UsageError(f"none of the fields {list(fields)} is in the corpus (it has: {listed(corpus.field_names, 10, unquoted)})")


def rerank_candidates(queries: Queries, run: Run, depth: int, corpus: Corpus, who: str) -> dict[str, list[str]]:
    """The top ``depth`` documents of each query of ``run`` (ranking rule order), for queries in ``queries``.

    A document the corpus lacks means the run belongs to another corpus: a
    :class:`UsageError` naming ``who`` (the system), not an empty text.
    """
    if depth <= 0:
        raise UsageError(f"{who}: depth must be positive (got {depth})")
    lists = run.to_lists(depth)
    candidates = {q: lists.get(q, []) for q in queries.ids}
    known = corpus.position()
    missing = next((d for docs in candidates.values() for d in docs if d not in known), None)
    if missing is not None:
        raise UsageError(f"{who}: document {missing!r} of run {run.name} is not in the corpus (wrong corpus?)")
    return candidates


def doc_text_lookup(corpus: Corpus, fields: Sequence[str]) -> Callable[[str], str]:
    """``doc id -> text of the chosen fields`` (KeyError-free: unknown ids give '')."""
    position = corpus.position()

    def text(doc: str) -> str:
        index = position.get(doc)
        return "" if index is None else corpus.text(index, fields)

    return text


@dataclass(frozen=True)
class Candidates:
    """What a reranker or labeler works on: each query's top ``depth`` of ``run`` with the texts.

    ``docs[q]`` lists query ``q``'s candidates best first (the ranking rule:
    score descending, ties by doc id descending); ``queries[q]`` is its text.
    """

    queries: Mapping[str, str]
    docs: Mapping[str, list[str]]
    text: Callable[[str], str]
    run: Run
    depth: int

    @classmethod
    def of(cls, corpus: Corpus, queries: Queries, run: Run, depth: int, fields: Sequence[str], who: str) -> "Candidates":
        """Checked candidates: the fields exist, ``depth`` is positive, every document is in the corpus."""
        check_fields(corpus, fields)
        docs = rerank_candidates(queries, run, depth, corpus, who)
        return cls(queries.as_dict(), docs, doc_text_lookup(corpus, fields), run, depth)

    def pairs(self) -> list[tuple[str, str]]:
        """``(query id, doc id)`` of every candidate, query by query, best first."""
        return [(q, d) for q, docs in self.docs.items() for d in docs]


def merge_reranked(run: Run, reranked: Mapping[str, Mapping[str, float]], depth: int) -> Run:
    """New scored run: re-scored top ``depth`` first, the rest of ``run`` below it in its old order.

    Queries of ``run`` missing from ``reranked`` are left out. The rest gets
    scores strictly below the re-scored top (one apart, or one float step
    apart where the scores are too large for that), so ties cannot lift it.
    """
    lists = run.to_lists()
    scores: dict[str, dict[str, float]] = {}
    for query, ranked in lists.items():
        top = reranked.get(query)
        if top is None:
            continue
        rest = [d for d in ranked[depth:] if d not in top]
        floor = min(top.values(), default=0.0)
        ordered = dict(sorted(top.items(), key=lambda kv: -kv[1]))
        previous = floor
        for offset, doc in enumerate(rest, start=1):
            value = floor - offset
            if value >= previous:  # |floor| beyond 2**53: subtracting 1 changes nothing
                value = math.nextafter(previous, -math.inf)
            ordered[doc] = previous = value
        scores[query] = ordered
    return Run.from_scores(scores, name=run.name)


def labelled_run(run: Run, candidates: Mapping[str, Sequence[str]], labels: Sequence[str], name: str) -> Run:
    """The top-``depth`` rows of ``run`` (``candidates``, their scores kept) with one label each."""
    scores = run.to_scores()
    qids = [q for q, docs in candidates.items() for _ in docs]
    docs = [d for ranked in candidates.values() for d in ranked]
    values = [scores[q][d] for q, d in zip(qids, docs)]
    return Run.from_rows(qids, docs, values, labels=list(labels), name=name)
