"""Rank-biased overlap: the published example, eq. 32 written out by hand, properties, the vectorised path."""
from __future__ import annotations

import random

import numpy as np
import pytest

from evalkit.errors import UsageError
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
