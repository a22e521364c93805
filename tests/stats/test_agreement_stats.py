"""Agreement and rank-correlation statistics against their references: Cohen's kappa (weighted too) = scikit-learn,
Krippendorff's alpha = the krippendorff package, Kendall's tau = scipy, tau_AP and RBO against their definitions
(hand-computed cases, brute force over small rankings, the extrapolated RBO written out from Webber et al.'s sums)."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from evalkit.core.errors import UsageError
from evalkit.stats.agreement import cohen_kappa, confusion_matrix, krippendorff_alpha, krippendorff_alpha_pair
from evalkit.stats.rank_correlation import kendall_tau, rbo, rbo_head, tau_ap, tau_ap_b

RNG = np.random.default_rng(20260101)


def _gradings(n: int, correlated: bool):
    a = RNG.integers(0, 4, n)
    b = np.clip(a + RNG.integers(-1, 2, n), 0, 3) if correlated else RNG.integers(0, 4, n)
    return a, b


@pytest.mark.parametrize("trial", range(60))
def test_kappa_equals_scikit_learn(trial):
    from sklearn.metrics import cohen_kappa_score

    a, b = _gradings(int(RNG.integers(5, 80)), trial % 2 == 0)
    for weights in (None, "linear", "quadratic"):
        expected = cohen_kappa_score(a, b, weights=weights)
        got = cohen_kappa(a, b, weights or "none")
        assert (math.isnan(expected) and math.isnan(got)) or got == pytest.approx(expected, abs=1e-12)
        on_scale = cohen_kappa(a, b, weights or "none", scale=[0, 1, 2, 3])
        assert on_scale == pytest.approx(cohen_kappa_score(a, b, weights=weights, labels=[0, 1, 2, 3]), abs=1e-12, nan_ok=True)


def test_binary_kappa_and_confusion_by_hand():
    # 10 items: both relevant 3, both not 4, A only 2, B only 1 -> p_o = 0.7, p_e = 0.5*0.4 + 0.5*0.6 = 0.5, kappa = 0.4
    a = [1, 1, 1, 0, 0, 0, 0, 1, 1, 0]
    b = [1, 1, 1, 0, 0, 0, 0, 0, 0, 1]
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    cats, matrix = confusion_matrix(a, b)
    assert cats.tolist() == [0.0, 1.0] and matrix.tolist() == [[4, 1], [2, 3]]


def test_kappa_degenerate_and_bad_input():
    assert math.isnan(cohen_kappa([1, 1, 1], [1, 1, 1]))  # chance agreement total
    with pytest.raises(UsageError):
        cohen_kappa([1, 2], [1])
    with pytest.raises(UsageError):
        cohen_kappa([0, 1], [0, 1], "cubic")
    with pytest.raises(UsageError, match="not on the scale"):
        cohen_kappa([0, 5], [0, 1], scale=[0, 1, 2, 3])


@pytest.mark.parametrize("trial", range(40))
@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_equals_krippendorff_package(trial, level):
    krippendorff = pytest.importorskip("krippendorff")
    a, b = _gradings(int(RNG.integers(5, 60)), trial % 2 == 0)
    if len(np.unique(np.r_[a, b])) < 2:
        return
    expected = krippendorff.alpha(reliability_data=np.stack([a, b]).astype(float), level_of_measurement=level)
    assert krippendorff_alpha_pair(a, b, level) == pytest.approx(expected, abs=1e-10)


@pytest.mark.parametrize("trial", range(20))
def test_alpha_with_missing_values_and_three_coders(trial):
    krippendorff = pytest.importorskip("krippendorff")
    data = RNG.integers(0, 4, (3, 40)).astype(float)
    data[RNG.random(data.shape) < 0.3] = np.nan
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")
    assert krippendorff_alpha(data, "ordinal") == pytest.approx(expected, abs=1e-10)


def test_alpha_perfect_and_constant():
    assert krippendorff_alpha_pair([0, 1, 2, 3], [0, 1, 2, 3]) == pytest.approx(1.0)
    assert math.isnan(krippendorff_alpha_pair([2, 2, 2], [2, 2, 2]))


@pytest.mark.parametrize("trial", range(30))
def test_kendall_tau_equals_scipy(trial):
    from scipy.stats import kendalltau

    n = int(RNG.integers(3, 25))
    x = RNG.integers(0, 6, n).astype(float)  # ties in both
    y = x + RNG.integers(-3, 4, n)
    expected = kendalltau(x, y).statistic
    got = kendall_tau(x, y)
    assert (math.isnan(expected) and math.isnan(got)) or got == pytest.approx(expected, abs=1e-12)


# ----------------------------------------------------------------- tau_AP: Yilmaz, Aslam and Robertson 2008
def scores_of(order, items):
    """Scores that rank ``items`` in ``order`` (best first)."""
    return [len(order) - order.index(item) for item in items]


def tau_ap_by_definition(truth_order, estimate_order):
    """tau_AP = 2/(n-1) sum_{i=2..n} C(i)/(i-1) - 1, C(i): items above position i in the estimate also above it in the truth."""
    n = len(truth_order)
    place = {item: k for k, item in enumerate(truth_order)}
    total = 0.0
    for i in range(1, n):
        item = estimate_order[i]
        total += sum(place[above] < place[item] for above in estimate_order[:i]) / i
    return 2.0 / (n - 1) * total - 1.0


def test_tau_ap_hand_computed():
    items = ["a", "b", "c", "d"]
    truth = ["a", "b", "c", "d"]
    # swap at the top: C = 0/1, 2/2, 3/3 -> 2/3 * 2 - 1 = 1/3 ; swap at the bottom: 1/1, 2/2, 2/3 -> 2/3 * 8/3 - 1 = 7/9
    top, bottom = ["b", "a", "c", "d"], ["a", "b", "d", "c"]
    assert tau_ap(scores_of(truth, items), scores_of(top, items)) == pytest.approx(1 / 3)
    assert tau_ap(scores_of(truth, items), scores_of(bottom, items)) == pytest.approx(7 / 9)
    # Kendall's tau cannot tell the two apart: one discordant pair of six each
    assert kendall_tau(scores_of(truth, items), scores_of(top, items)) == pytest.approx(2 / 3)
    assert kendall_tau(scores_of(truth, items), scores_of(bottom, items)) == pytest.approx(2 / 3)
    assert tau_ap(scores_of(truth, items), scores_of(truth[::-1], items)) == pytest.approx(-1.0)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_tau_ap_brute_force_every_permutation(n):
    items = list(range(n))
    truth = items[:]
    values = []
    for estimate in itertools.permutations(items):
        got = tau_ap(scores_of(truth, items), scores_of(list(estimate), items))
        assert got == pytest.approx(tau_ap_by_definition(truth, list(estimate)), abs=1e-12)
        values.append(got)
    assert np.mean(values) == pytest.approx(0.0, abs=1e-12)  # its expectation under random rankings (Yilmaz et al., sec. 3)
    # without ties tau_AP,b is the mean of tau_AP in both directions
    estimate = items[::-1][:1] + items[:-1]
    x, y = scores_of(truth, items), scores_of(estimate, items)
    assert tau_ap_b(x, y) == pytest.approx((tau_ap(x, y) + tau_ap(y, x)) / 2)


def test_tau_ap_refuses_ties():
    with pytest.raises(UsageError, match="tied"):
        tau_ap([1, 1, 2], [1, 2, 3])


# ----------------------------------------------------------------- RBO: Webber, Moffat and Zobel 2010
def overlap(s, l, d):
    return len(set(s[:d]) & set(l[:d]))


def rbo_sum_by_definition(s, l, p, depth):
    """(1-p) sum_{d=1..k} p^(d-1) A_d, A_d = |S:d & L:d| / d (their eq. 7, cut at k)."""
    return (1 - p) * sum(p ** (d - 1) * overlap(s, l, d) / d for d in range(1, depth + 1))


def rbo_ext_by_definition(s, l, p):
    """Eq. 32 (eq. 30 when both lists are as long): s the shorter list, X_d for d > |s| the overlap of all of S with L:d."""
    if len(s) > len(l):
        s, l = l, s
        return rbo_ext_by_definition(s, l, p)
    ls, ll = len(s), len(l)
    x = {d: len(set(s[:min(d, ls)]) & set(l[:d])) for d in range(1, ll + 1)}
    head = sum(x[d] / d * p**d for d in range(1, ll + 1))
    tail = sum(x[ls] * (d - ls) / (ls * d) * p**d for d in range(ls + 1, ll + 1))
    return (1 - p) / p * (head + tail) + ((x[ll] - x[ls]) / ll + x[ls] / ls) * p**ll


def test_rbo_known_value_and_extremes():
    assert rbo([1, 2, 3, 4, 5], [2, 3, 4, 1, 5], 0.9) == pytest.approx(0.828, abs=5e-4)
    assert rbo(list("abcdef"), list("abcdef"), 0.8) == pytest.approx(1.0)
    assert rbo(list("abc"), list("xyz"), 0.9) == 0.0
    assert rbo_head(list(range(3000)), list(range(3000)), 0.9) == pytest.approx(1.0)


@pytest.mark.parametrize("trial", range(40))
def test_rbo_equals_its_definition(trial):
    universe = list(range(30))
    p = float(RNG.choice([0.5, 0.8, 0.9, 0.95]))
    s = [int(v) for v in RNG.permutation(universe)[: int(RNG.integers(1, 15))]]
    l = [int(v) for v in RNG.permutation(universe)[: int(RNG.integers(1, 20))]]
    assert rbo(s, l, p) == pytest.approx(rbo_ext_by_definition(s, l, p), abs=1e-12)
    assert rbo(s, l, p) == pytest.approx(rbo(l, s, p), abs=1e-12)  # symmetric
    depth = max(len(s), len(l))
    assert rbo_head(s, l, p) == pytest.approx(rbo_sum_by_definition(s, l, p, depth), abs=1e-12)
    assert rbo_head(s, l, p, 5) == pytest.approx(rbo_sum_by_definition(s, l, p, 5), abs=1e-12)
    assert rbo_head(s, l, p) <= rbo(s, l, p) + 1e-12  # the sum to depth k is RBO_min's head: below the extrapolation
