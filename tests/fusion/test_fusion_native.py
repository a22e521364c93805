"""Native fusion (evalkit.fusion.native) equals ranx's own ``fuse`` to 1e-12, with the same ranking, for every
native method under every normalisation: on synthetic runs full of edge cases and on real CheckThat! 4b dev runs.

ranx is called once per case in module-scoped fixtures (its numba compilation is cached on disk after the
first session). ranx sorts each query with numba's quicksort, stable only up to 15 documents, and leaves
the order of the candidates borda normalisation adds to set iteration: the synthetic runs keep tied scores
in queries of at most 15 documents, and position methods under borda are checked against ranx's own method
applied to the borda-normalised runs in evalkit's order (retrieved first, then the others by doc id descending).
"""
from __future__ import annotations

import itertools
import math
import random
import subprocess
import sys

import numpy as np
import pytest

from support.helpers import CT4B, run_cli
from evalkit import fusion
from evalkit.fusion import native as fusion_native
from evalkit.fusion import ranx_backend
from evalkit.data import Run

PARAMS = {
    "rrf": {"k": 60}, "isr": {}, "log_isr": {}, "logn_isr": {"sigma": 0.01}, "bordafuse": {}, "w_bordafuse": {"weights": [0.5, 0.2, 0.3]},
    "combsum": {}, "combmnz": {}, "combmax": {}, "combmin": {}, "combmed": {}, "combanz": {}, "combgmnz": {"gamma": 0.7},
    "wsum": {"weights": [0.5, 0.2, 0.3]}, "wmnz": {"weights": [0.5, 0.2, 0.3]}, "mixed": {"weights": [0.5, 0.2, 0.3]},
}
NORMS = fusion_native.NORMS
CASES = [(m, n) for m in PARAMS for n in NORMS]
AIRWAVES = CT4B / "runs" / "airwaves"
OTHERS = CT4B / "runs" / "other-teams"
PAIR = [AIRWAVES / "E5_base_setup_dev_TOP100.tsv", AIRWAVES / "predictions_BM25_dev_TOP10.tsv"]
TRIPLE = [AIRWAVES / "E5_HN_All__dev_TOP100.tsv", OTHERS / "paperquest_bm25_reranker_dev.tsv", OTHERS / "ysong_colbertv2_dev.tsv"]


def synthetic_runs(seed: int = 0) -> list[Run]:
    """Two scored runs and a list run: ties (rounded scores, queries of at most 15 documents), partial overlap,
    a query one run lacks, a query another answers with an empty list, single-document and constant queries,
    negative scores, and one long query (40 documents, distinct scores) beyond numba's insertion sort."""
    rng = random.Random(seed)
    docs = [f"d{i:02d}" for i in range(60)]
    runs = []
    for r in range(2):
        table = {}
        for q in range(14):
            if r == 1 and q == 3:
                continue  # a query this run does not answer
            picked = rng.sample(docs[:30], rng.choice([1, 2, 5, 9, 15]))
            if q == 5:
                table[f"q{q}"] = {d: 1.0 for d in picked}  # constant scores
            elif q == 6:
                table[f"q{q}"] = {d: -7.25 + r for d in picked[:1]}  # one document, negative
            elif q == 13:
                table[f"q{q}"] = {d: rng.uniform(-50, 50) for d in rng.sample(docs, 40)}  # long, no ties
            else:
                table[f"q{q}"] = {d: round(rng.uniform(-3, 3), 1) for d in picked}  # rounded: many ties
        runs.append(Run.from_scores(table, name=f"r{r}"))
    lists = {f"q{q}": rng.sample(docs[:30], rng.choice([1, 3, 8, 15])) for q in range(14) if q != 7}
    lists["q2"] = []  # answered with nothing
    lists["q13"] = rng.sample(docs, 25)
    runs.append(Run.from_lists(lists, name="list"))
    return runs


def ranx_runs(runs, queries, depth=None):
    return [ranx_backend.to_ranx(r, queries, depth) for r in runs]


