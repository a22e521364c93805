"""All-pairs procedures without R: randomised Tukey HSD against a plain loop and exact enumeration, its compiled kernel
against the numpy twin, pinned seeded values, Tukey HSD's special cases, BH/BY against statsmodels, rank intervals,
the group tied with the top, compact letters, and :func:`evalkit.stats.allpairs.all_pairs` as the API gives it.
(The R oracle tests are in tests/oracles/test_allpairs_r.py.)"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from evalkit.native import kernels
from evalkit.stats.allpairs import AllPairsOptions, all_pairs
from evalkit.core.errors import UsageError
from evalkit.stats import PairTable
from evalkit.stats import randomised_tukey as rt
from evalkit.stats.bootstrap import bootstrap_ci, bootstrap_means
from evalkit.stats.correction import adjust
from evalkit.stats.letters import compact_letters
from evalkit.stats.paired import PairedValues
from evalkit.stats.pairwise import paired_tests, pairwise_table
from evalkit.stats.rank_intervals import bootstrap_rank_intervals, simultaneous_rank_intervals, tied_with_top
from evalkit.stats.ttest import paired_t_test
from evalkit.stats.tukey import tukey_hsd

needs_native = pytest.mark.skipif(kernels.native is None, reason="evalkit.native._native was not built (no C compiler at install time)")
LEVELS = np.array([0, 1, 1 / 2, 1 / 3, 1 / 4, 1 / 5])


def mrr_like(seed: int, runs: int, n: int, constant_topics: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    base = rng.choice(LEVELS, n)
    matrix = np.vstack([np.where(rng.random(n) < 0.15 + 0.1 * i, rng.choice(LEVELS, n), base) for i in range(runs)])
    matrix[:, :constant_topics] = 0.5
    return matrix


def values_of(matrix: np.ndarray, metric: str = "MRR@5") -> PairedValues:
    return PairedValues(metric, [f"run{i}" for i in range(matrix.shape[0])], [f"q{j}" for j in range(matrix.shape[1])], matrix)


# ----------------------------------------------------------------- randomised Tukey HSD
@needs_native
@pytest.mark.parametrize("k, n, limit", [(5, 40, rt.GROUP_LIMIT), (20, 120, rt.GROUP_LIMIT), (23, 30, rt.GROUP_LIMIT),
                                         (6, 30, 1 << 63), (7, 25, 1 << 5), (2, 50, rt.GROUP_LIMIT)])
def test_kernel_and_numpy_twin_give_the_same_replicates(k, n, limit, monkeypatch):
    """Rejections are frequent with the odd group limits (1 << 63, 1 << 5): the twin follows the kernel's stream."""
    matrix = mrr_like(k * n, k, n, constant_topics=3)
    compiled = rt.permute(matrix, 300, 7, limit)
    monkeypatch.setattr(kernels, "native", None)
    twin = rt.permute(matrix, 300, 7, limit)
    assert np.array_equal(compiled.sums, twin.sums)
    assert np.array_equal(compiled.observed, twin.observed)
    assert compiled.n_permuted == int(np.sum(np.any(matrix != matrix[:1], axis=0))) <= n - 3
    np.testing.assert_allclose(compiled.sums.sum(axis=1), compiled.observed.sum())  # a permutation moves scores, never changes them


def test_radix_groups_cover_every_shuffle_step():
    for k in (2, 3, 20, 21, 60):
        groups = rt.radix_groups(k)
        assert [r for g in groups for r in g] == list(range(k, 1, -1))
        assert all(int(np.prod(g, dtype=object)) < rt.GROUP_LIMIT for g in groups)
    assert len(rt.radix_groups(20)) == 1 and len(rt.radix_groups(21)) == 2  # 20! < 2^62 < 21!


def exact_range_p(matrix: np.ndarray) -> np.ndarray:
    """P(range of permuted run means >= |d_ij|) over all (k!)^n equally likely topic-wise permutations."""
    k, n = matrix.shape
    ranges = []
    for perms in itertools.product(list(itertools.permutations(range(k))), repeat=n):
        means = np.array([[matrix[p[s], t] for t, p in enumerate(perms)] for s in range(k)]).mean(axis=1)
        ranges.append(means.max() - means.min())
    ranges = np.array(ranges)
    means = matrix.mean(axis=1)
    first, second = np.triu_indices(k, 1)
    observed = np.abs(means[first] - means[second])
    return np.array([np.mean(ranges >= d - 1e-12) for d in observed])


