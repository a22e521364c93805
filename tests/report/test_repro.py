"""`evalkit repro`: the reproducibility measures equal repro_eval 0.5.0 (Breuer et al., SIGIR 2020) to 1e-9.

Two oracles: repro_eval's definitions transcribed below from its source (github.com/irgroup/repro_eval, v0.5.0:
repro_eval/util.py load_run and break_ties, measure/document_order.py _KTU and _rbo, measure/effectiveness.py _RMSE,
measure/overall_effects.py ER and DRI, measure/statistics.py _ttest), fed with pytrec_eval's per-topic scores, run
everywhere; and the repro-eval package itself in a pinned virtual environment (repro-eval==0.5.0 with pandas < 3: its
evaluate_run is reported to fail under pandas 3, building a DataFrame without a query_id column; with ir_measures 0.4.3
and pandas 3.1.1 it ran here), skipped where it cannot be installed.
"""
from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
from collections import OrderedDict, defaultdict
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from support.helpers import CT4B, GOLD_4B, shared_or_skip  # noqa: E402

import evalkit  # noqa: E402
from evalkit.cli import main  # noqa: E402
from evalkit.report.reproduction import repro  # noqa: E402
from evalkit.stats import repro as measures  # noqa: E402

PINNED = Path(__file__).resolve().parents[1] / "oracles" / "pinned" / "repro_eval_oracle.py"
# evalkit's label -> (pytrec_eval's name, repro_eval's ir_measures name)
METRICS = {"MAP": ("map", "AP"), "nDCG": ("ndcg", "nDCG"), "P@10": ("P_10", "P@10"), "MRR": ("recip_rank", "RR")}
TOL = 1e-9


# ----------------------------------------------------------------- repro_eval's definitions, transcribed
def load_run(path) -> dict:
    """util.load_run: {topic: {doc: score}} in file order, topics sorted."""
    nested: dict = defaultdict(dict)
    for line in Path(path).read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        nested[q][d] = float(s)
    return {t: nested[t] for t in sorted(nested)}


def break_ties(run: dict) -> dict:
    """util.break_ties: consecutive equal scores sorted by (doc, score) descending."""
    for topic, ranking in run.items():
        reordered = []
        for _, group in itertools.groupby(list(ranking.items()), lambda item: item[1]):
            reordered.extend(sorted(group, reverse=True))
        run[topic] = OrderedDict(reordered)
    return run


def ktu_oracle(orig: dict, rep: dict, trim: int = 1000) -> dict:
    from scipy.stats import kendalltau

    out = {}
    for topic in rep:
        o, r = list(orig[topic])[:trim], list(rep[topic])[:trim]
        union = sorted(set(o + r))
        out[topic] = float(round(kendalltau([union.index(d) for d in o], [union.index(d) for d in r]).correlation, 14))
    return out


def rbo_oracle(orig: dict, rep: dict, p: float = 0.95, depth: int = 1000) -> dict:
    out = {}
    for topic in rep:
        run, ideal = list(rep[topic]), list(orig[topic])
        run_set, ideal_set, score, normalizer, weight = set(), set(), 0.0, 0.0, 1.0
        for i in range(depth):
            if i < len(run):
                run_set.add(run[i])
            if i < len(ideal):
                ideal_set.add(ideal[i])
            score += weight * len(ideal_set & run_set) / (i + 1)
            normalizer += weight
            weight *= p
        out[topic] = score / normalizer
    return out


def rmse_oracle(orig: dict, rep: dict) -> float:
    diff = np.array([orig[t] for t in orig]) - np.array([rep[t] for t in orig])
    return math.sqrt(sum(np.square(diff)) / len(diff))


def mean_improvement(a: dict, b: dict) -> float:
    return np.array([a[t] - b[t] for t in a]).mean()


def er_oracle(ob, oa, rb, ra) -> float:
    return float(mean_improvement(ra, rb) / mean_improvement(oa, ob))


def dri_oracle(ob, oa, rb, ra) -> float:
    def ri(a, b):
        mean_a, mean_b = np.array(list(a.values())).mean(), np.array(list(b.values())).mean()
        return (mean_a - mean_b) / mean_b
    return float(ri(oa, ob) - ri(ra, rb))


