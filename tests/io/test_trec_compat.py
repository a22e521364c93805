"""trec_eval compatibility: what trec_eval reads, its query-set rules, -M, and its -q output.

Synthetic files written here exercise the features of trec_eval's own test
suite (tabs, blanks in the score field, junk after the run tag, comment
lines, '#' inside MS MARCO ids). Where the trec_eval 10 binary is built at
``TREC_EVAL`` (or ``$EVALKIT_TREC_EVAL``), evalkit's ``--output trec_eval``
lines are compared with the binary's, line for line; where its test folder
is there too, its expected ``out.test*`` files are reproduced. Both skip
cleanly elsewhere: no PyPI or Debian package ships trec_eval's C sources
(pytrec_eval's sdists download them from GitHub while building), so CI has
no binary; tests/oracles/test_trec_eval_measures.py holds trec_eval 10's printed
values instead. To run these: build usnistgov/trec_eval 10.0 (``make``) and
set ``EVALKIT_TREC_EVAL=/path/to/trec_eval`` (its ``test/`` folder beside it).
"""
from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import numpy as np
import pytest

from support.helpers import run_cli
from evalkit.report import text as render
from evalkit.core.errors import InputError
from evalkit.io.formats import tables
from evalkit.io.reading import read_qrels, read_run
from evalkit.tasks import get_task

TREC_EVAL = Path(os.environ.get("EVALKIT_TREC_EVAL", "") or "trec_eval-not-configured")  # a trec_eval 10 binary, beside its test/ folder
TREC_TESTS = TREC_EVAL.parent / "test"
QRELS = "q1 0 a 1\nq1 0 b 0\nq1 0 c 2\nq2 0 d 1\nq2 0 e 0\nq3 0 f 0\n"


