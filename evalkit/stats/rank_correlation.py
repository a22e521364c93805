"""How alike two rankings are: rank-biased overlap of document rankings; Kendall's tau and tau_AP of system rankings.

Kendall's tau and tau_AP compare two orderings of one set of items (runs
ranked by their score under full and reduced judgments, as ``evalkit reuse``
does); RBO compares two runs' document rankings, which hold different items.

Kendall's tau is tau-b (Kendall 1945), ties in either ranking allowed, as
``scipy.stats.kendalltau`` computes it: with P concordant and Q discordant
pairs, T pairs tied in x only and U tied in y only,
``tau_b = (P - Q) / sqrt((P + Q + T) (P + Q + U))``.

tau_AP (Yilmaz, Aslam and Robertson 2008, "A new rank correlation coefficient
for information retrieval", SIGIR, https://doi.org/10.1145/1390334.1390435)
weighs swaps near the top more: with the items in the order of the ranking
under test (``estimate``) and C(i) the number of the i - 1 items above item i
that the reference (``truth``) also ranks above it,
``tau_AP = 2/(n-1) * sum_{i=2..n} C(i)/(i-1) - 1``; it is asymmetric and
needs rankings without ties. tau_AP,b (Urbano and Marrero 2017, "The
treatment of ties in AP correlation", ICTIR,
https://doi.org/10.1145/3121050.3121106) allows ties in both: for each item i
below the top tie group of y, C(i) counts the items strictly above i in both
rankings and is divided by p(i), the number of items strictly above i in y,
``tau_AP(x -> y) = 2/n' * sum_i C(i)/p(i) - 1`` over the n' such items, and
``tau_AP,b = (tau_AP(x -> y) + tau_AP(y -> x)) / 2``; without ties it is the
mean of tau_AP in both directions (Yilmaz et al.'s symmetric tau_AP). Larger
values rank higher throughout.

Rank-biased overlap (RBO): how alike two rankings are, weighted towards the top; no relevance judgments needed.

Used to pick contrasting queries between two runs, as diffir does with
TauAP: a low RBO means the runs put different documents at the top, whether
or not the judgments notice. RBO suits retrieval runs better than rank
correlations over one item set (Kendall's tau, TauAP) because two runs'
top-k lists usually hold different documents.

Definition (Webber, Moffat and Zobel 2010, "A similarity measure for
indefinite rankings", ACM TOIS 28(4):20, https://doi.org/10.1145/1852102.1852106):
with ``X_d = |S[:d] & L[:d]|`` the overlap of the two lists at depth d,
``A_d = X_d / d`` the agreement and ``p`` the persistence (the chance a
reader goes on to the next rank; p = 0.9 puts 86% of the weight on the top
10), the extrapolated RBO of lists of lengths s <= l (their eq. 32) is::

    RBO_ext = (1-p)/p * ( sum_{d=1..l} X_d/d * p^d  +  sum_{d=s+1..l} X_s (d-s) / (s d) * p^d )
              + ( (X_l - X_s)/l + X_s/s ) * p^l

where X_d for d > s counts the overlap of all of S with L[:d]. With s = l
this is eq. 30: ``(1-p)/p * sum_{d=1..k} A_d p^d + A_k p^k``. Identical lists
give 1, disjoint lists 0; the value is symmetric. Example from the
literature: ``rbo([1,2,3,4,5], [2,3,4,1,5], 0.9) = 0.828``.

evalkit's conventions: a document repeated in a list counts once, at its
first position (later positions close up); a query where both lists are
empty has no RBO (NaN), one where only one is empty has RBO 0.
"""
from __future__ import annotations

from typing import Hashable, Sequence

import numpy as np
from numpy.typing import ArrayLike

from evalkit.core.errors import UsageError

CELLS_PER_CHUNK = 4_000_000  # queries x depth cells held at once (32 MB of float64)


def check_persistence(p: float) -> float:
    p = float(p)
    if not 0 < p < 1:
        raise UsageError(f"RBO persistence p must lie strictly between 0 and 1 (got {p})")
    return p


def positions(qpos: np.ndarray) -> np.ndarray:
    """0-based position of each row within its (contiguous) query group."""
    n = len(qpos)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, qpos[1:] != qpos[:-1]])
    return np.arange(n, dtype=np.int64) - np.repeat(starts, np.diff(np.r_[starts, n]))