def ttest_oracle(orig: dict, rep: dict, paired: bool) -> dict:
    """statistics.ttest: {measure: p}; NaN everywhere and identical scores give 1.0 (orig, rep: {measure: {topic: value}})."""
    from scipy.stats import ttest_ind, ttest_rel

    test = ttest_rel if paired else ttest_ind
    pvalues = {m: float(test(list(orig[m].values()), list(rep[m].values())).pvalue) for m in orig}
    if all(math.isnan(p) for p in pvalues.values()) and orig == rep:
        pvalues = dict.fromkeys(pvalues, 1.0)
    return pvalues


def topic_scores(qrels_path, run: dict) -> dict:
    """{evalkit label: {topic: value}} by pytrec_eval (the scores repro_eval's evaluate_run takes from ir_measures)."""
    import pytrec_eval

    qrels: dict = defaultdict(dict)
    for line in Path(qrels_path).read_text().splitlines():
        q, _, d, g = line.split()
        qrels[q][d] = int(g)
    names = {v[0] for v in METRICS.values()}
    evaluator = pytrec_eval.RelevanceEvaluator(dict(qrels), {"map", "ndcg", "P", "recip_rank"})
    result = evaluator.evaluate({t: dict(r) for t, r in run.items()})
    assert names <= set(next(iter(result.values())))
    return {label: {t: result[t][name] for t in sorted(result)} for label, (name, _) in METRICS.items()}


def oracle(qrels, b, a, b2, a2, qrels2=None) -> dict:
    runs = [break_ties(load_run(p)) for p in (b, a, b2, a2)]
    scores = [topic_scores(qrels if i < 2 or qrels2 is None else qrels2, r) for i, r in enumerate(runs)]
    paired = qrels2 is None
    out = {"measures": {}}
    p_values = {"baseline": ttest_oracle(scores[0], scores[2], paired), "advanced": ttest_oracle(scores[1], scores[3], paired)}
    for label in METRICS:
        ob, oa, rb, ra = (s[label] for s in scores)
        out["measures"][label] = {"er": er_oracle(ob, oa, rb, ra), "dri": dri_oracle(ob, oa, rb, ra),
                                  "p_value": {side: p_values[side][label] for side in p_values}}
        if paired:
            out["measures"][label]["rmse"] = {"baseline": rmse_oracle(ob, rb), "advanced": rmse_oracle(oa, ra)}
    if paired:
        out["ktu"] = {"baseline": ktu_oracle(runs[0], runs[2]), "advanced": ktu_oracle(runs[1], runs[3])}
        out["rbo"] = {"baseline": rbo_oracle(runs[0], runs[2]), "advanced": rbo_oracle(runs[1], runs[3])}
    return out


# ----------------------------------------------------------------- inputs
def write_run(path: Path, rng: np.random.Generator, topics: int, docs: int, depth: int, shift: float = 0.0) -> Path:
    """A TREC run with many tied scores, sorted by the one ranking rule, ties written in a random order (another tie order)."""
    lines = []
    for q in range(1, topics + 1):
        chosen = rng.choice(docs, size=depth, replace=False)
        scores = np.round(rng.random(depth) + shift * rng.random(), 1)
        rows = sorted(zip(scores.tolist(), [f"d{d}" for d in chosen]), key=lambda r: -r[0])  # ties in a random order
        lines += [f"q{q} Q0 {d} {i + 1} {s} r" for i, (s, d) in enumerate(rows)]
    path.write_text("\n".join(lines) + "\n")
    return path


def write_qrels(path: Path, rng: np.random.Generator, topics: int, docs: int, judged: int) -> Path:
    lines = [f"q{q} 0 d{d} {rng.integers(0, 3)}" for q in range(1, topics + 1) for d in rng.choice(docs, judged, replace=False)]
    path.write_text("\n".join(lines) + "\n")
    return path


def random_case(folder: Path, seed: int, topics: int = 25) -> tuple[Path, list[Path], Path]:
    rng = np.random.default_rng(seed)
    qrels = write_qrels(folder / "qrels.txt", rng, topics, 80, 20)
    qrels2 = write_qrels(folder / "qrels2.txt", rng, topics, 80, 25)
    runs = [write_run(folder / f"{n}.trec", rng, topics, 80, 40, shift) for n, shift in
            (("b", 0.0), ("a", 0.5), ("b2", 0.0), ("a2", 0.5))]
    return qrels, runs, qrels2


