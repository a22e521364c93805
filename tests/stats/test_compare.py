"""`evalkit compare`: each test against hand-computed cases and against scipy/statsmodels on real runs."""
from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest
from scipy import stats

from support.helpers import CT4B, GOLD_4B, run_cli, shared_or_skip
from oracles.official_4b import per_query, read_gold, read_preds

from evalkit.cli import main
from evalkit.stats.comparison import CompareOptions, compare
from evalkit.stats.bootstrap import bootstrap_ci
from evalkit.stats.correction import adjust
from evalkit.stats.effect_size import rank_biserial, relative_improvement, win_tie_loss
from evalkit.stats.mcnemar import contingency, mcnemar_tests
from evalkit.stats.paired import PairedValues
from evalkit.stats.randomization import randomization_test
from evalkit.stats.ttest import paired_t_test
from evalkit.stats.wilcoxon import wilcoxon_test

AIRWAVES = CT4B / "runs" / "airwaves"
DEV_RUNS = [
    AIRWAVES / "E5_base_setup_dev_TOP100.tsv",
    AIRWAVES / "c_6_intfloat-e5-large-v2_lr7e-6_chunked_20250527_190411_dev.tsv",
    AIRWAVES / "predictions_SciBERT_dev_TOP10.tsv",
    AIRWAVES / "predictions_BM25_dev_TOP10.tsv",
]


def cli(capsys, *args) -> tuple[int, str, str]:
    """Run the CLI in this process (fast) and capture what it prints."""
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_line_error(code: int, err: str, expected: str) -> None:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0], err
    assert "Traceback" not in err


# ----------------------------------------------------------------- hand-computed cases
def test_wilcoxon_with_ties_and_zero_differences():
    # d = [0, 0, 1, -1, 2, 2, 3]. wilcox drops the zeros; |d| = 1,1,2,2,3 get ranks 1.5,1.5,3.5,3.5,5:
    # R+ = 1.5 + 3.5 + 3.5 + 5 = 13.5, R- = 1.5, W = min = 1.5. Exact null over 2^5 sign patterns:
    # R+ <= 1.5 in 3 patterns ({}, {1a}, {1b}) and, symmetrically, R+ >= 13.5 in 3: p = 6/32.
    baseline = np.zeros(7)
    run = np.array([0, 0, 1, -1, 2, 2, 3], dtype=float)
    result = wilcoxon_test(run, baseline, "wilcox")
    assert result.statistic == 1.5 and result.p_value == pytest.approx(6 / 32)
    assert result.details["n_nonzero"] == 5
    assert rank_biserial(run, baseline, "wilcox") == pytest.approx((13.5 - 1.5) / 15)
    # pratt ranks the zeros (1.5, 1.5) then drops them: R+ = 3.5+5.5+5.5+7 = 21.5, R- = 3.5
    assert wilcoxon_test(run, baseline, "pratt").statistic == 3.5
    assert rank_biserial(run, baseline, "pratt") == pytest.approx((21.5 - 3.5) / 25)
    # zsplit gives half the zero ranks (3) to each side: R+ = 23, R- = 5
    assert wilcoxon_test(run, baseline, "zsplit").statistic == 5.0
    assert rank_biserial(run, baseline, "zsplit") == pytest.approx(18 / 28)
    for method in ("wilcox", "pratt", "zsplit"):
        direct = stats.wilcoxon(run, baseline, zero_method=method)
        mine = wilcoxon_test(run, baseline, method)
        assert (mine.statistic, mine.p_value) == (pytest.approx(direct.statistic), pytest.approx(direct.pvalue))
    assert win_tie_loss(run, baseline) == (4, 2, 1)


def test_mcnemar_known_discordant_counts():
    # 5 both correct, 2 only the baseline, 8 only the run, 3 neither
    baseline = np.array([1] * 5 + [1] * 2 + [0] * 8 + [0] * 3)
    run = np.array([1] * 5 + [0] * 2 + [1] * 8 + [0] * 3)
    assert contingency(run, baseline).tolist() == [[5, 2], [8, 3]]
    exact, chi2 = mcnemar_tests(run, baseline)
    assert exact.details["only_baseline"] == 2 and exact.details["only_run"] == 8
    # exact: 2 * P(X <= 2), X ~ Binomial(10, 1/2) = 2 * (1 + 10 + 45) / 1024
    assert exact.p_value == pytest.approx(112 / 1024)
    # chi-square with continuity correction: (|2 - 8| - 1)^2 / 10 = 2.5 on 1 df
    assert chi2.statistic == pytest.approx(2.5)
    assert chi2.p_value == pytest.approx(stats.chi2.sf(2.5, 1))
    same_exact, same_chi2 = mcnemar_tests(run, run)
    assert same_exact.p_value == 1.0 and same_chi2.p_value == 1.0