def in_evalkit_order(normalised, originals):
    """ranx runs after borda norm, each query reordered: the run's own documents first, then the added ones by id descending."""
    from ranx import Run as RanxRun
    from ranx.normalization.common import create_empty_results_dict

    reordered = []
    for run, original in zip(normalised, originals):
        out = RanxRun()
        for q in run.keys():
            own = list(original.run[q].keys()) if q in original.run else []
            added = sorted((d for d in run.run[q].keys() if d not in set(own)), reverse=True)
            docs = create_empty_results_dict()
            for d in own + added:
                docs[d] = run.run[q][d]
            out.run[q] = docs
        reordered.append(out)
    return reordered


def zmuv_per_query(run):
    """ranx's zmuv, query by query. Its parallel loop (``_zmuv_norm_parallel``) divides by zero on a query the
    run does not answer, and numba then silently drops the documents of the queries after it in the same chunk
    (partial runs lose results); evalkit normalises the other queries as usual."""
    from ranx import Run as RanxRun
    from ranx.normalization.common import create_empty_results_dict
    from ranx.normalization.zmuv_norm import _zmuv_norm

    out = RanxRun()
    for q in run.keys():
        out.run[q] = _zmuv_norm(run.run[q]) if len(run.run[q]) else create_empty_results_dict()
    return out


def ranx_reference(runs, queries, method, norm, params, depth=None) -> dict:
    """What ranx computes (unsnapped): its ``fuse``; for position methods under borda, its method on the
    borda-normalised runs in evalkit's order; under zmuv, its method on :func:`zmuv_per_query`."""
    from ranx import fuse as ranx_fuse
    from ranx.fusion import fusion_switch
    from ranx.normalization import borda_norm

    ranx_name = fusion.get_method(method).ranx_name
    params = dict(params)
    if "weights" in params:
        params["weights"] = params["weights"][: len(runs)]
    with ranx_backend.quiet_numba():
        originals = ranx_runs(runs, queries, depth)
        if norm == "borda" and method in fusion_native.POSITION_METHODS:
            return fusion_switch(ranx_name)(in_evalkit_order(borda_norm(originals), originals), **params).to_dict()
        if norm == "zmuv":
            return fusion_switch(ranx_name)([zmuv_per_query(r) for r in originals], **params).to_dict()
        return ranx_fuse(originals, norm=norm, method=ranx_name, params=params).to_dict()


def native(runs, queries, method, norm, params, depth=None) -> Run:
    params = dict(params)
    if "weights" in params:
        params["weights"] = params["weights"][: len(runs)]
    return fusion_native.fuse_native(runs, queries, method, norm, params, depth=depth)


def compare(ours: Run, theirs: dict, queries) -> tuple[int, int]:
    """Asserts equal values to 1e-12 and equal rankings once both are snapped; returns (bit-identical, compared)."""
    got = ours.to_scores()
    mine, expected = [], []
    for q in queries:
        assert got.get(q, {}).keys() == theirs.get(q, {}).keys(), q
        mine += got.get(q, {}).values()
        expected += theirs.get(q, {}).values()
    mine_array, expected_array = np.array(mine), np.array(expected)
    far = np.abs(mine_array - expected_array) > np.maximum(1e-12, 1e-12 * np.abs(expected_array))
    assert not far.any(), (mine_array[far][:5], expected_array[far][:5])
    snapped = Run(ours.query_ids, ours.doc_ids, ours.qidx, ours.didx, fusion.snap_scores(ours.scores))
    assert snapped.to_lists() == {q: ranking for q, ranking in fusion.snapped_run(theirs, "ranx").to_lists().items() if q in got}
    return int((mine_array == expected_array).sum()), len(mine)


@pytest.fixture(scope="module")
def synthetic():
    runs = synthetic_runs()
    queries = fusion.query_union(runs, allow_partial=True)
    return runs, queries, {(m, n): ranx_reference(runs, queries, m, n, PARAMS[m]) for m, n in CASES}


@pytest.mark.parametrize("method,norm", CASES)
def test_synthetic_runs_equal_ranx(synthetic, method, norm):
    runs, queries, reference = synthetic
    compare(native(runs, queries, method, norm, PARAMS[method]), reference[method, norm], queries)


@pytest.mark.parametrize("method,norm", [("combsum", "zmuv"), ("rrf", "borda"), ("bordafuse", "min-max")])
def test_depth_and_two_runs_equal_ranx(synthetic, method, norm):
    runs, queries, _ = synthetic
    for subset in (runs[:2], runs[1:]):
        compare(native(subset, queries, method, norm, PARAMS[method], depth=4),
                ranx_reference(subset, queries, method, norm, PARAMS[method], depth=4), queries)