def test_randomised_tukey_equals_exact_enumeration_within_monte_carlo_error():
    matrix = np.array([[0.9, 0.1, 0.7], [0.2, 0.3, 0.5], [0.4, 0.8, 0.05]])
    exact = exact_range_p(matrix)
    table = rt.randomised_tukey_hsd(matrix, 0.05, 20_000, 3)
    error = 4.5 * np.sqrt(exact * (1 - exact) / 20_000) + 1 / 20_000
    assert np.all(np.abs(table.p_adjusted - exact) <= error), (table.p_adjusted, exact)


def reference_loop(matrix: np.ndarray, permutations: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Sakai's randomised Tukey HSD as a plain loop (numpy's permutation per topic and replicate): raw and adjusted p."""
    rng = np.random.default_rng(seed)
    k, n = matrix.shape
    means = matrix.mean(axis=1)
    first, second = np.triu_indices(k, 1)
    observed = np.abs(means[first] - means[second])
    hits_range, hits_own = np.zeros(len(first)), np.zeros(len(first))
    for _ in range(permutations):
        shuffled = np.column_stack([matrix[rng.permutation(k), t] for t in range(n)])
        replicate = shuffled.mean(axis=1)
        hits_range += (replicate.max() - replicate.min()) >= observed - 1e-12
        hits_own += np.abs(replicate[first] - replicate[second]) >= observed - 1e-12
    return (1 + hits_own) / (1 + permutations), (1 + hits_range) / (1 + permutations)


def test_randomised_tukey_agrees_with_a_plain_loop_within_monte_carlo_error():
    matrix = mrr_like(5, 5, 30)
    matrix[4] = np.where(np.random.default_rng(1).random(30) < 0.3, 1.0, matrix[4])
    raw, adjusted = reference_loop(matrix, 3000, 99)
    table = rt.randomised_tukey_hsd(matrix, 0.05, 3000, 42)
    for ours, theirs in ((table.p_adjusted, adjusted), (table.p_value, raw)):
        p = (ours + theirs) / 2
        assert np.all(np.abs(ours - theirs) <= 4.5 * np.sqrt(2 * p * (1 - p) / 3000) + 2 / 3000), (ours, theirs)
    assert np.all(table.p_value <= table.p_adjusted)  # a pair's own difference never exceeds the range


def test_randomised_tukey_is_seeded_and_pinned():
    """Same seed, same figures -- and these figures (a change of the random stream would show here)."""
    matrix = np.round(np.random.default_rng(11).random((4, 25)), 2)
    table = rt.randomised_tukey_hsd(matrix, 0.05, 2000, 42)
    again = rt.randomised_tukey_hsd(matrix, 0.05, 2000, 42)
    assert np.array_equal(table.p_adjusted, again.p_adjusted) and np.array_equal(table.low, again.low)
    assert table.p_adjusted.tolist() == [0.9825087456271864, 0.5072463768115942, 0.9140429785107447, 0.7476261869065467,
                                         0.7231384307846077, 0.16591704147926037]
    assert table.p_value.tolist() == [0.7021489255372314, 0.16141929035482258, 0.5102448775612194, 0.3258370814592704,
                                      0.30134932533733133, 0.04147926036981509]
    assert (table.high - table.difference)[0] == pytest.approx(0.222, abs=1e-12)
    other = rt.randomised_tukey_hsd(matrix, 0.05, 2000, 43)
    assert not np.array_equal(table.p_adjusted, other.p_adjusted)


@pytest.mark.parametrize("alpha", [0.05, 0.1, 0.01])
def test_randomised_tukey_interval_excludes_zero_exactly_when_significant(alpha):
    matrix = mrr_like(8, 8, 200)
    matrix[2] = np.where(np.random.default_rng(2).random(200) < 0.25, 1.0, matrix[2])
    table = rt.randomised_tukey_hsd(matrix, alpha, 999, 5)
    significant = table.p_adjusted < alpha
    assert significant.any() and not significant.all()
    assert np.array_equal(significant, (table.low > 0) | (table.high < 0))


def test_randomised_tukey_degenerate_inputs():
    same = np.tile(np.random.default_rng(3).random(20), (3, 1))
    table = rt.randomised_tukey_hsd(same, 0.05, 500, 1)
    assert np.all(table.p_adjusted == 1) and np.all(table.p_value == 1) and np.all(table.low == 0) and np.all(table.high == 0)
    constant_topics = np.array([[0.5, 0.5, 1.0], [0.5, 0.5, 1.0]])
    assert rt.randomised_tukey_hsd(constant_topics, 0.05, 100, 1).p_adjusted.tolist() == [1.0]


# ----------------------------------------------------------------- Tukey HSD
def test_tukey_with_two_runs_is_the_paired_t_test():
    matrix = mrr_like(4, 2, 80)
    table = tukey_hsd(matrix)
    expected = paired_t_test(matrix[0], matrix[1]).p_value
    assert table.p_value[0] == pytest.approx(expected, rel=1e-12)
    assert table.p_adjusted[0] == pytest.approx(expected, abs=1e-8)  # ptukey(sqrt(2) |t|, 2, df) = P(|T| >= |t|)


def test_tukey_without_residual_variance():
    base = np.array([0.0, 0.25, 1.0, 0.75])  # every mean an exact binary fraction: the residuals are exactly 0
    table = tukey_hsd(np.vstack([base, base + 0.25, base + 0.5, base]))  # runs differ by constants: V_E = 0 (R gives NaN)
    assert table.p_adjusted.tolist() == [0.0, 0.0, 1.0, 0.0, 0.0, 0.0] and np.array_equal(table.low, table.high)
    with pytest.raises(UsageError, match="residual degrees of freedom"):
        tukey_hsd(np.array([[0.1, 0.2], [0.3, 0.5]]))


# ----------------------------------------------------------------- corrections, pairwise tests
@pytest.mark.parametrize("method, theirs", [("bh", "fdr_bh"), ("by", "fdr_by"), ("holm", "holm"), ("bonferroni", "bonferroni")])
def test_corrections_equal_statsmodels(method, theirs):
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(6)
    for p in (rng.random(45) ** 4, np.r_[rng.random(10) * 0.01, 1.0, 1.0, 0.5, 0.5], np.array([0.2, 0.01])):
        np.testing.assert_allclose(adjust(p, method), multipletests(p, method=theirs)[1], rtol=1e-14, atol=0)


def test_pairwise_tests_are_the_paired_tests_and_the_bootstrap_of_compare():
    matrix = mrr_like(9, 4, 150)
    boot = bootstrap_means(matrix, 2000, 42)
    table = pairwise_table(matrix, "wilcoxon", boot, "bh", 0.05)
    raw = [r.p_value for r in paired_tests("wilcoxon", [(matrix[i], matrix[j]) for i, j in zip(table.first, table.second)])]
    assert table.p_value.tolist() == raw
    assert table.p_adjusted.tolist() == adjust(raw, "bh")
    for p, (i, j) in enumerate(zip(table.first, table.second)):  # the same resamples as compare's bootstrap CI of the pair
        low, high = bootstrap_ci(matrix[i] - matrix[j], 2000, 0.95, seed=42)
        assert table.low[p] == pytest.approx(low, abs=1e-12) and table.high[p] == pytest.approx(high, abs=1e-12)
    holm = pairwise_table(matrix, "wilcoxon", boot, "holm", 0.05)  # family-wise: Bonferroni-wide intervals
    assert np.all(holm.high - holm.low >= table.high - table.low - 1e-12)


def test_all_pairs_randomization_agrees_with_each_pairs_own_test_within_monte_carlo_error():
    """One sign per query shared by all pairs (one matrix product) against each pair's own stream (compare's)."""
    from evalkit.stats.randomization import randomization_test, randomization_tests_query_signs

    matrix = mrr_like(14, 6, 200)
    matrix[5] = np.where(np.random.default_rng(2).random(200) < 0.2, 1.0, matrix[5])
    first, second = np.triu_indices(6, 1)
    shared = np.array([r.p_value for r in randomization_tests_query_signs(matrix[first] - matrix[second], 4000, 9)])
    own = np.array([randomization_test(matrix[i], matrix[j], 4000, 9).p_value for i, j in zip(first, second)])
    p = (shared + own) / 2
    assert np.all(np.abs(shared - own) <= 4.5 * np.sqrt(2 * p * (1 - p) / 4000) + 2 / 4000), (shared, own)
    tiny = np.array([[0.5, 0.0, 0.25, 1.0], [0.5, 0.5, 0.0, 0.0]])  # 3 non-zero differences: exact enumeration, as compare
    exact = randomization_tests_query_signs(tiny[:1] - tiny[1:], 4000, 9)[0]
    assert exact.p_value == randomization_test(tiny[0], tiny[1], 4000, 9).p_value and "exact" in exact.details["method"]


# ----------------------------------------------------------------- rank intervals, tied group, letters
def table_of(k: int, significant_pairs: dict[tuple[int, int], float], means: np.ndarray) -> PairTable:
    first, second = np.triu_indices(k, 1)
    p = np.array([0.001 if (i, j) in significant_pairs else 0.5 for i, j in zip(first, second)])
    difference = means[first] - means[second]
    return PairTable(first, second, difference, difference, difference, p, p)


def test_rank_intervals_from_significance():
    means = np.array([0.9, 0.85, 0.5, 0.45, 0.1])
    table = table_of(5, {(0, 2): 1, (0, 3): 1, (0, 4): 1, (1, 4): 1, (2, 4): 1, (3, 4): 1}, means)
    from evalkit.stats.rank_intervals import better_matrix

    better = better_matrix(table, 5, 0.05)
    assert simultaneous_rank_intervals(better) == [(1, 2), (1, 4), (2, 4), (2, 4), (5, 5)]
    assert tied_with_top(means, table, 0.05) == [0, 1]
    assert compact_letters(means, better | better.T) == ["a", "ab", "b", "b", "c"]


def test_letters_share_exactly_the_nonsignificant_pairs():
    rng = np.random.default_rng(12)
    for _ in range(150):
        k = int(rng.integers(2, 11))
        means = rng.random(k)
        order = np.argsort(-means)
        significant = np.zeros((k, k), dtype=bool)
        for a in range(k):  # mostly interval-like, plus random exceptions (pairwise tests need not be monotone)
            for b in range(a + 1, k):
                i, j = order[a], order[b]
                apart = rng.random() < (0.3 * (b - a)) or rng.random() < 0.1
                significant[i, j] = significant[j, i] = apart
        letters = compact_letters(means, significant)
        assert all(letters)
        assert "a" in letters[int(order[0])]
        for i in range(k):
            for j in range(i + 1, k):
                assert bool(set(letters[i]) & set(letters[j])) == (not significant[i, j]), (letters, i, j)


def test_bootstrap_rank_intervals():
    matrix = np.vstack([np.full(50, 0.9), mrr_like(1, 3, 50)])
    matrix[0, :5] = 0.0
    intervals = bootstrap_rank_intervals(bootstrap_means(matrix, 1000, 42), 0.05)
    assert intervals[0] == (1, 1) and all(1 <= lo <= hi <= 4 for lo, hi in intervals)
    same = bootstrap_rank_intervals(bootstrap_means(np.tile(matrix[1], (3, 1)), 200, 1))
    assert same == [(1, 1)] * 3  # equal means share the best rank in every resample


# ----------------------------------------------------------------- the assembled result
@pytest.mark.parametrize("procedure", ["tukey", "randomised-tukey", "wilcoxon", "ttest", "randomization", "mcnemar"])
def test_all_pairs_result(procedure):
    matrix = mrr_like(21, 5, 120)
    matrix[3] = np.where(np.random.default_rng(5).random(120) < 0.4, 1.0, matrix[3])
    values = values_of(matrix)
    binary = values_of((matrix == 1).astype(float), "Success@1")
    options = AllPairsOptions(procedure=procedure, permutations=999, bootstrap=999, seed=3)
    result = all_pairs(values, options, binary)
    assert len(result.pairs) == 10 and len(result.runs) == 5
    top = max(result.runs, key=lambda r: r.mean)
    assert top.name == "run3" and top.tied_with_top and "a" in top.letters and top.rank_interval[0] == 1
    assert result.metric == ("Success@1" if procedure == "mcnemar" else "MRR@5")
    for run in result.runs:
        lo, hi = run.rank_interval
        assert 1 <= lo <= hi <= 5 and run.label == (str(lo) if lo == hi else f"{lo}-{hi}")
    for pair in result.pairs:
        assert pair.low <= pair.difference <= pair.high and pair.p_value <= pair.p_adjusted + 1e-15
        assert pair.significant == (pair.p_adjusted < 0.05)
    text = " ".join(result.description())
    assert "alpha = 0.05" in text and "seed 3" in text and "999 resamples" in text
    assert ("999 permutations" in text) == (procedure in ("randomised-tukey", "randomization"))
    data = result.as_dict()
    assert data["procedure"] == procedure and data["pairs"][0].keys() >= {"run_a", "run_b", "difference", "interval", "p_value", "p_adjusted"}
    assert all("rank_interval" in r for r in data["runs"])
    assert data["correction"] == (None if procedure in ("tukey", "randomised-tukey") else "holm")


def test_all_pairs_leaves_out_queries_a_run_lacks_and_refuses_what_it_cannot_do():
    matrix = mrr_like(3, 3, 40)
    matrix[1, :4] = np.nan
    result = all_pairs(values_of(matrix), AllPairsOptions(procedure="tukey", bootstrap=200))
    assert result.n_queries == 36 and result.left_out == 4 and "4 queries" in result.notes[0]
    with pytest.raises(UsageError, match="0/1 outcome"):
        all_pairs(values_of(matrix), AllPairsOptions(procedure="mcnemar"))
    with pytest.raises(UsageError, match="unknown all-pairs procedure"):
        all_pairs(values_of(matrix), AllPairsOptions(procedure="scheffe"))
    with pytest.raises(UsageError, match="at least two runs"):
        all_pairs(values_of(matrix[:1]), AllPairsOptions())
    with pytest.raises(UsageError, match="correction"):
        all_pairs(values_of(matrix), AllPairsOptions(correction="fdr"))


def test_compare_api_gives_every_pair_and_notes_what_it_cannot():
    """evalkit.compare with three runs adds result.all_pairs (frames for a notebook); too few queries leave a note instead."""
    import evalkit

    gold = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}}
    runs = [{"q1": {"d1": 1.0}, "q2": {"d2": 1.0}, "q3": {"d3": 1.0}}, {"q1": {"d1": 1.0}, "q2": {"x": 1.0}, "q3": {"d3": 1.0}},
            {"q1": {"x": 1.0}, "q2": {"x": 1.0}, "q3": {"d3": 1.0}}]
    result = evalkit.compare(gold, *runs, names=["a", "b", "c"], all_pairs="tukey", bootstrap=200, permutations=200)
    assert list(result.all_pairs.runs_frame().index) == ["a", "b", "c"]
    assert list(result.all_pairs.pairs_frame()[["run_a", "run_b"]].itertuples(index=False, name=None)) == [("a", "b"), ("a", "c"), ("b", "c")]
    assert result.manifest["options"]["all_pairs"] == "tukey"
    assert evalkit.compare(gold, *runs[:2], bootstrap=200, permutations=200).all_pairs is None  # auto: two runs, one pair
    one = {"q1": {"d1": 1}}
    short = evalkit.compare(one, *[{"q1": r["q1"]} for r in runs], bootstrap=200, permutations=200, allow_partial=True)
    assert short.all_pairs is None and any("all pairs not compared" in n for n in short.comparison.notes)


def _letters_by_whole_absorb(means, significant):
    """Insert-absorb with every column held against every other at each step (the algorithm as Piepho states it)."""
    from evalkit.stats import letters as cld

    k = len(means)
    order = np.argsort(-np.asarray(means, dtype=np.float64), kind="stable")
    columns = [frozenset(range(k))]
    for a in range(k):
        for b in range(a + 1, k):
            i, j = int(order[a]), int(order[b])
            if significant[i, j]:
                split = []
                for column in columns:
                    split += [column - {i}, column - {j}] if i in column and j in column else [column]
                columns = cld._absorb(split)
    return columns


@pytest.mark.parametrize("seed", range(40))
def test_letters_split_only_the_copies_as_absorbing_the_whole_list(seed):
    """The insert step holds only the new copies against the others; the columns equal those of absorbing everything."""
    from evalkit.stats import letters as cld

    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 30))
    means = rng.random(k).round(1)  # ties too
    significant = np.triu(rng.random((k, k)) < rng.random(), 1)
    significant = significant | significant.T
    order = np.argsort(-means, kind="stable")
    columns = [frozenset(range(k))]
    for a in range(k):
        for b in range(a + 1, k):
            i, j = int(order[a]), int(order[b])
            if significant[i, j]:
                columns = cld._split(columns, i, j)
    assert columns == _letters_by_whole_absorb(means, significant)