def test_paired_t_test_by_hand_and_degenerate_cases():
    # d = [1, 2, 3]: mean 2, sd 1, t = 2 / (1 / sqrt(3)), 2 df
    result = paired_t_test(np.array([1.0, 2.0, 3.0]), np.zeros(3))
    assert result.statistic == pytest.approx(2 * math.sqrt(3))
    assert result.p_value == pytest.approx(2 * stats.t.sf(2 * math.sqrt(3), 2))
    same = paired_t_test(np.ones(4), np.ones(4))
    assert (same.statistic, same.p_value) == (0.0, 1.0)
    shifted = paired_t_test(np.array([1.0, 2.0]), np.array([0.0, 1.0]))
    assert shifted.p_value == 0.0 and shifted.statistic == math.inf


def test_randomization_exact_and_seeded():
    # d = [1, -1, 2, 2, 3] (+ two zeros): |sum(s * d)| >= 7 for 6 of the 32 sign patterns
    baseline = np.zeros(7)
    run = np.array([0, 0, 1, -1, 2, 2, 3], dtype=float)
    exact = randomization_test(run, baseline, permutations=10_000)
    assert exact.p_value == pytest.approx(6 / 32) and exact.details["method"].startswith("exact")
    direct = stats.permutation_test(
        (run, baseline), lambda x, y, axis: np.mean(x - y, axis=axis), permutation_type="samples", n_resamples=10_000, vectorized=True
    )
    assert exact.p_value == pytest.approx(direct.pvalue)

    rng = np.random.default_rng(0)
    a, b = rng.random(300), rng.random(300)
    first = randomization_test(a + 0.05, b, permutations=2_000, seed=7)
    again = randomization_test(a + 0.05, b, permutations=2_000, seed=7)
    assert first.p_value == again.p_value and first.details["method"].startswith("Monte Carlo")
    hits = first.p_value * 2_001 - 1
    assert abs(hits - round(hits)) < 1e-6  # p = (1 + hits) / (1 + B)
    reference = stats.permutation_test(
        (a + 0.05, b), lambda x, y, axis: np.mean(x - y, axis=axis), permutation_type="samples",
        n_resamples=20_000, vectorized=True, rng=np.random.default_rng(1),
    )
    assert abs(first.p_value - reference.pvalue) < 0.03
    assert randomization_test(a, a).p_value == 1.0


def test_corrections_by_hand():
    p = [0.01, 0.04, 0.03]
    assert adjust(p, "holm") == pytest.approx([0.03, 0.06, 0.06])
    assert adjust(p, "bonferroni") == pytest.approx([0.03, 0.12, 0.09])
    assert adjust(p, "none") == p
    assert adjust([0.2], "holm") == [0.2]


def test_bootstrap_matches_scipy_and_degenerate():
    rng = np.random.default_rng(3)
    d = rng.normal(0.1, 0.3, 200)
    for method in ("percentile", "basic", "bca"):
        low, high = bootstrap_ci(d, 2_000, 0.9, method, seed=11)
        direct = stats.bootstrap((d,), np.mean, n_resamples=2_000, confidence_level=0.9,
                                 method="BCa" if method == "bca" else method, rng=np.random.default_rng(11))
        assert (low, high) == (pytest.approx(direct.confidence_interval.low), pytest.approx(direct.confidence_interval.high))
    assert bootstrap_ci(np.zeros(5)) == (0.0, 0.0)
    assert relative_improvement(0.6, 0.5) == pytest.approx(0.2) and math.isnan(relative_improvement(0.1, 0.0))


