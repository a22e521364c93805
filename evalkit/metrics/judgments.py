"""Incomplete judgments: every metric with unjudged documents as non-relevant and as relevant.

Pooled tasks judge only what the pool held (ClimateCheck: 10 abstracts per
claim), so a new run is partly scored on documents nobody judged. evalkit's
numbers count them as non-relevant (trec_eval's rule; the value printed
everywhere). :func:`unjudged_as_relevant` gives the other end: the same run
scored against qrels in which every retrieved, unjudged document of an
evaluated query is relevant (grade = the relevance level, or the highest
``rel=`` a metric asks for, at least 0). The gap between the two is how much
the judgments leave open.

For metrics that only look at the ranking (P@k, Success@k, MRR, Judged@k)
the second value is an upper bound. For metrics divided by R (Recall, MAP,
R-Prec, nDCG, Bpref) it is the value under that assumption: R grows with the
newly relevant documents, so it is usually, not always, the larger value
(one relevant document at rank 1 and an unjudged one at rank 10 give AP 1.0
and 0.6). Only the evaluated queries' retrieved documents (within
``--depth``, first occurrences) are added; judgments with a negative grade
(unjudged in trec_eval) are dropped, so they cannot shadow the added rows.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from evalkit.data import Qrels, Run
from evalkit.data.ids import member_of, positions_in
from evalkit.metrics.evaluation import Evaluation, evaluate


@dataclass(frozen=True, eq=False)
class Bounds:
    """One run's evaluation with unjudged documents as non-relevant (``lower``, today's) and as relevant (``upper``)."""

    lower: Evaluation
    upper: Evaluation
    added: int  # unjudged (query, document) pairs counted as relevant in ``upper``

    def means(self) -> dict[str, tuple[float, float]]:
        """``{metric: (as non-relevant, as relevant)}`` for every metric of the evaluation."""
        return {m.label: (self.lower.mean(m), self.upper.mean(m)) for m in self.lower.metrics}


def with_metric(evaluation: Evaluation, metric) -> Evaluation:
    """``evaluation`` plus one more metric (e.g. Judged@k) computed on its judged ranking."""
    if metric.label in evaluation.per_query or evaluation.judged is None:
        return evaluation
    per_query = {**evaluation.per_query, metric.label: metric.compute(evaluation.judged)}
    return dataclasses.replace(evaluation, metrics=[*evaluation.metrics, metric], per_query=per_query)


def relevant_grade(evaluation: Evaluation) -> float:
    """The grade an unjudged document gets: relevant for the evaluation and for every metric's own ``rel=``."""
    level = evaluation.judged.relevance_level if evaluation.judged is not None else 1.0
    levels = [level] + [m.rel for m in evaluation.metrics if m.rel is not None]
    return float(max(max(levels), 0.0))


def unjudged_as_relevant(run: Run, qrels: Qrels, evaluation: Evaluation) -> tuple[Qrels, int]:
    """``qrels`` plus every retrieved, unjudged document of ``evaluation``'s queries as relevant; and how many were added."""
    ranked = run.ranked()
    keep = ranked.first.copy()
    if evaluation.depth is not None:
        keep &= ranked.rank <= evaluation.depth
    evaluated = np.zeros(len(qrels.query_ids), dtype=bool)
    evaluated[positions_in(np.asarray(evaluation.query_ids, dtype=object), qrels.query_ids)] = True
    run_to_gold = positions_in(run.query_ids, qrels.query_ids)
    rq = run_to_gold[ranked.qidx[keep]]
    rows = rq >= 0
    rows[rows] = evaluated[rq[rows]]
    rq = rq[rows]
    doc_code = positions_in(run.doc_ids, qrels.doc_ids)
    new_docs = doc_code < 0
    doc_code[new_docs] = len(qrels.doc_ids) + np.arange(int(new_docs.sum()))
    doc_ids = np.concatenate([qrels.doc_ids, run.doc_ids[new_docs]]) if new_docs.any() else qrels.doc_ids
    rd = doc_code[ranked.didx[keep][rows]]

    judged = qrels.grades >= 0  # negative grades are unjudged: dropped, so they cannot shadow an added row
    n_docs = max(len(doc_ids), 1)
    judged_keys = np.sort(qrels.qidx[judged].astype(np.int64) * n_docs + qrels.didx[judged])
    keys = rq.astype(np.int64) * n_docs + rd  # unique: first occurrences of (query, document) only
    if len(judged_keys):
        at = np.minimum(np.searchsorted(judged_keys, keys), len(judged_keys) - 1)
        keys = keys[judged_keys[at] != keys]
    add_q, add_d = keys // n_docs, keys % n_docs
    grade = relevant_grade(evaluation)
    labels = None
    if qrels.labels is not None:
        labels = np.concatenate([qrels.labels[judged], np.full(len(add_q), "unjudged (as relevant)", dtype=object)])
    augmented = Qrels(
        query_ids=qrels.query_ids,
        doc_ids=doc_ids,
        qidx=np.concatenate([qrels.qidx[judged], add_q]),
        didx=np.concatenate([qrels.didx[judged], add_d]),
        grades=np.concatenate([qrels.grades[judged], np.full(len(add_q), grade)]),
        labels=labels,
        texts=qrels.texts,
        name=f"{qrels.name} + unjudged as relevant",
    )
    return augmented, int(len(add_q))


def bounds(run: Run, qrels: Qrels, evaluation: Evaluation) -> Bounds:
    """Score ``run`` again with its unjudged documents relevant, under ``evaluation``'s queries, policy and depth."""
    augmented, added = unjudged_as_relevant(run, qrels, evaluation)
    keep = None
    if evaluation.excluded:
        keep = ~member_of(qrels.query_ids, evaluation.excluded)
    level = evaluation.judged.relevance_level if evaluation.judged is not None else 1.0
    upper = evaluate(
        run, augmented, evaluation.metrics, missing=evaluation.missing, relevance_level=level, allow_partial=True,
        keep_gold=keep, depth=evaluation.depth,
    )
    return Bounds(evaluation, upper, added)
