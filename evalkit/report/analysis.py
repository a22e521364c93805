"""Per-query breakdowns for reports: first relevant rank, query length, wins and losses."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from evalkit.metrics.evaluation import Evaluation
from evalkit.stats.paired import PairedValues

RANK_BUCKETS = [str(r) for r in range(1, 11)] + ["11+", "none"]


def first_relevant_ranks(evaluation: Evaluation) -> np.ndarray:
    """Per evaluated query (in ``evaluation.query_ids`` order): rank of the first relevant document, inf if none."""
    if evaluation.judged is None:  # pragma: no cover - evaluate() always keeps it
        raise ValueError("the evaluation carries no judged ranking")
    return evaluation.judged.first_relevant_rank()


def rank_distribution(evaluation: Evaluation) -> dict[str, int]:
    """Queries whose first relevant document is at rank 1..10, at 11 or later, or nowhere in the run."""
    ranks = first_relevant_ranks(evaluation)
    counts = {bucket: 0 for bucket in RANK_BUCKETS}
    for r in range(1, 11):
        counts[str(r)] = int(np.sum(ranks == r))
    counts["11+"] = int(np.sum((ranks >= 11) & np.isfinite(ranks)))
    counts["none"] = int(np.sum(~np.isfinite(ranks)))
    return counts


def token_count(text: str) -> int:
    """Whitespace-separated tokens of a query text."""
    return len(text.split())


@dataclass(frozen=True)
class LengthBucket:
    label: str
    low: int
    high: int
    query_ids: list[str]


def length_buckets(query_ids: Sequence[str], texts: Mapping[str, str], n_buckets: int = 4) -> list[LengthBucket]:
    """Split queries with text into ``n_buckets`` token-count ranges at the quantiles.

    Edges are the ``i / n_buckets`` quantiles of the token counts (rounded
    down), so buckets hold about equally many queries; equal edges merge.
    Queries without text are left out.
    """
    with_text = [q for q in query_ids if q in texts]
    if not with_text:
        return []
    lengths = np.array([token_count(texts[q]) for q in with_text])
    inner = np.floor(np.quantile(lengths, np.linspace(0, 1, n_buckets + 1)[1:-1])).astype(int)
    uppers = sorted(set(inner.tolist()) | {int(lengths.max())})
    buckets = []
    low = int(lengths.min())
    for high in uppers:
        if high < low:
            continue
        members = [q for q, n in zip(with_text, lengths.tolist()) if low <= n <= high]
        if members:
            label = f"{low}-{high} tokens" if high > low else f"{low} tokens"
            buckets.append(LengthBucket(label, low, high, members))
        low = high + 1
    return buckets


def bucket_means(values: PairedValues, buckets: Sequence[LengthBucket]) -> np.ndarray:
    """Mean metric per (run, bucket); NaN values are left out of each mean."""
    position = {q: i for i, q in enumerate(values.query_ids)}
    out = np.full((len(values.names), len(buckets)), np.nan)
    for j, bucket in enumerate(buckets):
        columns = values.matrix[:, [position[q] for q in bucket.query_ids if q in position]]
        for i in range(len(values.names)):
            defined = columns[i][~np.isnan(columns[i])]
            out[i, j] = defined.mean() if len(defined) else np.nan
    return out


@dataclass(frozen=True)
class QueryDelta:
    query_id: str
    value_a: float
    value_b: float

    @property
    def difference(self) -> float:
        return self.value_b - self.value_a


def largest_differences(values: PairedValues, a: str, b: str, top: int = 10) -> tuple[list[QueryDelta], list[QueryDelta]]:
    """The ``top`` queries where ``b`` beats ``a`` most (wins) and where ``a`` beats ``b`` most (losses).

    Ties in the difference keep the gold order (the sort is stable).
    """
    va, vb, queries = values.pair(values.index(a), values.index(b))
    deltas = [QueryDelta(q, float(x), float(y)) for q, x, y in zip(queries, va, vb)]
    wins = sorted((d for d in deltas if d.difference > 0), key=lambda d: -d.difference)[:top]
    losses = sorted((d for d in deltas if d.difference < 0), key=lambda d: d.difference)[:top]
    return wins, losses