def test_identical_runs_give_p_one_everywhere():
    values = np.array([1.0, 0.5, 0.0, 0.2, 1.0])
    paired = PairedValues("MRR@5", ["a", "b"], list("12345"), np.vstack([values, values]))
    binary = PairedValues("Success@1", ["a", "b"], list("12345"), np.vstack([values == 1, values == 1]).astype(float))
    result = compare(paired, "a", CompareOptions(), binary)
    pair = result.pairs[0]
    assert {name: t.p_value for name, t in pair.tests.items()} == dict.fromkeys(pair.tests, 1.0)
    assert pair.ci == (0.0, 0.0) and pair.rank_biserial == 0.0 and (pair.wins, pair.ties, pair.losses) == (0, 5, 0)


# ----------------------------------------------------------------- real runs vs scipy / statsmodels
@pytest.mark.realdata
def test_real_dev_runs_equal_scipy_and_statsmodels(tmp_path, capsys):
    from statsmodels.stats.contingency_tables import mcnemar
    from statsmodels.stats.multitest import multipletests

    gold_path = shared_or_skip(GOLD_4B["dev"])
    out, per_query_path = tmp_path / "cmp.json", tmp_path / "pq.tsv"
    code, _, err = cli(capsys, "compare", gold_path, *DEV_RUNS, "-o", "json", "--out", out, "--per-query", per_query_path,
                       "--permutations", 2000, "--bootstrap", 2000, "--seed", 5)
    assert code == 0, err
    data = json.loads(out.read_text())
    assert data["metric"] == "MRR@5" and data["binary_outcome"] == "Success@1" and data["queries"] == 1400
    assert data["options"]["zero_method"] == "wilcox" and data["options"]["seed"] == 5
    assert data["manifest"]["seed"] == 5 and len(data["manifest"]["inputs"]) == 5

    gold = read_gold(gold_path)
    vectors = {p.stem: per_query(gold, read_preds(p)) for p in DEV_RUNS}
    success = {p.stem: per_query(gold, read_preds(p), success=1) for p in DEV_RUNS}
    base = DEV_RUNS[0].stem
    comparisons = {c["run"]: c for c in data["comparisons"]}
    assert set(comparisons) == {p.stem for p in DEV_RUNS[1:]}
    raw = {"wilcoxon": [], "ttest": [], "mcnemar_exact": []}
    for path in DEV_RUNS[1:]:
        c = comparisons[path.stem]
        a, b = vectors[path.stem], vectors[base]
        assert c["n"] == 1400 and c["mean_run"] == pytest.approx(a.mean()) and c["difference"] == pytest.approx(a.mean() - b.mean())
        assert (c["wins"], c["ties"], c["losses"]) == (int((a > b).sum()), int((a == b).sum()), int((a < b).sum()))
        w = stats.wilcoxon(a, b)
        assert c["tests"]["wilcoxon"]["statistic"] == pytest.approx(w.statistic)
        assert c["tests"]["wilcoxon"]["p_value"] == pytest.approx(w.pvalue, rel=1e-9)
        t = stats.ttest_rel(a, b)
        assert c["tests"]["ttest"]["statistic"] == pytest.approx(t.statistic)
        assert c["tests"]["ttest"]["p_value"] == pytest.approx(t.pvalue, rel=1e-9)
        sa, sb = success[path.stem], success[base]
        only_base, only_run = int(((sb == 1) & (sa == 0)).sum()), int(((sa == 1) & (sb == 0)).sum())
        mc = c["tests"]["mcnemar_exact"]
        assert (mc["only_baseline"], mc["only_run"]) == (only_base, only_run)
        table = [[int(((sa == 1) & (sb == 1)).sum()), only_base], [only_run, int(((sa == 0) & (sb == 0)).sum())]]
        assert mc["p_value"] == pytest.approx(mcnemar(table, exact=True).pvalue)
        assert c["tests"]["mcnemar_chi2"]["p_value"] == pytest.approx(mcnemar(table, exact=False, correction=True).pvalue)
        ci = stats.bootstrap((a - b,), np.mean, n_resamples=2000, method="percentile", rng=np.random.default_rng(5)).confidence_interval
        assert c["ci"] == [pytest.approx(ci.low), pytest.approx(ci.high)]
        perm = stats.permutation_test((a, b), lambda x, y, axis: np.mean(x - y, axis=axis), permutation_type="samples",
                                      n_resamples=20_000, vectorized=True, rng=np.random.default_rng(2))
        assert abs(c["tests"]["randomization"]["p_value"] - perm.pvalue) < 0.03
        for test in raw:
            raw[test].append(c["tests"][test]["p_value"])
    for test, p_values in raw.items():
        holm = multipletests(p_values, method="holm")[1]
        adjusted = [comparisons[p.stem]["tests"][test]["p_adjusted"] for p in DEV_RUNS[1:]]
        assert adjusted == pytest.approx(list(holm))

    rows = per_query_path.read_text().splitlines()
    assert len(rows) == 1401 and rows[0].startswith("query_id\tE5_base_setup_dev_TOP100:MRR@5")
    assert (tmp_path / "pq.tsv.manifest.json").exists()


