"""Several judgment groups for one query set (trec_eval ``-R qrels_jg``): each query's value averaged over its groups.

A qrels_jg file is a TREC qrels file whose second column names the
judgment group (a user, an assessor) instead of being ignored: ``qid group
docid grade``. Users disagree, so each group's judgments are a qrels of
their own; every metric is computed against each group, and a query's value
is the mean over the groups that judged it (added in group order, divided by
their number when more than one), as trec_eval's ``map_avgjg``, ``P_avgjg``
and ``Rprec_mult_avgjg`` compute it. evalkit averages every metric this way.
"""
from __future__ import annotations

import os
from dataclasses import replace

import numpy as np

from evalkit.data import Qrels, Source
from evalkit.io.formats.tables import data_line_number, read_whitespace
from evalkit.io.formats.trec_qrels import check_unique_pairs
from evalkit.native.kernels import TableShape
from evalkit.io.textio import load

AVGJG_NAMES = {"map": "map_avgjg", "P_": "P_avgjg_", "Rprec_mult_": "Rprec_mult_avgjg_"}  # trec_eval's names under -R qrels_jg


def read_judgment_groups(path: str | os.PathLike) -> dict[str, Qrels]:
    """``{group: qrels}`` from a ``qid group docid grade`` file, groups in byte order; a pair judged twice in one group is an error."""
    loaded = load(path)
    table = read_whitespace(loaded, TableShape(4, False, (0, 1, 2), 3), what="grade")  # qid group docid grade
    [(qidx, query_ids), (gidx, group_ids), (didx, doc_ids)] = table.columns
    key = gidx.astype(np.int64) * max(len(query_ids), 1) + qidx
    check_unique_pairs(key, didx, len(doc_ids), loaded.label, lambda row: data_line_number(loaded, row))
    source = Source(path=str(path), format="trec-qrels-jg", sha256=loaded.digest, member=loaded.member)
    groups = {}
    for code in sorted(range(len(group_ids)), key=lambda c: str(group_ids[c]).encode("utf-8")):
        rows = gidx == code
        groups[str(group_ids[code])] = Qrels(query_ids=query_ids, doc_ids=doc_ids, qidx=qidx[rows], didx=didx[rows], grades=table.values[rows],
                                            name=str(path), source=source)
    return groups


def _compact(qrels: Qrels) -> Qrels:
    """``qrels`` with only the queries it judges (a group's share of the file's queries)."""
    used = np.unique(qrels.qidx)
    remap = np.full(len(qrels.query_ids), -1, dtype=np.int64)
    remap[used] = np.arange(len(used))
    return replace(qrels, query_ids=qrels.query_ids[used], qidx=remap[qrels.qidx])


def evaluate_groups(run, groups: dict[str, Qrels], metrics, **options):
    """Score ``run`` against every group; each query's value is the mean over the groups that judged it.

    The query set, the missing-query policy, the partial-run check and the
    warnings are those of all groups' judgments together.
    """
    from evalkit.metrics.evaluation import evaluate

    whole = evaluate(run, union_qrels(groups), metrics, **options)
    per_group = [evaluate(run, _compact(qrels), metrics, **{**options, "allow_partial": True}) for qrels in groups.values()]
    averaged = average_over_groups(per_group, whole.query_ids)
    per_query = {label: averaged.get(label, values) for label, values in whole.per_query.items()}
    relevant = sum(int(np.count_nonzero(qrels.grades > 0)) for qrels in groups.values())
    return replace(whole, per_query=per_query, judgment_groups=len(groups), qrels_relevant=relevant)


def union_qrels(groups: dict[str, Qrels]) -> Qrels:
    """Every group's judgments of a query together (its queries; the first group's grade for a pair two groups judged)."""
    first = next(iter(groups.values()))
    seen: dict[tuple[int, int], float] = {}
    for qrels in groups.values():
        for q, d, g in zip(qrels.qidx.tolist(), qrels.didx.tolist(), qrels.grades.tolist()):
            seen.setdefault((q, d), g)
    qidx = np.array([q for q, _ in seen], dtype=np.int64)
    didx = np.array([d for _, d in seen], dtype=np.int64)
    return _compact(replace(first, qidx=qidx, didx=didx, grades=np.array(list(seen.values()), dtype=np.float64)))


def average_over_groups(evaluations: list, query_ids: np.ndarray) -> dict[str, np.ndarray]:
    """Per metric label: each query's values summed over the evaluations that have it, in order, divided by their count if > 1."""
    position = {q: i for i, q in enumerate(query_ids.tolist())}
    totals: dict[str, np.ndarray] = {}
    counts = np.zeros(len(query_ids))
    for evaluation in evaluations:
        at = np.array([position[q] for q in evaluation.query_ids.tolist()], dtype=np.int64)
        counts[at] += 1
        for label, values in evaluation.per_query.items():
            if values.dtype == object:
                continue
            total = totals.setdefault(label, np.zeros(len(query_ids)))
            total[at] = total[at] + values
    return {label: np.where(counts > 1, total / np.maximum(counts, 1), total) for label, total in totals.items()}


def avgjg_name(trec_name: str | None) -> str | None:
    """``map`` -> ``map_avgjg``, ``P_5`` -> ``P_avgjg_5``: trec_eval's name for a measure averaged over judgment groups."""
    if trec_name is None:
        return None
    if trec_name == "map":
        return AVGJG_NAMES["map"]
    for prefix in ("Rprec_mult_", "P_"):
        if trec_name.startswith(prefix) and trec_name[len(prefix):][:1].isdigit():
            return AVGJG_NAMES[prefix] + trec_name[len(prefix):]
    return trec_name