def pad(text: str, sep: str = " ", qrels: bool = False) -> str:
    """``text`` followed by valid lines of other queries until the file takes the pyarrow path."""
    line = "zpad{i}{s}0{s}x{i}{s}0\n" if qrels else "zpad{i}{s}Q0{s}x{i}{s}1{s}1.0{s}pad\n"
    lines = [line.format(i=i, s=sep) for i in range(tables.FAST_PATH_BYTES // 10)]
    return text + "".join(lines)


def read_both(tmp_path: Path, text: str, qrels: bool = False, sep: str = " "):
    """Read ``text`` small (Python path) and padded past FAST_PATH_BYTES; the outcome of each (object or error text)."""
    reader = read_qrels if qrels else read_run
    outcomes = []
    for big in (False, True):
        path = tmp_path / ("big" if big else "small")
        path.write_text(pad(text, sep, qrels) if big else text)
        assert (path.stat().st_size >= tables.FAST_PATH_BYTES) == big
        try:
            outcomes.append(reader(path))
        except InputError as exc:
            outcomes.append(str(exc).replace(str(path), "FILE"))
    return outcomes


def restricted(obj, prefix="zpad"):
    """A run or qrels as a dict without the padding queries."""
    data = obj.to_scores() if hasattr(obj, "to_scores") else obj.to_dict()
    return {q: v for q, v in data.items() if not q.startswith(prefix)}


# ---------------------------------------------------------------- reading


def test_fields_after_the_run_tag_are_ignored_with_one_warning(tmp_path):
    text = "q1\tQ0\td2\t99\t  2.5\tSTANDARD more junk at\nq1\tQ0\td1\t98\t  1.5\tSTANDARD\nq2 Q0 d3 1 0.5 tag extra\n"
    for run in read_both(tmp_path, text):
        assert restricted(run) == {"q1": {"d2": 2.5, "d1": 1.5}, "q2": {"d3": 0.5}}
        assert run.source.format == "trec-run" and run.tag in ("STANDARD", "pad", "tag")
    small, big = read_both(tmp_path, text)
    assert small.warnings == (f"{tmp_path / 'small'}: 2 lines have fields after the run tag, first on line 1; "
                              "they are ignored, as trec_eval does",)
    assert len(big.warnings) == 1 and "2 lines have fields after the run tag" in big.warnings[0]


def test_consistent_extra_columns_keep_the_fast_path(tmp_path):
    path = tmp_path / "run.trec"
    path.write_text(pad("").replace(" pad\n", " pad junk\n"))
    run = read_run(path)
    assert run.warnings and f"{run.n_rows} lines have fields after the run tag" in run.warnings[0]


@pytest.mark.parametrize("sep", [" ", "\t"])
def test_fewer_than_six_fields_is_an_error_on_both_paths(tmp_path, sep):
    text = f"q1{sep}Q0{sep}a{sep}1{sep}1.0{sep}t\nq1{sep}Q0{sep}b{sep}2{sep}0.5\n"
    assert read_both(tmp_path, text, sep=sep) == ["FILE:2: expected 6 whitespace-separated fields, found 5"] * 2


def test_comment_lines_are_skipped_and_hash_inside_ids_is_not_a_comment(tmp_path):
    run_text = "# a comment\n  # an indented comment\nq1 Q0 msmarco_v2.1_doc_50_2286987788#13_3087841662 1 0.7 r\n#q1 Q0 x 2 0.5 r\n"
    for run in read_both(tmp_path, run_text):
        assert restricted(run) == {"q1": {"msmarco_v2.1_doc_50_2286987788#13_3087841662": 0.7}}
    qrels_text = "# comment here\nq1 0 CR#93E-1860 1\n# and comment here\nq1 0 d2 0\n"
    for qrels in read_both(tmp_path, qrels_text, qrels=True):
        assert restricted(qrels) == {"q1": {"CR#93E-1860": 1, "d2": 0}}


def test_a_file_opening_with_comments_is_still_recognised(tmp_path):
    path = tmp_path / "run.txt"
    path.write_text("".join(f"# header line {i}\n" for i in range(10)) + "q1 Q0 d1 1 1.0 r\n")
    assert read_run(path).source.format == "trec-run"
    path.write_text("# judged by\n# someone\nq1 0 d1 1\n")
    assert read_qrels(path).source.format == "trec-qrels"


def test_duplicate_judgment_line_counts_comment_lines(tmp_path):
    for big in (False, True):
        path = tmp_path / "q.txt"
        text = "# c\nq1 0 a 1\n\n# c\nq1 0 a 0\n"
        path.write_text(pad(text, qrels=True) if big else text)
        with pytest.raises(InputError, match=r":5: the same \(query, document\) pair is judged twice"):
            read_qrels(path)


BAD_NUMBERS = ["nan", "NaN", "N/A", "null", "NA", "#N/A", "-1.#IND", "inf", "-Infinity", "1e400", "1_0", "high", "\uff11", "0x10", "1,5"]


@pytest.mark.parametrize("sep", [" ", "\t"])
@pytest.mark.parametrize("token", BAD_NUMBERS)
def test_bad_scores_and_grades_are_refused_alike_on_both_paths(tmp_path, token, sep):
    run_text = f"q1{sep}Q0{sep}a{sep}1{sep}0.5{sep}t\nq1{sep}Q0{sep}b{sep}2{sep}{token}{sep}t\n"
    small, big = read_both(tmp_path, run_text, sep=sep)
    assert small == big and small.startswith(f"FILE:2: score {token!r} is not a")
    qrels_text = f"q1{sep}0{sep}a{sep}1\nq1{sep}0{sep}b{sep}{token}\n"
    small, big = read_both(tmp_path, qrels_text, qrels=True, sep=sep)
    assert small == big and small.startswith(f"FILE:2: grade {token!r} is not a")


@pytest.mark.parametrize("sep", [" ", "\t"])
def test_empty_score_field_is_refused_alike_on_both_paths(tmp_path, sep):
    text = f"q1{sep}Q0{sep}a{sep}1{sep}0.5{sep}t\nq1{sep}Q0{sep}b{sep}2{sep}{sep}t\n"  # two delimiters: whitespace splitting sees 5 fields
    assert read_both(tmp_path, text, sep=sep) == ["FILE:2: expected 6 whitespace-separated fields, found 5"] * 2


def test_number_spellings_read_the_same_on_both_paths(tmp_path):
    tokens = ["+1", "1.", ".5", "-.5", "1e-5", "1E5", "-0", "007", "4.9e-324", "0.1", "123456789.123456789"]
    text = "".join(f"q1 Q0 d{i} 1 {t} r\n" for i, t in enumerate(tokens))
    small, big = read_both(tmp_path, text)
    assert restricted(small) == restricted(big) == {"q1": {f"d{i}": float(t) for i, t in enumerate(tokens)}}


def test_random_tokens_agree_on_both_paths(tmp_path):
    rng = random.Random(7)
    pieces = ["1", "0", "9", ".", "e", "E", "-", "+", "5", "n", "a", "N", "#", "_", "x"]
    for _ in range(30):
        token = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 5)))
        small, big = read_both(tmp_path, f"q1 Q0 d 1 {token} r\n")
        if isinstance(small, str):
            assert small == big, token
        else:
            assert restricted(small) == restricted(big), token