@pytest.mark.realdata
def test_table_and_markdown_outputs(capsys):
    gold = shared_or_skip(GOLD_4B["dev"])
    code, out, err = cli(capsys, "compare", gold, DEV_RUNS[3], DEV_RUNS[2], "--permutations", 500, "--bootstrap", 500, "--zero-method", "pratt")
    assert code == 0, err
    assert "baseline predictions_BM25_dev_TOP10" in out and "zero_method=pratt" in out and "seed 42" in out
    assert "Success@1: only base / only run" in out
    code, out, err = cli(capsys, "compare", gold, DEV_RUNS[3], DEV_RUNS[2], "-o", "markdown", "--correction", "bonferroni",
                         "--permutations", 500, "--bootstrap", 500, "--baseline", "predictions_SciBERT_dev_TOP10")
    assert code == 0, err
    assert out.startswith("**compare · task checkthat2025-4b · metric MRR@5") and "| predictions_SciBERT_dev_TOP10 (baseline) |" in out
    assert "<summary>Manifest</summary>" in out


# ----------------------------------------------------------------- bad input
@pytest.mark.realdata
def test_single_run_and_bad_options(capsys):
    gold = shared_or_skip(GOLD_4B["dev"])
    one_line_error(*cli(capsys, "compare", gold, DEV_RUNS[0])[::2], "compare needs at least two runs")
    one_line_error(*cli(capsys, "compare", gold, *DEV_RUNS[:2], "--binary", "mrr@5")[::2], "is not a 0/1 outcome")
    one_line_error(*cli(capsys, "compare", gold, *DEV_RUNS[:2], "--baseline", "nope")[::2], "baseline 'nope' is none of the runs")
    one_line_error(*cli(capsys, "compare", gold, *DEV_RUNS[:2], "--metric", "foo@3")[::2], "unknown metric 'foo'")


@pytest.mark.realdata
def test_run_for_another_split_is_refused():
    gold = shared_or_skip(GOLD_4B["dev"])
    wrong = AIRWAVES / "E5_HN_All__dev_TOP100.tsv"  # named dev, holds the test queries
    result = run_cli("compare", gold, DEV_RUNS[0], wrong)
    one_line_error(result.returncode, result.stderr, "wrong split?")
    assert str(wrong) in result.stderr and result.stdout == ""


@pytest.mark.realdata
def test_fewer_queries_and_identical_runs(tmp_path, capsys):
    gold = shared_or_skip(GOLD_4B["dev"])
    lines = DEV_RUNS[2].read_text().splitlines()
    fewer = tmp_path / "fewer_dev.tsv"
    fewer.write_text("\n".join(lines[:-70]) + "\n")  # 70 of 1400 queries missing (5%)
    code, out, err = cli(capsys, "compare", gold, DEV_RUNS[2], fewer, "-o", "json", "--permutations", 200, "--bootstrap", 200)
    assert code == 0, err
    assert "fewer_dev: 70 of 1400 gold queries missing from the run (score 0)" in err
    pair = json.loads(out)["comparisons"][0]
    assert pair["n"] == 1400 and pair["losses"] > 0 and pair["wins"] == 0

    skip = cli(capsys, "compare", gold, DEV_RUNS[2], fewer, "--missing", "skip")
    one_line_error(skip[0], skip[2], "paired tests need the same queries for every run")

    half = tmp_path / "half_dev.tsv"
    half.write_text("\n".join(lines[:700]) + "\n")
    one_line_error(*cli(capsys, "compare", gold, DEV_RUNS[2], half)[::2], "wrong split?")

    copy = tmp_path / "copy_dev.tsv"
    shutil.copy(DEV_RUNS[2], copy)
    for pair_of_runs in ((DEV_RUNS[2], copy), (DEV_RUNS[2], DEV_RUNS[2])):
        code, out, err = cli(capsys, "compare", gold, *pair_of_runs, "-o", "json")
        assert code == 0, err
        tests = json.loads(out)["comparisons"][0]["tests"]
        assert {name: t["p_value"] for name, t in tests.items()} == dict.fromkeys(tests, 1.0)
        assert "NaN" not in out