def assert_close(mine, theirs, what: str) -> None:
    if theirs is None or (isinstance(theirs, float) and math.isnan(theirs)):
        assert mine is None or math.isnan(mine), what
    else:
        assert mine == pytest.approx(theirs, abs=TOL, rel=0), what


def assert_equal_oracle(result, expected: dict) -> None:
    got = result.as_dict()
    for label, figures in expected["measures"].items():
        mine = got["measures"][label]
        for key in ("er", "dri"):
            assert_close(mine[key], figures[key], f"{label} {key}")
        for key in ("p_value", "rmse"):
            for side, value in figures.get(key, {}).items():
                if key == "p_value" and math.isnan(value):  # on purpose: every per-topic difference 0 is p = 1 here, NaN there
                    assert mine[key][side] == 1.0 and (mine["rmse"] is None or mine["rmse"][side] == 0), f"{label} {side}"
                    continue
                assert_close(mine[key][side], value, f"{label} {key} {side}")
    for key in ("ktu", "rbo"):
        for side, per_topic in expected.get(key, {}).items():
            for topic, value in per_topic.items():
                assert_close(result.result.ktu[side].per_topic[topic] if key == "ktu" else result.result.rbo[side].per_topic[topic],
                             value, f"{key} {side} {topic}")
            assert_close(got[key][side]["mean"], float(np.mean(list(per_topic.values()))), f"{key} {side} mean")


# ----------------------------------------------------------------- against the definitions, everywhere
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_runs_equal_repro_eval_definitions(tmp_path, seed):
    qrels, runs, qrels2 = random_case(tmp_path, seed)
    got = repro(str(qrels), *map(str, runs), metrics="map ndcg p@10 recip_rank")
    assert got.result.kind == "reproducibility"
    assert_equal_oracle(got, oracle(qrels, *runs))
    replicated = repro(str(qrels), *map(str, runs), repro_gold=str(qrels2), metrics="map ndcg p@10 recip_rank")
    assert replicated.result.kind == "replicability" and replicated.result.ktu is None
    assert_equal_oracle(replicated, oracle(qrels, *runs, qrels2))
    data = replicated.as_dict()["measures"]["MAP"]
    assert data["rmse"] is None and data["ktu"] is None and data["test"] == "unpaired t-test"


def test_measures_of_a_perfect_reproduction():
    side = measures.Side({"q1": ["a", "b", "c"], "q2": ["c", "b"]}, {"m": {"q1": 0.5, "q2": 0.25}})
    better = measures.Side({"q1": ["b", "a", "c"], "q2": ["b", "c"]}, {"m": {"q1": 0.75, "q2": 0.5}})
    result = measures.reproduction({"baseline": side, "advanced": better}, {"baseline": side, "advanced": better}, ["m"])
    m = result.measures["m"]
    assert m.er == 1.0 and m.dri == 0.0 and m.rmse == {"baseline": 0.0, "advanced": 0.0}
    assert m.p_value == {"baseline": 1.0, "advanced": 1.0}
    assert result.ktu["baseline"].mean == 1.0 and result.ktu["advanced"].mean == 1.0


def test_missing_and_empty_topics_never_crash():
    """repro_eval #5: empty or missing topics crash it; here they are listed, counted and left out."""
    orig = measures.Side({"q1": ["a", "b", "c"], "q2": ["x"], "q3": []}, {"m": {"q1": 0.5, "q2": 1.0, "q3": 0.0}})
    rep = measures.Side({"q1": ["b", "a"], "q2": ["x"], "q4": ["z"]}, {"m": {"q1": 0.25, "q2": float("nan"), "q4": 0.0}})
    result = measures.reproduction({"baseline": orig, "advanced": orig}, {"baseline": rep, "advanced": rep}, ["m"])
    ktu = result.ktu["baseline"]
    assert ktu.only_original == ["q3"] and ktu.only_reproduced == ["q4"] and ktu.undefined == ["q2"]
    assert ktu.mean == -1.0  # q1's common positions: (a, b) against (b, a)
    m = result.measures["m"]
    assert m.rmse["baseline"] == 0.25  # q1 only: the topics both sides score
    assert math.isnan(m.er)  # no improvement on either side: 0 / 0
    data = result.as_dict()
    assert data["measures"]["m"]["er"] is None and json.dumps(data)


