"""Rank-biased overlap: the published example, eq. 32 written out by hand, properties, the vectorised path."""
from __future__ import annotations

import random

import numpy as np
import pytest

from evalkit.core.errors import UsageError
from evalkit.stats.rank_correlation import rbo, rbo_many


def rbo_by_hand(s: list, t: list, p: float) -> float:
    """Webber et al. 2010, eq. 32, term by term with Python sets (no shared code with evalkit)."""
    if len(s) > len(t):
        s, t = t, s
    k_s, k_l = len(s), len(t)
    if k_l == 0:
        return float("nan")
    if k_s == 0:
        return 0.0

    def overlap(d: int) -> int:
        return len(set(s[: min(d, k_s)]) & set(t[:d]))

    x_s, x_l = overlap(k_s), overlap(k_l)
    total = sum(overlap(d) / d * p**d for d in range(1, k_l + 1))
    total += sum(x_s * (d - k_s) / (k_s * d) * p**d for d in range(k_s + 1, k_l + 1))
    return (1 - p) / p * total + ((x_l - x_s) / k_l + x_s / k_s) * p**k_l


def test_published_example():
    # the value quoted for RBO_ext(p=0.9) by the implementations after Webber et al. (e.g. rankmeasures' README)
    assert rbo([1, 2, 3, 4, 5], [2, 3, 4, 1, 5], 0.9) == pytest.approx(0.828, abs=5e-4)


def test_properties():
    assert rbo("abcde", "abcde") == pytest.approx(1.0)
    assert rbo("abc", "xyz") == 0.0
    assert rbo("abcdefg", "abc") == pytest.approx(1.0)  # a prefix extrapolates to full agreement
    assert np.isnan(rbo([], [])) and rbo(["a"], []) == 0.0
    assert rbo("abcd", "badc", 0.8) == pytest.approx(rbo("badc", "abcd", 0.8))
    assert rbo("abcdef", "abcfed") > rbo("abcdef", "fedabc")  # top-weighted: agreement at the top matters more
    assert rbo("aab", "ab") == pytest.approx(1.0)  # a repeat counts once, at its first position
    with pytest.raises(UsageError):
        rbo("ab", "ab", 1.0)


@pytest.mark.parametrize("p", [0.5, 0.9, 0.98])
def test_equals_eq32_by_hand_on_random_uneven_lists(p):
    rng = random.Random(7)
    for _ in range(300):
        pool = [f"d{i}" for i in range(rng.randint(1, 30))]
        s = rng.sample(pool, rng.randint(0, len(pool)))
        t = rng.sample(pool, rng.randint(0, len(pool)))
        expected = rbo_by_hand(s, t, p)
        if np.isnan(expected):
            assert np.isnan(rbo(s, t, p))
        else:
            assert rbo(s, t, p) == pytest.approx(expected, abs=1e-12)


def test_vectorised_many_queries_equal_one_by_one():
    rng = random.Random(3)
    lists_a, lists_b = [], []
    for _ in range(500):
        pool = list(range(rng.randint(1, 150)))
        lists_a.append(rng.sample(pool, rng.randint(0, min(len(pool), 100))))
        lists_b.append(rng.sample(pool, rng.randint(0, min(len(pool), 100))))

    def columns(lists):
        q = np.array([i for i, docs in enumerate(lists) for _ in docs], dtype=np.int64)
        d = np.array([doc for docs in lists for doc in docs], dtype=np.int64)
        return q, d

    got = rbo_many(*columns(lists_a), *columns(lists_b), len(lists_a), 0.9)
    expected = np.array([rbo(a, b, 0.9) for a, b in zip(lists_a, lists_b)])
    assert np.allclose(got, expected, equal_nan=True, atol=1e-12)


# ----------------------------------------------------------------- Kendall's tau and tau_AP (system rankings)
def tau_ap_by_hand(truth: list[float], estimate: list[float]) -> float:
    """Yilmaz, Aslam and Robertson (2008), eq. 3, term by term: walk the estimated ranking from the top; C(i) counts the
    items above the i-th that the true ranking also puts above it (no ties)."""
    order = sorted(range(len(estimate)), key=lambda i: -estimate[i])
    total = 0.0
    for i in range(1, len(order)):
        item = order[i]
        correct = sum(1 for above in order[:i] if truth[above] > truth[item])
        total += correct / i
    return 2 / (len(order) - 1) * total - 1