@pytest.mark.parametrize("compiled", [True, False])
def test_clean_large_files_take_the_fast_path_and_doubtful_ones_do_not(tmp_path, monkeypatch, compiled):
    """Compiled, every well-formed large file is read in one pass of C (double blanks too); without the kernel, pyarrow
    takes the clean ones and leaves a double blank to the Python parser."""
    from evalkit.native import kernels

    if compiled and kernels.native is None:
        pytest.skip("evalkit.native._native was not built")
    if not compiled:
        monkeypatch.setattr(kernels, "native", None)
    calls = []
    name = "_compiled_whitespace" if compiled else "_arrow_whitespace"
    original = getattr(tables, name)
    monkeypatch.setattr(tables, name, lambda *a: calls.append(original(*a)) or calls[-1])
    path = tmp_path / "run.trec"
    path.write_text(pad("# comment\nq1 Q0 a#1 1 0.5 r\n"))
    first = read_run(path)
    path.write_text(pad("q1 Q0 a 1 0.5 r\nq1  Q0 b 2 0.4 r\n"))  # a double blank
    second = read_run(path)
    assert calls[0] is not None and (calls[1] is not None) == compiled
    assert first.n_rows == second.n_rows - 1


# ---------------------------------------------------------------- options and output


def score(run_text: str, qrels_text: str, tmp_path: Path, metrics: str, **options):
    (tmp_path / "run.trec").write_text(run_text)
    (tmp_path / "qrels.txt").write_text(qrels_text)
    run, qrels = read_run(tmp_path / "run.trec"), read_qrels(tmp_path / "qrels.txt")
    return get_task("trec").score(run, qrels, metrics, allow_partial=True, **options)


def test_depth_equals_cutting_the_run(tmp_path):
    rng = np.random.default_rng(1)
    lines = [f"q{q} Q0 d{d} 0 {rng.integers(0, 5)} r" for q in range(1, 4) for d in rng.permutation(30)]
    qrels_text = "".join(f"q{q} 0 d{d} {rng.integers(0, 3)}\n" for q in range(1, 4) for d in range(0, 30, 2))
    full = score("\n".join(lines) + "\n", qrels_text, tmp_path, "all_trec", depth=7)
    ranked = read_run(tmp_path / "run.trec").to_lists(depth=7)
    kept = [f"{q} Q0 {d} 0 {7 - i} r" for q, docs in ranked.items() for i, d in enumerate(docs)]
    cut = score("\n".join(kept) + "\n", qrels_text, tmp_path, "all_trec")
    assert full.values == cut.values
    assert "depth: only the top 7 documents of each ranking count (trec_eval -M 7)" in full.policy_lines()
    assert full.values["NumRet"] == 21


def test_trec_eval_output_lines(tmp_path):
    run = "q2 Q0 d 1 1.0 myrun\nq1 Q0 x 1 3.0 myrun\nq1 Q0 c 2 2.0 myrun\nq1 Q0 a 3 2.0 myrun\n"
    result = score(run, QRELS, tmp_path, "mrr@1 P_5 num_ret map gm_map runid num_q", missing="zero")  # printed in trec_eval's order
    assert render.as_trec_eval(result).splitlines() == [
        "num_ret               \tq1\t3", "map                   \tq1\t0.5833", "P_5                   \tq1\t0.4000",
        "MRR@1                 \tq1\t0.0000",
        "num_ret               \tq2\t1", "map                   \tq2\t1.0000", "P_5                   \tq2\t0.2000",
        "MRR@1                 \tq2\t1.0000",
        "num_ret               \tq3\t0", "map                   \tq3\t0.0000", "P_5                   \tq3\t0.0000",
        "MRR@1                 \tq3\t0.0000",
        "runid                 \tall\tmyrun", "num_q                 \tall\t3", "num_ret               \tall\t4",
        "map                   \tall\t0.5278", "gm_map                \tall\t0.0180", "P_5                   \tall\t0.2000",
        "MRR@1                 \tall\t0.3333",
    ]  # ties: c before a (doc id descending); q3 is missing from the run and has no relevant document (-c: it counts)