def test_zero_original_improvement_gives_an_infinite_effect_ratio():
    b = {"q1": 0.5, "q2": 0.5}
    assert measures.effect_ratio(b, b, b, {"q1": 0.75, "q2": 0.5}) == math.inf
    assert measures.effect_ratio(b, b, b, {"q1": 0.25, "q2": 0.5}) == -math.inf


def test_cli_writes_json_with_every_measure(tmp_path, capsys):
    qrels, runs, _ = random_case(tmp_path, 4)
    out = tmp_path / "repro.json"
    args = ["repro", str(qrels), "-b", str(runs[0]), "-a", str(runs[1]), "--repro-baseline", str(runs[2]),
            "--repro-advanced", str(runs[3]), "-m", "map ndcg", "--out", str(out)]
    assert main(args) == 0
    data = json.loads(out.read_text())
    for label in ("MAP", "nDCG"):
        assert {"ktu", "rbo", "rmse", "er", "dri", "p_value"} <= set(data["measures"][label])
    assert data["manifest"]["command"] == "repro" and len(data["manifest"]["inputs"]) == 5
    assert main(args) == 2 and "exists" in capsys.readouterr().err  # never overwritten without --force
    assert main(args[:-2] + ["-o", "markdown"]) == 0
    assert "| MAP |" in capsys.readouterr().out
    bad = tmp_path / "bad.trec"
    bad.write_text("q1 Q0 d1 1\n")
    assert main(["repro", str(qrels), "-b", str(bad), "-a", str(runs[1]), "--repro-baseline", str(runs[2]),
                 "--repro-advanced", str(runs[3])]) == 2
    err = capsys.readouterr().err
    assert "bad.trec" in err and "Traceback" not in err


# ----------------------------------------------------------------- real runs
def real_case(folder: Path) -> tuple[Path, list[Path]]:
    """Two real 4b test runs as the original; as the reproduction, each "re-run" with tied scores in blocks of three
    (another tie order: the one ranking rule orders each block by doc id), all written as TREC files with the gold as qrels."""
    gold = evalkit.read_qrels(str(shared_or_skip(GOLD_4B["test"])))
    qrels = folder / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {int(g)}\n" for q, docs in gold.to_dict().items() for d, g in docs.items()))
    paths = []
    for name, tie in (("predictions_BM25_test_TOP10", 1), ("E5_base_setup_test_TOP100", 1), ("predictions_BM25_test_TOP10", 3),
                      ("E5_base_setup_test_TOP100", 3)):
        lists = evalkit.read_run(str(shared_or_skip(CT4B / "runs" / "airwaves" / f"{name}.tsv"))).to_lists()
        target = folder / f"{name}-{tie}.trec"
        target.write_text("".join(f"{q} Q0 {d} {i + 1} {(len(docs) - i - 1) // tie} r\n"
                                  for q, docs in sorted(lists.items()) for i, d in enumerate(docs)))
        paths.append(target)
    return qrels, paths


@pytest.mark.realdata
def test_real_4b_runs_equal_repro_eval_definitions(tmp_path):
    qrels, runs = real_case(tmp_path)
    got = repro(str(qrels), *map(str, runs), metrics="map ndcg p@10 recip_rank")
    assert_equal_oracle(got, oracle(qrels, *runs))
    assert 0 < got.result.ktu["advanced"].mean < 1  # the reproduction changed the tie order, not much else


# ----------------------------------------------------------------- the package itself, pinned
@pytest.fixture(scope="module")
def pinned_repro_eval(tmp_path_factory):
    folder = tmp_path_factory.mktemp("repro-eval-venv")
    subprocess.run([sys.executable, "-m", "venv", str(folder / "env")], check=True, timeout=300)
    python = folder / "env" / "bin" / "python"
    done = subprocess.run([str(python), "-m", "pip", "install", "-q", "repro-eval==0.5.0", "pandas<3"], capture_output=True, text=True,
                          timeout=900)
    if done.returncode != 0:
        pytest.skip(f"cannot install repro-eval 0.5.0 from the package index: {done.stderr.strip()[-300:]}")
    return python