def rbo_many(a_q: np.ndarray, a_doc: np.ndarray, b_q: np.ndarray, b_doc: np.ndarray, n_queries: int, p: float = 0.9) -> np.ndarray:
    """RBO_ext per query of two runs given as rows sorted by (query, rank), without repeated (query, doc) pairs.

    ``a_q``/``b_q`` are query positions in ``range(n_queries)``, ``a_doc``/``b_doc``
    document codes in one shared code space. Vectorised: the overlap at every
    depth comes from one histogram of ``max(i, j)`` over the documents both
    lists hold (document at 0-based positions i and j counts from depth
    ``max(i, j) + 1`` on), cumulated along the depth.
    """
    p = check_persistence(p)
    a_q, b_q = np.asarray(a_q, dtype=np.int64), np.asarray(b_q, dtype=np.int64)
    len_a = np.bincount(a_q, minlength=n_queries)
    len_b = np.bincount(b_q, minlength=n_queries)
    short, long_ = np.minimum(len_a, len_b), np.maximum(len_a, len_b)
    width = int(long_.max(initial=0))
    out = np.full(n_queries, np.nan)
    out[(long_ > 0) & (short == 0)] = 0.0
    if width == 0:
        return out
    n_docs = int(max(np.max(a_doc, initial=0), np.max(b_doc, initial=0))) + 1
    key_a = a_q * n_docs + np.asarray(a_doc, dtype=np.int64)
    key_b = b_q * n_docs + np.asarray(b_doc, dtype=np.int64)
    _, in_a, in_b = np.intersect1d(key_a, key_b, assume_unique=True, return_indices=True)
    common_q = a_q[in_a]
    deepest = np.maximum(positions(a_q)[in_a], positions(b_q)[in_b])

    depth = np.arange(1, width + 1, dtype=np.float64)
    power = p ** depth
    weight = power / depth
    power_sum = np.r_[0.0, np.cumsum(power)]  # P[n] = sum_{d<=n} p^d
    weight_sum = np.r_[0.0, np.cumsum(weight)]  # W[n] = sum_{d<=n} p^d / d
    both = np.flatnonzero(short > 0)
    chunk = max(1, CELLS_PER_CHUNK // width)
    for start in range(0, len(both), chunk):
        queries = both[start: start + chunk]
        row_of = np.full(n_queries, -1, dtype=np.int64)
        row_of[queries] = np.arange(len(queries))
        pick = row_of[common_q] >= 0
        cells = row_of[common_q[pick]] * width + deepest[pick]
        counts = np.bincount(cells, minlength=len(queries) * width).reshape(len(queries), width).astype(np.float64)
        overlap = np.cumsum(counts, axis=1)  # overlap[r, d-1] = X_d
        s, l_ = short[queries], long_[queries]
        inside = depth[None, :] <= l_[:, None]
        head = np.where(inside, overlap * weight[None, :], 0.0).sum(axis=1)
        rows = np.arange(len(queries))
        x_s, x_l = overlap[rows, s - 1], overlap[rows, l_ - 1]
        tail = x_s * ((power_sum[l_] - power_sum[s]) / s - (weight_sum[l_] - weight_sum[s]))
        out[queries] = (1 - p) / p * (head + tail) + ((x_l - x_s) / l_ + x_s / s) * p ** l_
    return out


def first_occurrences(items: Sequence[Hashable]) -> list[Hashable]:
    """The list with later repeats removed."""
    return list(dict.fromkeys(items))


def rbo(a: Sequence[Hashable], b: Sequence[Hashable], p: float = 0.9) -> float:
    """Extrapolated rank-biased overlap of two rankings (best first); see the module docstring."""
    a, b = first_occurrences(a), first_occurrences(b)
    codes: dict[Hashable, int] = {}
    a_doc = np.array([codes.setdefault(x, len(codes)) for x in a], dtype=np.int64)
    b_doc = np.array([codes.setdefault(x, len(codes)) for x in b], dtype=np.int64)
    return float(rbo_many(np.zeros(len(a), dtype=np.int64), a_doc, np.zeros(len(b), dtype=np.int64), b_doc, 1, p)[0])


def rbo_head(a: Sequence[Hashable], b: Sequence[Hashable], p: float = 0.9, depth: int | None = None) -> float:
    """RBO summed to ``depth`` (default: the longer list), without extrapolation: ``(1-p) sum_{d=1..k} p^(d-1) A_d``.

    Webber et al.'s eq. 7 cut at depth k: the lower bound RBO_min's head; it
    grows towards RBO as k grows, and ``rbo`` (RBO_ext) is what it extrapolates to.
    """
    p = check_persistence(p)
    a, b = first_occurrences(a), first_occurrences(b)
    depth = max(len(a), len(b)) if depth is None else int(depth)
    seen_a: set = set()
    seen_b: set = set()
    overlap, total = 0, 0.0
    for d in range(1, depth + 1):
        x = a[d - 1] if d <= len(a) else None
        y = b[d - 1] if d <= len(b) else None
        if x is not None:
            overlap += x in seen_b or x == y
            seen_a.add(x)
        if y is not None and y != x:
            overlap += y in seen_a
            seen_b.add(y)
        elif y is not None:
            seen_b.add(y)
        total += p ** (d - 1) * overlap / d
    return (1 - p) * total


# ----------------------------------------------------------------- system rankings: Kendall's tau, tau_AP
def paired_values(x: ArrayLike, y: ArrayLike, mismatch: str, not_finite: str) -> tuple[np.ndarray, np.ndarray]:
    """``x`` and ``y`` as two finite float vectors of one length; else one line: ``mismatch`` (with the shapes) or
    ``not_finite``."""
    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape:
        raise UsageError(f"{mismatch} (got {a.shape} and {b.shape})")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise UsageError(not_finite)
    return a, b


def _paired_scores(x: ArrayLike, y: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    return paired_values(x, y, "rank correlation needs two score vectors of one length",
                         "rank correlation needs finite scores (a NaN score has no rank)")


def kendall_tau(x: ArrayLike, y: ArrayLike) -> float:
    """Kendall's tau-b of two score vectors over the same items (see the module docstring); NaN if either is constant."""
    a, b = _paired_scores(x, y)
    upper = np.triu_indices(len(a), k=1)
    sx = np.sign(a[:, None] - a[None, :])[upper]
    sy = np.sign(b[:, None] - b[None, :])[upper]
    product = sx * sy
    concordant, discordant = int(np.count_nonzero(product > 0)), int(np.count_nonzero(product < 0))
    only_x, only_y = int(np.count_nonzero((sx == 0) & (sy != 0))), int(np.count_nonzero((sy == 0) & (sx != 0)))
    denominator = np.sqrt(float(concordant + discordant + only_x) * float(concordant + discordant + only_y))
    return float((concordant - discordant) / denominator) if denominator > 0 else float("nan")


def _tau_ap_towards(x: np.ndarray, y: np.ndarray) -> float:
    """tau_AP with y the ranking traversed and x the reference, ties allowed (Urbano and Marrero's one direction)."""
    above_in_y = y[None, :] > y[:, None]  # [i, j]: j strictly above i in y
    above_in_x = x[None, :] > x[:, None]
    p = above_in_y.sum(axis=1)
    below_top = p > 0
    if not below_top.any():
        return float("nan")
    concordant = (above_in_y & above_in_x).sum(axis=1)
    return float(2.0 / int(below_top.sum()) * np.sum(concordant[below_top] / p[below_top]) - 1.0)


def tau_ap(truth: ArrayLike, estimate: ArrayLike) -> float:
    """Yilmaz et al.'s tau_AP of the ranking ``estimate`` against the reference ``truth`` (no ties; see the module docstring)."""
    a, b = _paired_scores(truth, estimate)
    for name, values in (("truth", a), ("estimate", b)):
        if len(np.unique(values)) != len(values):
            raise UsageError(f"tau_AP is undefined with tied scores (in {name}); use tau_ap_b")
    return _tau_ap_towards(a, b) if len(a) > 1 else float("nan")


def tau_ap_b(x: ArrayLike, y: ArrayLike) -> float:
    """Urbano and Marrero's tau_AP,b: tau_AP with ties in both rankings, symmetric (see the module docstring)."""
    a, b = _paired_scores(x, y)
    if len(a) < 2:
        return float("nan")
    return (_tau_ap_towards(a, b) + _tau_ap_towards(b, a)) / 2


def rbo_truncated(a: Sequence[Hashable], b: Sequence[Hashable], p: float = 0.95, depth: int = 1000) -> float:
    """Rank-biased overlap truncated at ``depth`` and normalised by its weights (Clarke et al.'s form, as repro_eval uses).

    ``RBO@D = sum_{d=1..D} p^(d-1) X_d / d  /  sum_{d=1..D} p^(d-1)``, ``X_d = |a[:d] & b[:d]|`` (a list shorter than
    d counts all of it). Symmetric; 1 for identical lists of at least ``D`` documents, 0 for disjoint ones. Reference:
    Clarke, Vtyurina and Smucker (2021), "Assessing top-k preferences", ACM TOIS 39(3), https://doi.org/10.1145/3451161.
    """
    p = check_persistence(p)
    if depth < 1:
        raise UsageError(f"RBO depth must be at least 1 (got {depth})")
    a, b = first_occurrences(a)[:depth], first_occurrences(b)[:depth]
    where = {doc: i for i, doc in enumerate(b)}
    deepest = [max(i, where[doc]) for i, doc in enumerate(a) if doc in where]
    overlap = np.cumsum(np.bincount(np.asarray(deepest, dtype=np.int64), minlength=depth)[:depth].astype(np.float64))
    weight = p ** np.arange(depth, dtype=np.float64)
    return float(np.sum(weight * overlap / np.arange(1, depth + 1)) / np.sum(weight))