@pytest.mark.realdata
def test_existing_output_needs_force(tmp_path, capsys):
    gold = shared_or_skip(GOLD_4B["dev"])
    out = tmp_path / "cmp.md"
    out.write_text("keep me")
    one_line_error(*cli(capsys, "compare", gold, *DEV_RUNS[2:], "--out", out)[::2], "exists; pass --force")
    assert out.read_text() == "keep me"


# ----------------------------------------------------------------- three or more runs: every pair
@pytest.mark.realdata
def test_three_runs_compare_every_pair(capsys):
    """compare with 3+ runs adds the all-pairs comparison (randomised Tukey HSD by default) to every output; ES_E beside r_rb."""
    from evalkit.stats.anova import two_way_anova
    from evalkit.stats.tukey import tukey_hsd

    gold = shared_or_skip(GOLD_4B["dev"])
    runs = [DEV_RUNS[3], DEV_RUNS[0], DEV_RUNS[2]]
    code, out, err = cli(capsys, "compare", gold, *runs, "-o", "json", "--permutations", 999, "--bootstrap", 999)
    assert code == 0, err
    data = json.loads(out)
    every = data["all_pairs"]
    assert every["procedure"] == "randomised-tukey" and every["permutations"] == 999 and every["bootstrap_resamples"] == 999
    assert [(p["run_a"], p["run_b"]) for p in every["pairs"]] == [  # best first: each pair reads "better - worse"
        ("predictions_SciBERT_dev_TOP10", "E5_base_setup_dev_TOP100"), ("predictions_SciBERT_dev_TOP10", "predictions_BM25_dev_TOP10"),
        ("E5_base_setup_dev_TOP100", "predictions_BM25_dev_TOP10")]
    assert [r["run"] for r in every["runs"] if r["tied_with_top"]] == ["predictions_SciBERT_dev_TOP10", "E5_base_setup_dev_TOP100"]
    assert [r["rank_interval"] for r in every["runs"]] == [[1, 2], [1, 2], [3, 3]]
    assert [r["letters"] for r in every["runs"]] == ["a", "a", "b"]
    assert [p["significant"] for p in every["pairs"]] == [False, True, True]
    assert all(p["p_value"] <= p["p_adjusted"] for p in every["pairs"])
    # ES_E: the pair's difference over sqrt(V_E) of the two-way ANOVA of the three runs, in compare and in every pair
    values = np.vstack([per_query(read_gold(gold), read_preds(r)) for r in runs])
    v_e = two_way_anova(values).residual_variance
    for pair in data["comparisons"]:
        assert pair["es_e"] == pytest.approx(pair["difference"] / math.sqrt(v_e), rel=1e-9)
    assert every["pairs"][2]["es_e"] == pytest.approx(data["comparisons"][0]["es_e"], rel=1e-9)  # E5 - BM25 in both

    code, out, err = cli(capsys, "compare", gold, *runs, "--all-pairs", "tukey", "--bootstrap", 500)
    assert code == 0, err
    assert "all pairs: Tukey HSD, alpha 0.05" in out and "ES_E" in out and "tied with #1" in out
    tukey = tukey_hsd(values[[2, 1, 0]])
    assert f"{tukey.difference[0]:+.4f} " in out and "qtukey on 2798 df" in out
    code, out, err = cli(capsys, "compare", gold, *runs, "--all-pairs", "ttest", "--correction", "by", "-o", "markdown",
                         "--permutations", 200, "--bootstrap", 200)
    assert code == 0 and "### All pairs: t-test + by, alpha 0.05" in out and "<details><summary>Every pair (3" in out
    code, out, err = cli(capsys, "compare", gold, *runs, "--all-pairs", "none", "-o", "json", "--permutations", 200, "--bootstrap", 200)
    assert code == 0 and json.loads(out)["all_pairs"] is None
    code, out, err = cli(capsys, "compare", gold, *runs[:2], "-o", "json", "--permutations", 200, "--bootstrap", 200)
    assert code == 0 and json.loads(out)["all_pairs"] is None  # auto: two runs have one pair, the comparison itself
