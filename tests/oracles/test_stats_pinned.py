"""Pinned statistics: every p-value, statistic and CI of compare/leaderboard equals what evalkit gave before
the numpy-only rewrite of the tests (scipy.stats and statsmodels no longer imported at run time).

The expected values in ``pinned/stats_pvalues.json`` were written by :func:`snapshot` with the scipy.stats /
statsmodels implementation (evalkit before the compare/leaderboard speed work, scipy 1.17.1, statsmodels 0.15.0,
numpy 2.4.6); they are compared with ``==`` (floats round-trip exactly through JSON). To regenerate after an
intended change of the statistics: ``python tests/oracles/test_stats_pinned.py --write`` (review the diff!).
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from support.helpers import CT4B, GOLD_4B, shared_or_skip  # noqa: E402

from evalkit.stats.comparison import CompareOptions, compare, significance_test  # noqa: E402
from evalkit.stats.paired import PairedValues  # noqa: E402

PINNED = Path(__file__).resolve().parent / "pinned" / "stats_pvalues.json"
AIRWAVES = CT4B / "runs" / "airwaves"
TEST_RUNS = [
    AIRWAVES / "E5_base_setup_test_TOP100.tsv",
    AIRWAVES / "predictions_BM25_test_TOP10.tsv",
    AIRWAVES / "predictions_SciBERT_test_TOP10.tsv",
    AIRWAVES / "c_6_intfloat-e5-large-v2_lr7e-6_chunked_20250527_190411_test.tsv",
]
OPTION_SETS = {
    "default": CompareOptions(),
    "pratt-basic-bonferroni": CompareOptions("pratt", 2500, 1500, "basic", 0.9, 7, "bonferroni", 0.1),
    "zsplit-bca-none": CompareOptions("zsplit", 1000, 1200, "bca", 0.99, 123, "none", 0.05),
    "odd-counts": CompareOptions("wilcox", 1003, 997, "percentile", 0.95, 2**32 - 1, "holm", 0.05),
}


def _mrr_like(rng: np.random.Generator, n: int, runs: int) -> np.ndarray:
    """``runs`` correlated per-query MRR@5-like vectors (many ties and zeros)."""
    levels = np.array([0, 1, 1 / 2, 1 / 3, 1 / 4, 1 / 5])
    base = rng.choice(levels, n, p=[0.3, 0.4, 0.12, 0.08, 0.05, 0.05])
    rows = [base]
    for i in range(1, runs):
        change = rng.random(n) < 0.15 + 0.1 * i
        rows.append(np.where(change, rng.choice(levels, n), base))
    return np.vstack(rows)


def synthetic_cases() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Name -> (values matrix, binary matrix), first row the baseline."""
    rng = np.random.default_rng(20251125)
    cases = {}
    for n in (400, 60, 40, 14, 12):
        values = _mrr_like(rng, n, 4)
        cases[f"mrr-{n}"] = (values, (values == 1).astype(np.float64))
    continuous = rng.normal(0.5, 0.2, size=(3, 30))  # no ties, no zeros: Wilcoxon's exact distribution
    cases["continuous-30"] = (continuous, (continuous > 0.5).astype(np.float64))
    continuous = rng.normal(0.5, 0.2, size=(3, 200))
    cases["continuous-200"] = (continuous, (continuous > 0.5).astype(np.float64))
    shift = np.vstack([np.linspace(0, 1, 20), np.linspace(0, 1, 20) + 0.25, np.linspace(0, 1, 20)])  # constant / zero diffs
    cases["constant-shift"] = (shift, (shift > 0.5).astype(np.float64))
    two = np.array([[0.2, 0.9], [0.4, 0.3], [0.2, 0.9]])
    cases["two-queries"] = (two, (two > 0.5).astype(np.float64))
    return cases


