"""`evalkit fuse`: identical to ranx's own fuse on the real AIRwaves dev runs; alpha fusion by hand; refusals."""
from __future__ import annotations

import ast
import csv
import json

import pytest

from support.helpers import CT4B, GOLD_4B, run_cli, shared_or_skip
from evalkit import fusion
from evalkit.cli import main
from evalkit.data import Run
from evalkit.core.errors import PartialRunError, UsageError
from evalkit.io.reading import read_qrels, read_run

AIRWAVES = CT4B / "runs" / "airwaves"
DEV_RUNS = [AIRWAVES / "E5_base_setup_dev_TOP100.tsv", AIRWAVES / "predictions_BM25_dev_TOP10.tsv", AIRWAVES / "predictions_SciBERT_dev_TOP10.tsv"]


def ranx_run_from_file(path):
    """ranx Run straight from the file, independently of evalkit: score n - position (first occurrence)."""
    from ranx import Run as RanxRun

    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    data = {}
    for row in rows:
        ids = list(dict.fromkeys(ast.literal_eval(row["preds"])))
        data[row["post_id"]] = {doc: float(len(ids) - i) for i, doc in enumerate(ids)}
    return RanxRun(data)


@pytest.fixture(scope="module")
def dev_runs():
    return [read_run(shared_or_skip(p)) for p in DEV_RUNS]


@pytest.fixture(scope="module")
def ranx_dev_runs(dev_runs):
    return [ranx_run_from_file(p) for p in DEV_RUNS]


def assert_same(ours: Run, theirs) -> None:
    expected = theirs.to_dict()
    got = ours.to_scores()
    assert set(got) == set(expected)
    for query, docs in expected.items():
        assert got[query].keys() == docs.keys(), query
        for doc, value in docs.items():
            assert got[query][doc] == pytest.approx(value, rel=1e-11, abs=1e-15)  # known difference: ours are snapped to 12 digits


@pytest.mark.realdata
@pytest.mark.parametrize(
    "method,norm,params,ranx_method,ranx_params",
    [
        ("rrf", "min-max", {}, "rrf", {"k": 60}),
        ("rrf", None, {"k": 10}, "rrf", {"k": 10}),
        ("wsum", "min-max", {"weights": [0.5, 0.2, 0.3]}, "wsum", {"weights": [0.5, 0.2, 0.3]}),
    ],
)
def test_equals_ranx_fuse_on_airwaves_dev(dev_runs, ranx_dev_runs, method, norm, params, ranx_method, ranx_params):
    from ranx import fuse as ranx_fuse

    ours = fusion.fuse(dev_runs, method, norm, params=dict(params))
    theirs = ranx_fuse(ranx_dev_runs, norm=norm, method=ranx_method, params=ranx_params)
    assert_same(ours, theirs)
    assert list(ours.query_ids) == list(dev_runs[0].query_ids)  # the first run's query order