def run_package(python, *paths) -> dict:
    done = subprocess.run([str(python), str(PINNED), *map(str, paths)], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def package_as_oracle(found: dict) -> dict:
    """The package's output in the shape :func:`assert_equal_oracle` reads."""
    out = {"measures": {}}
    for label, (_, name) in METRICS.items():
        out["measures"][label] = {"er": found["er"][name], "dri": found["dri"][name],
                                  "p_value": {s: found["ttest"][s][name] for s in ("baseline", "advanced")}}
        if "rmse" in found:
            out["measures"][label]["rmse"] = {s: found["rmse"][s][name] for s in ("baseline", "advanced")}
    for key in ("ktu", "rbo"):
        if key in found:
            out[key] = found[key]
    return out


@pytest.mark.slow  # builds a virtual environment and installs repro-eval 0.5.0 (about 30 s)
def test_random_runs_equal_the_repro_eval_package(pinned_repro_eval, tmp_path):
    qrels, runs, qrels2 = random_case(tmp_path, 7)
    got = repro(str(qrels), *map(str, runs), metrics="map ndcg p@10 recip_rank")
    assert_equal_oracle(got, package_as_oracle(run_package(pinned_repro_eval, qrels, *runs)))
    replicated = repro(str(qrels), *map(str, runs), repro_gold=str(qrels2), metrics="map ndcg p@10 recip_rank")
    assert_equal_oracle(replicated, package_as_oracle(run_package(pinned_repro_eval, qrels, *runs, qrels2)))


@pytest.mark.slow
@pytest.mark.realdata
def test_real_4b_runs_equal_the_repro_eval_package(pinned_repro_eval, tmp_path):
    qrels, runs = real_case(tmp_path)
    got = repro(str(qrels), *map(str, runs), metrics="map ndcg p@10 recip_rank")
    assert_equal_oracle(got, package_as_oracle(run_package(pinned_repro_eval, qrels, *runs)))


@pytest.mark.slow
def test_where_the_package_crashes_evalkit_does_not(pinned_repro_eval, tmp_path):
    """The differences the guide's table names: a topic only the reproduction ranks (repro_eval #5's kind of crash) and
    rankings of unequal length raise in repro_eval; evalkit lists the topic and compares the common positions."""
    qrels, runs, _ = random_case(tmp_path, 8)
    extra = tmp_path / "extra.trec"
    extra.write_text(runs[2].read_text() + "q99 Q0 d1 1 1.0 r\n")
    short = tmp_path / "short.trec"
    short.write_text("".join(runs[2].read_text().splitlines(keepends=True)[:-5]))
    for rep, crashed in ((extra, {"ktu": "AttributeError", "rbo": "AttributeError"}), (short, {"ktu": "ValueError"})):
        done = subprocess.run([str(pinned_repro_eval), str(PINNED), "--crashes", str(qrels), str(runs[0]), str(runs[1]), str(rep),
                               str(runs[3])], capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stderr[-2000:]
        assert {k: v for k, v in json.loads(done.stdout).items() if v} == crashed
        got = repro(str(qrels), str(runs[0]), str(runs[1]), str(rep), str(runs[3]), metrics="map")
        ktu = got.result.ktu["baseline"]
        assert math.isfinite(ktu.mean) and ktu.only_reproduced == (["q99"] if rep == extra else [])


def test_hostile_run_names_are_text_in_markdown(tmp_path, capsys):
    qrels, runs, _ = random_case(tmp_path, 9)
    hostile = tmp_path / "<script>x|y`[a](b)`.trec"
    hostile.write_bytes(runs[3].read_bytes())
    assert main(["repro", str(qrels), "-b", str(runs[0]), "-a", str(runs[1]), "--repro-baseline", str(runs[2]),
                 "--repro-advanced", str(hostile), "-m", "map"]) == 0
    out = capsys.readouterr().out
    assert "<script>" not in out and "&lt;script&gt;x&#124;y\\`\\[a\\](b)\\`" in out
