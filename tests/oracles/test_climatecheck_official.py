"""ClimateCheck 2025: evalkit's official figures equal an independent oracle of the organisers' scorer.

The oracle (:mod:`oracles.official_climatecheck`) reads the files with pandas
and scores them with scikit-learn as the scorer does; evalkit must give the
same Recall@2/5/10, Bpref, Subtask I, P/R/F1 and Subtask II on every quirky
file, and say "undefined" (exit 0) where the scorer prints 404.
"""
from __future__ import annotations

import json
import math
import random
import subprocess
import sys

import pytest

pytest.importorskip("sklearn")
pytest.importorskip("pandas")

import evalkit  # noqa: E402
from oracles.official_climatecheck import official_scores  # noqa: E402

GOLD = """claim_id,abstract_original_index,annotation
1,10,Supports
1,11,Refutes
1,12,Not Enough Information
1,13,Not Enough Information
2,20,Supports
2,21,Not Enough Information
3,30,Not Enough Information
3,31,Not Enough Information
4,40,Refutes
4,41,Supports
5,50,Supports
5,51,Not Enough Information
5,52,Refutes
5,53,Not Enough Information
5,54,Supports
5,55,Not Enough Information
7,70,Supports
7,71,Not Enough Information
"""
HEAD = "claim_id,abstract_id,rank,label\n"

CASES = {
    # the rank column disagrees with row order: Recall@k reads rows, Bpref sorts by rank
    "rank_vs_row_order": HEAD + "1,13,1,Supports\n1,12,2,Refutes\n1,10,4,Supports\n1,11,3,Refutes\n2,21,2,Supports\n2,20,1,Supports\n",
    "exact_duplicate_rows": HEAD + "1,10,1,Supports\n1,10,1,Supports\n1,12,2,Refutes\n1,11,3,Refutes\n5,50,1,Supports\n5,50,1,Supports\n5,51,2,Supports\n",
    "same_pair_two_labels": HEAD + "1,10,1,Supports\n1,10,2,Refutes\n1,11,3,Refutes\n2,20,1,Not Enough Information\n2,20,2,Supports\n",
    "label_spellings_and_case": HEAD + "1,10,1,supports\n1,11,2,REFUTES\n1,12,3,NEI\n1,13,4,Not enough information\n"
    "2,20,1,Supports \n2,21,2,Refuted\n5,50,1, Supports\n5,51,2,not enough information\n",
    "list_of_1": HEAD + "1,11,1,Refutes\n2,20,1,Supports\n5,54,1,Supports\n",
    "list_of_3": HEAD + "1,12,1,Refutes\n1,10,2,Supports\n1,99,3,Supports\n5,53,1,Supports\n5,52,2,Refutes\n5,50,3,Supports\n",
    "list_of_7": HEAD + "".join(f"5,{d},{r},Supports\n" for r, d in enumerate([55, 53, 99, 54, 51, 52, 50], 1)),
    "list_of_15": HEAD + "".join(f"1,{d},{r},Refutes\n" for r, d in enumerate([90, 91, 12, 92, 93, 13, 94, 95, 96, 97, 98, 11, 99, 10, 89], 1)),
    "tied_ranks_small": HEAD + "1,12,1,Supports\n1,10,1,Supports\n1,13,1,Refutes\n1,11,1,Refutes\n",
    "tied_ranks_long": HEAD + "".join(f"5,{d},{1 + i % 3},Supports\n"
                                      for i, d in enumerate([55, 53, 51, 50, 90, 91, 92, 93, 52, 94, 95, 96, 97, 98, 99, 54, 80, 81, 82, 83, 84, 85, 86, 87])),
    "missing_claims": HEAD + "1,10,1,Supports\n",
    "extra_claims": HEAD + "1,10,1,Supports\n99,10,1,Supports\n98,5,1,Refutes\n",
    "nei_only_claim": HEAD + "3,30,1,Not Enough Information\n3,31,2,Supports\n",
    "claim_without_nei": HEAD + "4,41,1,Supports\n4,40,2,Refutes\n",
    "no_label_column": "claim_id,abstract_id,rank\n1,10,1\n1,11,2\n5,52,1\n",
    "label_column_other_name": "claim_id,abstract_id,rank,Label\n1,10,1,Supports\n",
    "zero_judged_pairs": HEAD + "1,98,1,Supports\n2,99,1,Refutes\n",
    "zero_padded_ids": HEAD + "001,010,1,Supports\n007,070,1,Supports\n",
    "mixed_id_column": HEAD + "1,10,1,Supports\nc2,20,1,Supports\n",
    "float_ranks": HEAD + "1,11,2.5,Refutes\n1,10,1.0,Supports\n1,12,0.5,Supports\n",
    "empty_ranks": HEAD + "1,11,,Refutes\n1,12,2,Supports\n1,10,1,Supports\n",
    "text_ranks": HEAD + "1,11,b,Refutes\n1,12,a,Supports\n1,10,10,Supports\n",
    "empty_claim_rows": HEAD + ",10,1,Supports\n1,10,1,Supports\n1,,2,Supports\n",
}
OUR_NAMES = {
    "Recall@2": "Recall@2", "Recall@5": "Recall@5", "Recall@10": "Recall@10", "Bpref": "CC-Bpref",
    "Subtask I": "Subtask I score (mean of Recall@2, Recall@5, Recall@10, Bpref)",
    "Precision": "Precision (weighted)", "Recall": "Recall (weighted)", "F1": "F1 (weighted)",
    "Subtask II": "Subtask II score (F1 + Recall@10)",
}
TASK = "climatecheck2025-verification"