def real_runs(paths, every: int = 4):
    """The runs at ``paths``, every ``every``-th query of their union kept (ranx takes ~1 s per case on all of them)."""
    from evalkit.io.reading import read_run

    if not all(p.exists() for p in paths):
        pytest.skip(f"real 4b runs not found under {CT4B} (set EVALKIT_SHARED_DATA)")
    runs = [read_run(p) for p in paths]
    kept = fusion.query_union(runs, allow_partial=True)[::every]
    return [r.restrict(kept) for r in runs]


# every method twice, under two normalisations, every normalisation four times
REAL_CASES = [(m, NORMS[(i + shift) % len(NORMS)]) for i, m in enumerate(PARAMS) for shift in (0, 3)]
TRIPLE_CASES = [("rrf", "min-max"), ("combsum", "zmuv"), ("bordafuse", None), ("wmnz", "borda"), ("rrf", "borda"), ("combmed", "rank")]


@pytest.fixture(scope="module")
def real_4b():
    results = {}
    for label, paths, cases in (("pair", PAIR, REAL_CASES), ("triple", TRIPLE, TRIPLE_CASES)):
        runs = real_runs(paths)
        queries = fusion.query_union(runs, allow_partial=True)
        results[label] = runs, queries, {c: ranx_reference(runs, queries, *c, PARAMS[c[0]]) for c in cases}
    return results


@pytest.mark.realdata
@pytest.mark.parametrize("label", ["pair", "triple"])
def test_real_4b_dev_runs_equal_ranx(real_4b, label):
    runs, queries, reference = real_4b[label]
    identical = total = 0
    for (method, norm), theirs in reference.items():
        same, n = compare(native(runs, queries, method, norm, PARAMS[method]), theirs, queries)
        identical, total = identical + same, total + n
    assert total > 20_000 and identical / total > 0.999, (identical, total)


def test_every_method_and_norm_is_native():
    assert all(fusion_native.supported(m, n) for m, n in CASES)
    assert len(CASES) == 16 * 8
    assert not fusion_native.supported("condorcet", "min-max") and not fusion_native.supported("rbc", None)


def test_ties_follow_the_ranking_rule_whatever_the_run_order():
    runs = synthetic_runs(1)
    for method, norm in [("rrf", "min-max"), ("combsum", "min-max"), ("bordafuse", None), ("combmnz", "borda"), ("isr", "rank")]:
        rankings = [fusion.fuse(list(order), method, norm, allow_partial=True).to_lists() for order in itertools.permutations(runs)]
        assert all(r == rankings[0] for r in rankings[1:]), (method, norm)
    a = Run.from_lists({"q": ["d1", "d2", "d3"]})
    b = Run.from_lists({"q": ["d3", "d2", "d1"]})
    expected = {"rrf": ["d3", "d1", "d2"], "combsum": ["d3", "d2", "d1"], "bordafuse": ["d3", "d2", "d1"]}  # rrf: 1/61 + 1/63 > 2/62
    for method, ranking in expected.items():
        assert fusion.fuse([a, b], method).to_lists() == fusion.fuse([b, a], method).to_lists() == {"q": ranking}, method


def test_huge_scores_do_not_overflow():
    """Normalisations are scale-invariant: scores near +/-1e308 fuse exactly as the same run scaled by 2^-60."""
    huge = [Run.from_scores({"q1": {"d1": 1e308, "d2": -1e308, "d3": 0.0}, "q2": {"d1": 1.7e308, "d4": 1.79e308}}, name="a"),
            Run.from_scores({"q1": {"d1": -1.7e308, "d2": 1.7e308, "d3": 5.0}, "q2": {"d4": -1.79e308, "d5": 3.0}}, name="b")]
    small = [Run.from_scores({q: {d: math.ldexp(v, -60) for d, v in docs.items()} for q, docs in r.to_scores().items()}) for r in huge]
    queries = ["q1", "q2"]
    for norm in ("min-max", "min-max-inverted", "sum", "zmuv", "max", "rank", "borda"):
        for method in ("combsum", "wsum", "combmnz", "rrf", "combmed"):
            params = {"weights": [0.5, 0.5]} if method == "wsum" else {}
            big = native(huge, queries, method, norm, params)
            assert np.isfinite(big.scores).all(), (method, norm, big.scores)
            if norm != "max":  # max's 1e-9 floor on the denominator is not scale-invariant
                assert big.to_scores() == native(small, queries, method, norm, params).to_scores(), (method, norm)