def tau_ap_b_reference(x: list[float], y: list[float]) -> float:
    """Urbano and Marrero (2017) tau_AP,b as their R package ircor writes it (tauAP_b.ties: R's rank() with ties.method
    'average' for x, 'first' and 'min' for y; sorting decreasing), transcribed with Python loops."""
    def one_way(x, y):
        n = len(x)
        neg_x, neg_y = [-v for v in x], [-v for v in y]  # decreasing
        rx = [sum(1 for w in neg_x if w < v) + (sum(1 for w in neg_x if w == v) + 1) / 2 for v in neg_x]
        ry = [sum(1 for w in neg_y if w < v) + sum(1 for j in range(i + 1) if neg_y[j] == v) for i, v in enumerate(neg_y)]
        p = [sum(1 for w in neg_y if w < v) + 1 for v in neg_y]
        c_all, not_top = 0.0, 0
        for i in range(n):
            if p[i] != 1:
                not_top += 1
                c_above = sum(1 for j in range(n) if p[j] < p[i] and np.sign(rx[i] - rx[j]) == np.sign(ry[i] - ry[j]))
                c_all += c_above / (p[i] - 1)
        return 2 / not_top * c_all - 1

    return (one_way(x, y) + one_way(y, x)) / 2


def test_kendall_tau_equals_scipy():
    from scipy.stats import kendalltau

    from evalkit.stats.rank_correlation import kendall_tau

    rng = np.random.default_rng(1)
    for _ in range(300):
        n = int(rng.integers(2, 25))
        x, y = rng.integers(0, 6, n).astype(float), rng.integers(0, 6, n).astype(float)
        theirs = kendalltau(x, y).statistic
        ours = kendall_tau(x, y)
        assert (np.isnan(ours) and np.isnan(theirs)) or ours == pytest.approx(theirs, abs=1e-12), (x, y)


def test_tau_ap_by_hand_and_against_references():
    from evalkit.stats.rank_correlation import tau_ap, tau_ap_b

    truth = [4.0, 3.0, 2.0, 1.0]
    assert tau_ap(truth, truth) == 1.0 and tau_ap(truth, truth[::-1]) == -1.0
    assert tau_ap(truth, [3.0, 4.0, 2.0, 1.0]) == pytest.approx(1 / 3)  # a swap at the top costs more ...
    assert tau_ap(truth, [4.0, 3.0, 1.0, 2.0]) == pytest.approx(7 / 9)  # ... than one at the bottom (Kendall: 2/3 both)
    rng = np.random.default_rng(2)
    for _ in range(200):
        n = int(rng.integers(2, 20))
        x, y = rng.permutation(n).astype(float), rng.permutation(n).astype(float)
        assert tau_ap(x, y) == pytest.approx(tau_ap_by_hand(list(x), list(y)), abs=1e-12)
        assert tau_ap_b(x, y) == pytest.approx(tau_ap_b_reference(list(x), list(y)), abs=1e-12)
        assert tau_ap_b(x, y) == pytest.approx((tau_ap(x, y) + tau_ap(y, x)) / 2, abs=1e-12)  # no ties: symmetric tau_AP
        ties_x, ties_y = rng.integers(0, 4, n).astype(float), rng.integers(0, 4, n).astype(float)
        if len(set(ties_x)) > 1 and len(set(ties_y)) > 1:
            assert tau_ap_b(ties_x, ties_y) == pytest.approx(tau_ap_b_reference(list(ties_x), list(ties_y)), abs=1e-12)
    with pytest.raises(UsageError, match="tied scores"):
        tau_ap([1.0, 1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(UsageError, match="finite"):
        tau_ap_b([1.0, float("nan")], [1.0, 2.0])
    assert np.isnan(tau_ap_b([1.0, 1.0], [1.0, 1.0]))  # every item tied at the top: undefined