def evalkit_scores(predictions, gold) -> dict[str, float | None]:
    result = evalkit.score(str(predictions), str(gold), task=TASK)
    return {ours: (None if math.isnan(result.means[theirs]) else result.means[theirs]) for ours, theirs in OUR_NAMES.items()}


def assert_same(ours: dict, expected: dict) -> None:
    for name, value in expected.items():
        if value is None:
            assert ours[name] is None, name
        elif name in ("Precision", "Recall", "F1", "Subtask II"):
            assert ours[name] == pytest.approx(value, abs=1e-12), name  # sklearn's float order
        else:
            assert ours[name] == value, name  # the same arithmetic, exactly


@pytest.fixture
def gold(tmp_path):
    path = tmp_path / "gold.csv"
    path.write_text(GOLD)
    return path


@pytest.mark.parametrize("case", sorted(CASES))
def test_official_figures_equal_the_oracle(case, gold, tmp_path):
    predictions = tmp_path / f"{case}.csv"
    predictions.write_text(CASES[case])
    assert_same(evalkit_scores(predictions, gold), official_scores(predictions, gold))


def test_rank_column_decides_bpref_not_recall(gold, tmp_path):
    predictions = tmp_path / "p.csv"
    predictions.write_text(CASES["rank_vs_row_order"])
    expected = official_scores(predictions, gold)
    # claim 1: rows 13, 12 (both NEI) first -> Recall@2 = 0; by rank 13, 12 still come first -> Bpref (0 + 0) / 2 = 0
    # claim 2: rows 21, 20 -> Recall@2 = 1; by rank 20 (relevant) first -> Bpref 1; claims 4, 5, 7 absent -> recall 0
    assert expected["Bpref"] == pytest.approx((0.0 + 1.0) / 2)
    assert expected["Recall@2"] == pytest.approx((0 + 1 + 0 + 0 + 0) / 5)
    result = evalkit.score(str(predictions), str(gold), task=TASK)
    assert any("rank column disagrees with row order" in w for w in result.warnings)


@pytest.mark.parametrize("seed", range(40))
def test_random_quirky_submissions(seed, gold, tmp_path):
    rng = random.Random(seed)
    labels = ["Supports", "Refutes", "Not Enough Information", "supports", "NEI", "Refutes ", "REFUTES"]
    pool = [10, 11, 12, 13, 20, 21, 30, 31, 40, 41, 50, 51, 52, 53, 54, 55, 70, 71, 99, 98]
    claims = rng.sample([1, 2, 3, 4, 5, 7, 99], rng.randint(1, 7))
    lines = [HEAD.strip()]
    for claim in claims:
        length = rng.choice([1, 2, 3, 5, 7, 10, 12, 15, 20])
        ranks = list(range(1, length + 1))
        if rng.random() < 0.4:
            rng.shuffle(ranks)
        for rank in ranks:
            rank = rank if rng.random() > 0.15 else rng.randint(1, 3)  # ties
            row = f"{claim},{rng.choice(pool)},{rank},{rng.choice(labels)}"
            lines.append(row)
            if rng.random() < 0.05:
                lines.append(row)  # exact duplicate
    rng.shuffle(lines[1:]) if rng.random() < 0.2 else None
    predictions = tmp_path / "p.csv"
    predictions.write_text("\n".join(lines) + "\n")
    assert_same(evalkit_scores(predictions, gold), official_scores(predictions, gold))


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "evalkit", *args], capture_output=True, text=True, timeout=120)


def test_cli_prints_undefined_and_exits_zero(gold, tmp_path):
    predictions = tmp_path / "p.csv"
    predictions.write_text(CASES["no_label_column"])
    done = run_cli("score", str(predictions), str(gold), "--task", TASK, "--output", "json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    text = json.dumps(report)
    assert "undefined" in text and "no label column" in text
    table = run_cli("score", str(predictions), str(gold), "--task", TASK)
    assert table.returncode == 0 and "undefined" in table.stdout


def test_cli_official_subtask2_is_f1_plus_recall10(gold, tmp_path):
    predictions = tmp_path / "p.csv"
    predictions.write_text(CASES["same_pair_two_labels"])
    expected = official_scores(predictions, gold)
    done = run_cli("score", str(predictions), str(gold), "--task", TASK, "--output", "json")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "Subtask II score (F1 + Recall@10)" in text
    assert expected["Subtask II"] == pytest.approx(expected["F1"] + expected["Recall@10"])
    assert f"{expected['Subtask II']:.6f}"[:6] in text or str(round(expected["Subtask II"], 4)) in text


def test_label_that_is_not_text_is_one_line(gold, tmp_path):
    predictions = tmp_path / "p.csv"
    predictions.write_text(HEAD + "1,10,1,\n")  # an empty label on a judged pair: the scorer cannot lower-case NaN
    done = run_cli("score", str(predictions), str(gold), "--task", TASK)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert ":2:" in done.stderr or "line 2" in done.stderr


def test_validate_flags_what_the_official_scorer_reads_differently(gold, tmp_path):
    predictions = tmp_path / "p.csv"
    predictions.write_text(CASES["label_spellings_and_case"])
    done = run_cli("validate", str(predictions))
    assert done.returncode != 0 and "label 'supports' is not one of" in done.stdout + done.stderr  # the strict reading
    scored = evalkit.score(str(predictions), str(gold), task=TASK)
    assert any("compares labels lower-cased only" in w for w in scored.warnings)  # the official reading, as a warning