def test_cli_huge_scores_fuse_to_a_readable_run(tmp_path):
    (tmp_path / "a.trec").write_text("q1 Q0 d1 1 1e308 a\nq1 Q0 d2 2 -1e308 a\nq1 Q0 d3 3 0 a\n")
    (tmp_path / "b.trec").write_text("q1 Q0 d1 1 -1.7e308 b\nq1 Q0 d2 2 1.7e308 b\nq1 Q0 d3 3 5 b\n")
    (tmp_path / "gold.qrels").write_text("q1 0 d1 1\n")
    for norm in ("min-max", "zmuv", "sum"):
        out = tmp_path / f"{norm}.trec"
        done = run_cli("fuse", "a.trec", "b.trec", "--method", "combsum", "--norm", norm, "--out", out, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        scores = [float(line.split()[4]) for line in out.read_text().splitlines()]
        assert len(scores) == 3 and all(math.isfinite(s) for s in scores), (norm, scores)
        assert run_cli("score", out, "gold.qrels", cwd=tmp_path).returncode == 0
    (tmp_path / "c.trec").write_text("q1 Q0 d1 1 1.7e308 c\nq1 Q0 d2 2 1 c\n")
    done = run_cli("fuse", "a.trec", "c.trec", "--method", "combsum", "--norm", "none", "--out", "none.trec", cwd=tmp_path)
    assert done.returncode == 2 and "overflows" in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not (tmp_path / "none.trec").exists()  # 1e308 + 1.7e308 has no float64: refused, never written as inf


@pytest.mark.parametrize("weights", ["nan,inf", "1,inf", "-inf,1"])
def test_cli_refuses_non_finite_weights(tmp_path, weights):
    for name in ("a", "b"):
        (tmp_path / f"{name}.trec").write_text(f"q1 Q0 d1 1 2 {name}\nq1 Q0 d2 2 1 {name}\n")
    done = run_cli("fuse", "a.trec", "b.trec", "--method", "wsum", "--weights", weights, "--out", "f.trec", cwd=tmp_path)
    assert done.returncode == 2 and "finite" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not (tmp_path / "f.trec").exists()


def test_parameters_checked_like_ranx():
    from evalkit.core.errors import UsageError

    runs = synthetic_runs()[:2]
    with pytest.raises(UsageError, match="gamma"):
        fusion.fuse(runs, "combgmnz", allow_partial=True)
    with pytest.raises(UsageError, match="sigma"):
        fusion.fuse(runs, "logn_isr", params={"sigma": 2}, allow_partial=True)
    with pytest.raises(UsageError, match="finite"):
        fusion.fuse(runs, "wsum", weights=[float("nan"), 1.0], allow_partial=True)


def test_fuse_does_not_import_ranx_for_native_methods():
    code = ("import sys\nfrom evalkit import fusion\nfrom evalkit.data import Run\n"
            "a = Run.from_lists({'q': ['x', 'y']}); b = Run.from_lists({'q': ['y', 'x']})\n"
            "fusion.fuse([a, b], 'rrf'); fusion.fuse([a, b], 'wsum', weights=[0.3, 0.7]); fusion.fuse([a, b], 'bordafuse', 'borda')\n"
            "print('ranx' in sys.modules, 'numba' in sys.modules, 'pandas' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "False False False", done.stdout + done.stderr


def test_ranx_methods_run_without_numba_warnings(tmp_path):
    for name in ("a", "b"):
        (tmp_path / f"{name}.trec").write_text(f"q1 Q0 d1 1 2 {name}\nq1 Q0 d2 2 1 {name}\nq2 Q0 d1 1 3 {name}\n")
    done = run_cli("fuse", "a.trec", "b.trec", "--method", "condorcet", "--out", "f.trec", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Numba" not in done.stderr and "Warning" not in done.stderr, done.stderr