def _rounded_free(obj):
    """JSON-ready: tuples as lists, numpy scalars as Python numbers."""
    if isinstance(obj, dict):
        return {k: _rounded_free(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_rounded_free(v) for v in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    return obj


def synthetic_snapshot() -> dict:
    out = {}
    for case, (matrix, binary) in synthetic_cases().items():
        names = [f"r{i}" for i in range(len(matrix))]
        ids = [f"q{j}" for j in range(matrix.shape[1])]
        values = PairedValues("metric", names, ids, matrix)
        binary_values = PairedValues("success@1", names, ids, binary)
        for label, options in OPTION_SETS.items():
            if matrix.shape[1] <= 13 and label != "default":
                continue  # scipy's Wilcoxon permutation distribution (n <= 13) is slow: one option set is enough
            result = compare(values, "r0", options, binary_values)
            out[f"{case}/{label}"] = [_rounded_free(p.as_dict()) for p in result.pairs]
            for test in ("wilcoxon", "ttest", "randomization"):
                a, b = matrix[1], matrix[2]
                out[f"{case}/{label}/{test}"] = _rounded_free(significance_test(test, a, b, options).as_dict())
    return out


def real_snapshot() -> dict:
    """compare of four 4b test runs (JSON comparisons) and the leaderboard's adjacent tests of every 4b test file."""
    from evalkit.cli import main

    import contextlib
    import io
    import tempfile

    out: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "cmp.json"
        with contextlib.redirect_stderr(io.StringIO()):
            code = main(["compare", str(GOLD_4B["test"]), *map(str, TEST_RUNS), "-o", "json", "--out", str(target)])
        assert code == 0
        out["compare-4b-test"] = json.loads(target.read_text())["comparisons"]
    from evalkit.scoring.leaderboard import build_leaderboard

    for test in ("wilcoxon", "ttest", "randomization"):
        board = build_leaderboard(str(CT4B / "runs"), str(GOLD_4B["test"]), patterns=("*test*",), test=test, progress=False)
        out[f"leaderboard-4b-test/{test}"] = [
            [a.upper, a.lower, a.n, a.difference, a.p_value, a.p_adjusted, a.significant] for a in board.adjacent
        ]
    return out


def snapshot(real: bool = True) -> dict:
    out = {"synthetic": synthetic_snapshot()}
    if real:
        out["real"] = _rounded_free(real_snapshot())
    return out


def _same(expected, got, where: str) -> None:
    """Exact equality, NaN equal to NaN; names the first difference."""
    if isinstance(expected, dict):
        assert isinstance(got, dict) and set(expected) == set(got), f"{where}: keys {sorted(set(expected) ^ set(got or {}))}"
        for key in expected:
            _same(expected[key], got[key], f"{where}/{key}")
    elif isinstance(expected, list):
        assert isinstance(got, list) and len(expected) == len(got), f"{where}: length"
        for i, (e, g) in enumerate(zip(expected, got)):
            _same(e, g, f"{where}[{i}]")
    elif isinstance(expected, float) and math.isnan(expected):
        assert isinstance(got, float) and math.isnan(got), f"{where}: {got!r} != nan"
    else:
        assert expected == got and type(expected) is type(got) or (
            isinstance(expected, (int, float)) and not isinstance(expected, bool) and expected == got
        ), f"{where}: {got!r} != pinned {expected!r}"


def _json_round_trip(obj):
    return json.loads(json.dumps(obj))


def test_synthetic_statistics_equal_pinned_values():
    pinned = json.loads(PINNED.read_text())["synthetic"]
    _same(pinned, _json_round_trip(synthetic_snapshot()), "synthetic")


@pytest.mark.realdata
def test_real_compare_and_leaderboard_equal_pinned_values():
    shared_or_skip(GOLD_4B["test"])
    pinned = json.loads(PINNED.read_text())["real"]
    _same(pinned, _json_round_trip(_rounded_free(real_snapshot())), "real")


def test_native_statistics_equal_scipy_and_statsmodels_bit_for_bit():
    """The numpy paths against the libraries they replace, on random MRR-like and continuous vectors."""
    from scipy import stats
    from statsmodels.stats.contingency_tables import mcnemar
    from statsmodels.stats.multitest import multipletests

    from evalkit.stats.bootstrap import bootstrap_ci
    from evalkit.stats.correction import adjust
    from evalkit.stats.effect_size import rank_biserial
    from evalkit.stats.mcnemar import mcnemar_tests
    from evalkit.stats.ranks import average_ranks
    from evalkit.stats.ttest import paired_t_test
    from evalkit.stats.wilcoxon import wilcoxon_test

    rng = np.random.default_rng(99)
    for trial in range(12):
        n = int(rng.integers(51, 900))
        a, b = _mrr_like(rng, n, 2) if trial % 2 else rng.normal(0.5, 0.2, size=(2, n)).round(trial % 4 + 1)
        for zero_method in ("wilcox", "pratt", "zsplit"):
            mine = wilcoxon_test(a, b, zero_method)
            ref = stats.wilcoxon(a, b, zero_method=zero_method, correction=False, method="auto")
            assert (mine.statistic, mine.p_value) == (float(ref.statistic), float(ref.pvalue))
        t = stats.ttest_rel(a, b)
        assert (paired_t_test(a, b).statistic, paired_t_test(a, b).p_value) == (float(t.statistic), float(t.pvalue))
        assert average_ranks(np.abs(a - b))[0].tolist() == stats.rankdata(np.abs(a - b)).tolist()
        assert -1 <= rank_biserial(a, b) <= 1
        confidence = (0.9, 0.95, 0.99)[trial % 3]
        for method in ("percentile", "basic"):
            ref = stats.bootstrap((a - b,), np.mean, n_resamples=999, confidence_level=confidence, method=method,
                                  rng=np.random.default_rng(trial), vectorized=True).confidence_interval
            assert bootstrap_ci(a - b, 999, confidence, method, trial) == (float(ref.low), float(ref.high))
        sa, sb = (a == a.max()).astype(float), (b == b.max()).astype(float)
        exact, chi2 = mcnemar_tests(sa, sb)
        table = [[exact.details["both"], exact.details["only_baseline"]], [exact.details["only_run"], exact.details["neither"]]]
        if exact.details["only_baseline"] + exact.details["only_run"]:
            assert exact.p_value == float(mcnemar(table, exact=True).pvalue)
            assert chi2.p_value == float(mcnemar(table, exact=False, correction=True).pvalue)
        p_values = rng.random(int(rng.integers(2, 8))) ** 3
        for method in ("holm", "bonferroni"):
            assert adjust(p_values, method) == multipletests(p_values, method=method)[1].tolist()


def test_randomization_on_one_shared_stream_equals_one_stream_per_pair(monkeypatch):
    from evalkit.stats import randomization
    from evalkit.stats.randomization import randomization_test, randomization_tests

    rng = np.random.default_rng(3)
    pairs = [tuple(_mrr_like(rng, n, 2)) for n in (300, 41, 700, 5, 120)] + [(np.ones(9), np.ones(9))]
    for permutations in (1, 999, 2000, 3001):
        one_by_one = [randomization_test(a, b, permutations, 11) for a, b in pairs]
        assert randomization_tests(pairs, permutations, 11) == one_by_one
        monkeypatch.setattr(randomization, "SHARED_STREAM_BYTES", 0)  # per-pair streams: the same results
        assert randomization_tests(pairs, permutations, 11) == one_by_one
        monkeypatch.undo()


def test_compare_imports_neither_scipy_stats_nor_statsmodels():
    import subprocess

    code = (
        "import sys, numpy as np\n"
        "from evalkit.stats.comparison import CompareOptions, compare\n"
        "from evalkit.stats.paired import PairedValues\n"
        "m = np.random.default_rng(1).choice([0, 1, 0.5, 0.25], size=(3, 300))\n"
        "v = PairedValues('m', ['a', 'b', 'c'], [str(i) for i in range(300)], m)\n"
        "compare(v, 'a', CompareOptions(), PairedValues('s', ['a', 'b', 'c'], v.query_ids, (m == 1) * 1.0))\n"
        "print(sorted(k for k in sys.modules if k.startswith(('scipy.stats', 'statsmodels', 'pandas'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        raise SystemExit("usage: python tests/oracles/test_stats_pinned.py --write   (regenerates the pinned values)")
    PINNED.parent.mkdir(exist_ok=True)
    PINNED.write_text(json.dumps(snapshot(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {PINNED}")