@pytest.mark.realdata
def test_cli_writes_trec_run_and_manifest(tmp_path, capsys, ranx_dev_runs):
    """In-process (ranx's typed containers cost seconds of JIT per new process)."""
    from ranx import fuse as ranx_fuse

    out = tmp_path / "fused.trec"
    assert main(["fuse", *map(str, DEV_RUNS), "--method", "rrf", "--rrf-k", "30", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert err.count("has no scores (a list submission): fused through its ranks") == 3
    fused = read_run(out)
    assert fused.source.format == "trec-run" and fused.is_scored
    assert_same(fused, ranx_fuse(ranx_dev_runs, norm="min-max", method="rrf", params={"k": 30}))
    manifest = json.loads((tmp_path / "fused.trec.manifest.json").read_text())
    assert manifest["command"] == "fuse" and len(manifest["inputs"]) == 3
    assert manifest["options"]["method"] == "rrf" and manifest["options"]["params"] == {"k": 30}
    first = out.read_text().splitlines()[0].split()
    assert first[1] == "Q0" and first[3] == "1" and first[5] == "rrf"


@pytest.mark.realdata
def test_optimize_weights_on_dev_gold(dev_runs, tmp_path, capsys):
    gold = read_qrels(shared_or_skip(GOLD_4B["dev"]))
    best = fusion.optimize(dev_runs[::2], gold, "wsum", "min-max", "mrr@5", step=0.5, show_progress=False)
    weights = [float(w) for w in best["weights"]]
    assert len(weights) == 2 and sum(weights) == pytest.approx(1)
    from evalkit.tasks import get_task

    task = get_task("checkthat2025-4b")
    chosen = task.score(fusion.fuse(dev_runs[::2], "wsum", params=best), gold).official_value
    for w in (0.0, 0.5, 1.0):
        other = task.score(fusion.fuse(dev_runs[::2], "wsum", weights=[w, 1 - w]), gold).official_value
        assert chosen >= other - 1e-12
    args = ["fuse", str(DEV_RUNS[0]), str(DEV_RUNS[2]), "--method", "wsum", "--optimize-on", str(GOLD_4B["dev"]), "--step", "0.5",
            "--out", str(tmp_path / "o.trec")]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert f"for MRR@5: weights = [{weights[0]}, {weights[1]}]" in out
    assert f"MRR@5 {chosen:.4f}" in out


@pytest.mark.realdata
def test_different_query_sets_are_refused(tmp_path):
    out = tmp_path / "f.trec"
    dev, test = shared_or_skip(AIRWAVES / "predictions_BM25_dev_TOP10.tsv"), AIRWAVES / "predictions_BM25_test_TOP10.tsv"
    result = run_cli("fuse", dev, test, "--out", out)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert ("the runs answer different query sets "
            "(predictions_BM25_dev_TOP10: 1400, predictions_BM25_test_TOP10: 1446; 151 in common, 2695 in all)") in result.stderr
    assert not out.exists()
    runs = [read_run(dev), read_run(test)]
    union = fusion.fuse(runs, "combsum", allow_partial=True)
    assert len(union.query_ids) == 2695
    only_dev = next(q for q in runs[0].query_ids if q not in set(runs[1].query_ids))
    assert union.to_lists()[only_dev] == runs[0].to_lists()[only_dev]  # the other run adds nothing there


@pytest.mark.parametrize(
    "args,message",
    [
        (("--method", "nope"), "unknown fusion method 'nope'"),
        (("--norm", "nope"), "unknown normalisation 'nope'"),
        (("--method", "rrf", "--weights", "1,2"), "fusion method rrf takes no weights"),
        (("--method", "wsum", "--weights", "1,2,3"), "3 weights for 2 runs"),
        (("--method", "rrf", "--rrf-k", "0"), "RRF k must be positive"),
        (("--method", "posfuse",), "fusion method posfuse is trained on a gold file: give --optimize-on GOLD"),
        (("--alpha", "0.3"), "--alpha applies to --method alpha"),
        (("--method", "combsum", "--optimize-on", str(GOLD_4B["dev"])), "fusion method combsum has nothing to optimise"),
        pytest.param(("--method", "wsum", "--optimize-on", str(GOLD_4B["dev"]), "--metric", "cc-bpref"), "metric CC-Bpref cannot be optimised through ranx",
                     marks=pytest.mark.realdata),  # the metric is checked against the gold file, so it must be there
        (("--metric", "mrr@5"), "--metric applies to --optimize-on"),
    ],
)
def test_bad_options(request, tmp_path, args, message):
    if request.node.get_closest_marker("realdata"):
        shared_or_skip(GOLD_4B["dev"])
    out = tmp_path / "f.trec"
    result = run_cli("fuse", *DEV_RUNS[1:], *args, "--out", out)
    assert result.returncode == 2 and result.stderr.strip().splitlines() == [result.stderr.strip()], result.stderr
    assert message in result.stderr
    assert not out.exists()


def test_llm_rank_norm():
    assert fusion.llm_rank_norm(1) == [1.0]
    assert fusion.llm_rank_norm(5) == [1.0, 0.75, 0.5, 0.25, 0.0]


def test_alpha_fusion_by_hand():
    ce = Run.from_scores({"q": {"a": 3.0, "b": 1.0, "c": 2.0, "x": 0.0}})
    llm = Run.from_lists({"q": ["c", "a", "b"]})
    fused = fusion.alpha_fusion(ce, llm, alpha=0.4).to_scores()["q"]
    # CE_norm: a 1, c 2/3, b 1/3, x 0 ; LLM_norm: c 1, a 0.5, b 0, x (absent) 0
    assert fused == pytest.approx({"a": 0.4 + 0.3, "c": 0.4 * 2 / 3 + 0.6, "b": 0.4 / 3, "x": 0.0})
    assert fusion.alpha_fusion(ce, llm, alpha=1.0).to_lists()["q"] == ["a", "c", "b", "x"]
    assert fusion.alpha_fusion(ce, llm, alpha=0.0).to_lists()["q"] == ["c", "a", "x", "b"]  # b and x tie at 0: doc id descending
    with pytest.raises(UsageError):
        fusion.alpha_fusion(ce, llm, alpha=1.5)
    with pytest.raises(PartialRunError):
        fusion.fuse([ce, Run.from_lists({"other": ["a"]})], "alpha")


def test_min_max_matches_ranx():
    from ranx import Run as RanxRun
    from ranx.normalization import min_max_norm

    scores = {"q": {"a": 2.5, "b": -1.0, "c": 0.25}, "single": {"z": 4.0}}
    theirs = min_max_norm(RanxRun(scores)).to_dict()
    for query, docs in scores.items():
        assert fusion.min_max(docs) == pytest.approx(dict(theirs[query]))


def test_ties_do_not_depend_on_the_order_of_the_runs():
    """RRF sums equal up to float-addition order tie; the ranking rule (doc id descending) orders them."""
    import itertools

    ranks = [(1, 2, 8), (2, 8, 1), (8, 1, 2)]  # d1, d2, d3: every sum is 1/61 + 1/62 + 1/68
    assert (1 / 61 + 1 / 62) + 1 / 68 != (1 / 62 + 1 / 68) + 1 / 61  # in floats the sums differ in the last bit
    runs = []
    for j in range(3):
        docs = [f"filler{i}" for i in range(8)]
        for d, r in enumerate(ranks, start=1):
            docs[r[j] - 1] = f"d{d}"
        runs.append(Run.from_scores({"q": {doc: 100.0 - i for i, doc in enumerate(docs)}}, name=f"r{j}"))
    for order in itertools.permutations(runs):
        fused = fusion.fuse(list(order), "rrf").to_lists()["q"]
        assert [d for d in fused if d.startswith("d")] == ["d3", "d2", "d1"]
    assert fusion.snap_scores([0.1 + 0.2, 0.0, float("inf")]).tolist() == [0.3, 0.0, float("inf")]