def test_cli_trec_eval_output_and_depth_in_manifest(tmp_path):
    (tmp_path / "run.trec").write_text("q1 Q0 a 1 2.0 r extra\nq1 Q0 b 2 1.0 r\nq2 Q0 d 1 1.0 r\nq3 Q0 f 1 1.0 r\n")
    (tmp_path / "qrels.txt").write_text(QRELS)
    out = tmp_path / "out.txt"
    result = run_cli("score", tmp_path / "run.trec", tmp_path / "qrels.txt", "--task", "trec", "-m", "P_1 recip_rank",
                     "--output", "trec_eval", "--depth", "1", "--out", out)
    assert result.returncode == 0, result.stderr
    assert "1 lines have fields after the run tag" in result.stderr
    assert out.read_text().splitlines()[-2:] == ["recip_rank            \tall\t0.6667", "P_1                   \tall\t0.6667"]  # trec_eval's order
    import json

    assert json.loads((tmp_path / "out.txt.manifest.json").read_text())["options"]["depth"] == 1
    bad = run_cli("score", tmp_path / "run.trec", tmp_path / "qrels.txt", "--depth", "0")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


# ---------------------------------------------------------------- against the trec_eval binary


def trec_eval_lines(qrels: Path, run: Path, *flags: str) -> list[str]:
    result = subprocess.run([str(TREC_EVAL), "-q", "-m", "all_trec", *flags, str(qrels), str(run)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def evalkit_lines(qrels: Path, run: Path, missing="skip", level=1, depth=None, metrics="all_trec", zscores=None,
                  judgment_groups=False) -> list[str]:
    from evalkit import api

    from evalkit.metrics.trec_names import expand_trec_eval

    result = api.score(str(run), str(qrels), task="trec", metrics=expand_trec_eval(metrics, judgment_groups), missing=missing,
                       relevance_level=level, depth=depth,
                       allow_partial=True, judgment_groups=judgment_groups,
                       zscores=None if zscores is None else str(qrels.parent / zscores))
    return render.as_trec_eval(result.task_score).splitlines()


def comparable(theirs: list[str], ours: list[str]) -> list[str]:
    names = {line.split("\t")[0] for line in ours}
    return [line for line in theirs if line.split("\t")[0] in names]


def synthetic_files(folder: Path, seed: int, every_query: bool) -> tuple[Path, Path]:
    """Graded qrels (grades -1..3, some queries with nothing relevant) and a run with ties, unjudged
    documents, comments, extra fields, a run-only query and (unless ``every_query``) missing queries."""
    rng = random.Random(seed)
    qrels, run = ["# qrels written by a test\n"], ["# a run\n"]
    for q in range(12):
        judged = rng.sample(range(60), rng.randint(3, 25))
        top = 0 if q % 5 == 0 else 3
        qrels += [f"t{q} 0 doc{d:03d} {rng.randint(-1, top)}\n" for d in judged]
        if every_query or q % 4:
            docs = rng.sample(range(80), rng.randint(1, 60))
            extra = " junk" if q % 3 == 0 else ""
            run += [f"t{q}\tQ0\tdoc{d:03d}\t0\t {rng.randint(0, 9) / 4}\tsynth{extra}\n" for d in docs]
    run.append("t99 Q0 doc001 1 1.0 synth\n")
    (folder / "qrels").write_text("".join(qrels))
    (folder / "run").write_text("".join(run))
    return folder / "qrels", folder / "run"


needs_binary = pytest.mark.skipif(not TREC_EVAL.exists(), reason=f"trec_eval not built at {TREC_EVAL}")


@needs_binary
@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("flags, options", [
    ((), {}),
    (("-c",), {"missing": "zero"}),
    (("-c", "-M5"), {"missing": "zero", "depth": 5}),
    (("-l2",), {"level": 2}),
    (("-c", "-l3", "-M20"), {"missing": "zero", "level": 3, "depth": 20}),
])
def test_synthetic_files_match_the_binary_line_for_line(tmp_path, seed, flags, options):
    qrels, run = synthetic_files(tmp_path, seed, every_query="-c" not in flags)  # trec_eval 10 exits 4 without -c on missing queries
    ours = evalkit_lines(qrels, run, **options)
    theirs = comparable(trec_eval_lines(qrels, run, *flags), ours)
    # under -c trec_eval's num_rel of 'all' counts the qrels' grades > 0 whatever -l (te_calc_avg_num_rel): evalkit's
    # trec_eval output prints the same (its own outputs sum the per-query num_rel)
    assert len(ours) > 300 and ours == theirs


@needs_binary
@pytest.mark.parametrize("in_order", [True, False])
def test_a_large_run_judged_from_its_file_matches_the_binary_line_for_line(tmp_path, monkeypatch, in_order):
    """A run of more than a MiB is judged straight from its file (evalkit/io/streamed.py): -q -m all_trec as the binary's,
    its rows written in rank order (ranked by their place) or shuffled (counted and sorted), with ties."""
    from evalkit.native import kernels

    if not kernels.COMPILED:
        pytest.skip("evalkit.native._native was not built")
    rng = random.Random(4)
    qrels, run = [], []
    for q in range(700):
        docs = rng.sample(range(3000), 100)
        scores = sorted((rng.randint(0, 40) / 8 for _ in docs), reverse=True)
        rows = sorted(zip(scores, [f"doc{d}" for d in docs]), key=lambda row: (-row[0], [-b for b in row[1].encode()] + [1]))
        if not in_order:
            rng.shuffle(rows)
        run += [f"t{q} Q0 {doc} {i} {score} big\n" for i, (score, doc) in enumerate(rows)]
        qrels += [f"t{q} 0 doc{d} {rng.randint(-1, 3)}\n" for d in set(rng.sample(docs, 12) + rng.sample(range(3000), 5))]
    (tmp_path / "qrels").write_text("".join(qrels))
    (tmp_path / "run").write_text("".join(run))
    assert (tmp_path / "run").stat().st_size > 1 << 20
    calls = []
    judge_file = kernels.judge_file
    monkeypatch.setattr(kernels, "judge_file", lambda *args: calls.append(1) or judge_file(*args))
    ours = evalkit_lines(tmp_path / "qrels", tmp_path / "run", missing="zero")
    assert calls == [1]
    theirs = comparable(trec_eval_lines(tmp_path / "qrels", tmp_path / "run", "-c"), ours)
    assert len(ours) > 30000 and ours == theirs


TEST_SUITE = [  # trec_eval's quicktest: expected file, qrels, results, evalkit options (trec_eval flags)
    ("out.test", "qrels.test", "results.test", {"metrics": "trec_eval"}),
    ("out.test", "qrels.test.with-comments", "results.test", {"metrics": "trec_eval"}),
    ("out.comment.test", "qrels.comment.test", "results.comment.test", {"metrics": "trec_eval"}),
    ("out.test.a", "qrels.test", "results.test", {}),  # -m all_trec
    ("out.test.aq", "qrels.test", "results.test", {}),  # -m all_trec -q
    ("out.test.aqc", "qrels.test", "results.trunc", {"missing": "zero"}),  # -c
    ("out.test.aqcM", "qrels.test", "results.trunc", {"missing": "zero", "depth": 100}),  # -c -M100
    ("out.test.aql", "qrels.rel_level", "results.test", {"level": 2, "metrics": ["all_trec", "relstring.20"]}),  # -l2 -mrelstring.20
    ("out.test.meas_params", "qrels.test", "results.test", {"metrics": [  # the -m parameter forms
        "iprec_at_recall..10,.20,.25,.75,.50", "P.5,7,3", "recall.20,2000", "Rprec_mult.5.0,0.2,0.35", "utility.2,-1,0,0",
        "11pt_avg..25,.5,.75", "ndcg.1=3,2=9,4=4.5", "ndcg_cut.10,20,23.4", "success.2,5,20"]}),
    ("out.test.aqZ", "qrels.test", "results.test", {"zscores": "zscores_file"}),  # -Z
    ("out.test.qrels_jg", "qrels.123", "results.test", {"metrics": "qrels_jg", "judgment_groups": True}),  # -R qrels_jg
    ("out.test.qrels_jg", "qrels.comments.123", "results.test", {"metrics": "qrels_jg", "judgment_groups": True}),
]


@pytest.mark.skipif(not (TREC_TESTS / "out.test").exists(), reason=f"trec_eval's test folder not at {TREC_TESTS}")
@pytest.mark.parametrize("expected, qrels, results, options", TEST_SUITE, ids=[f"{t[0]}-{t[1]}" for t in TEST_SUITE])
def test_trec_eval_test_suite_is_reproduced(expected, qrels, results, options):
    ours = evalkit_lines(TREC_TESTS / qrels, TREC_TESTS / results, **options)
    theirs = (TREC_TESTS / expected).read_text().splitlines()
    if "\tall\t" in theirs[0]:  # produced without -q: the summary only
        ours = [line for line in ours if "\tall\t" in line]
    theirs = comparable(theirs, ours)
    assert len(theirs) >= 29 and ours == theirs and len(ours) == len(comparable(ours, theirs))


@pytest.mark.parametrize("seed", range(12))
def test_the_golds_cached_orders_give_what_sorting_the_evaluated_queries_gives(seed):
    """nDCG's ideal rankings and the order of the means come from one sort of the gold each (Qrels.ideal_order,
    Qrels.query_order), kept for the queries evaluated: the same as sorting those queries' judgments and ids, with a
    task's filter, queries left out (missing=skip) and grades of every sign."""
    from evalkit.data import Qrels, Run
    from evalkit.metrics.evaluation import evaluate, judge, match_queries
    from evalkit.metrics import parse_metrics

    rng = random.Random(seed)
    queries = [rng.choice(["q", "Q", "é", "z", "10", "1", "ä-"]) + str(i) for i in range(rng.randrange(1, 40))]
    rows = [(q, f"d{rng.randrange(30)}") for q in queries for _ in range(rng.randrange(0, 8))]
    rows = list(dict.fromkeys(rows)) or [(queries[0], "d0")]
    qrels = Qrels.from_rows([q for q, _ in rows], [d for _, d in rows], [rng.choice([-1, 0, 0.5, 1, 2, 3]) for _ in rows])
    answered = [q for q in qrels.query_ids.tolist() if rng.random() < 0.7] or [qrels.query_ids[0]]
    run = Run.from_rows([q for q in answered for _ in range(3)], [f"d{rng.randrange(30)}-{i}" for i in range(3 * len(answered))],
                        [rng.random() for _ in range(3 * len(answered))])
    keep = np.array([rng.random() < 0.8 for _ in qrels.query_ids]) if seed % 2 else None
    for missing in ("zero", "skip"):
        ev = evaluate(run, qrels, parse_metrics(["ndcg", "map"]), missing=missing, allow_partial=True, keep_gold=keep)
        assert ev.__dict__["_order"].tolist() == np.argsort(np.asarray(ev.query_ids, dtype=str), kind="stable").tolist()
        sets = match_queries(run, qrels, keep)
        evaluated = np.flatnonzero(np.isin(sets.gold, ev.query_ids))
        judged = judge(run, qrels, sets, evaluated)
        kept = np.ones(len(qrels.query_ids), dtype=bool) if keep is None else keep
        eval_pos = np.full(len(qrels.query_ids), -1)
        eval_pos[np.flatnonzero(kept)[evaluated]] = np.arange(len(evaluated))
        jq, jg = eval_pos[qrels.qidx], qrels.grades
        rows_kept = (jq >= 0) & (jg >= 0)
        ideal = np.lexsort((-jg[rows_kept], jq[rows_kept]))
        assert judged.judged_qpos.tolist() == jq[rows_kept][ideal].tolist()
        assert judged.judged_gain.tolist() == jg[rows_kept][ideal].tolist()
