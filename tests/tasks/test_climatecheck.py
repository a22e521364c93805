"""ClimateCheck tasks on small hand-computed cases."""
from __future__ import annotations

import pytest

from evalkit.tasks.climatecheck2025.official import weighted_prf
from evalkit.io.reading import read_qrels, read_run
from evalkit.tasks import get_task

GOLD = """claim_id,claim,abstract_id,annotation
c1,Sea levels rise,a1,Supports
c1,Sea levels rise,a2,Refutes
c1,Sea levels rise,a3,Not Enough Information
c1,Sea levels rise,a4,Not Enough Information
c2,CO2 is plant food,b1,supports
c2,CO2 is plant food,b2,Not Enough Information
c3,Only NEI here,x1,Not Enough Information
c4,Never answered,d1,Refutes
"""
# c1: a3 (NEI) at 1, a1 at 2, zz (unjudged) at 3, a2 at 4; c2: b1 at 1; c4 missing
RUN = """claim_id,abstract_id,rank,label
c1,a3,1,Not Enough Information
c1,a1,2,Supports
c1,zz,3,Refutes
c1,a2,4,Supports
c2,b1,1,Supports
c3,x1,1,NEI
"""


@pytest.fixture
def files(tmp_path):
    gold, run = tmp_path / "gold.csv", tmp_path / "run.csv"
    gold.write_text(GOLD)
    run.write_text(RUN)
    return read_run(run), read_qrels(gold)


def test_retrieval_hand_computed(files):
    run, qrels = files
    score = get_task("climatecheck2025-retrieval").score(run, qrels, allow_partial=True)
    ev = score.evaluation
    assert ev.excluded == ["c3"]  # no relevant abstract
    # officially only the exact spellings 'Supports' / 'Refutes' are relevant: c2's 'supports' is not, so the
    # official recall averages c1 and c4. Recall@2: c1 rows a3, a1 -> 1/2, c4 0 ; Recall@5: c1 1, c4 0
    assert score.values["Recall@2"] == pytest.approx((0.5 + 0) / 2)
    assert score.values["Recall@5"] == pytest.approx(0.5)
    # Bpref c1: R=2, rank order a3 (NEI), a1 -> 1-1/2, zz, a2 -> 1-1/2 => 0.5; c2 no exact relevant, c3 no relevant: skipped
    assert score.values["CC-Bpref"] == pytest.approx(0.5)
    official = (score.values["Recall@2"] + score.values["Recall@5"] + score.values["Recall@10"] + 0.5) / 4
    assert score.official_value == pytest.approx(official)
    assert score.official.startswith("Subtask I score")


def test_verification_matches_sklearn(files):
    from sklearn.metrics import precision_recall_fscore_support

    run, qrels = files
    score = get_task("climatecheck2025-verification").score(run, qrels, allow_partial=True)
    # rows whose pair the gold judges, labels lower-cased: a3 nei/nei, a1 sup/sup, a2 ref/sup, b1 sup/sup, x1 nei/'nei'
    y_true = ["not enough information", "supports", "refutes", "supports", "not enough information"]
    y_pred = ["not enough information", "supports", "supports", "supports", "nei"]
    p, r, f, _ = precision_recall_fscore_support(y_true, y_pred, average="weighted", zero_division=0)
    assert score.official == "Subtask II score (F1 + Recall@10)"
    assert score.values["F1 (weighted)"] == pytest.approx(f)
    assert score.values["Precision (weighted)"] == pytest.approx(p)
    assert score.values["Recall (weighted)"] == pytest.approx(r)
    assert score.official_value == pytest.approx(f + score.values["Recall@10"])
    assert list(score.values)[:5] == ["Subtask II score (F1 + Recall@10)", "F1 (weighted)", "Precision (weighted)",
                                      "Recall (weighted)", "Recall@10"]


@pytest.mark.parametrize("seed", range(5))
def test_weighted_prf_random_against_sklearn(seed):
    import random

    from sklearn.metrics import precision_recall_fscore_support

    rng = random.Random(seed)
    labels = ["Supports", "Refutes", "Not Enough Information"]
    y_true = [rng.choice(labels[: 1 + seed % 3]) for _ in range(50)]
    y_pred = [rng.choice(labels) for _ in range(50)]
    p, r, f, _ = precision_recall_fscore_support(y_true, y_pred, average="weighted", zero_division=0)
    assert weighted_prf(y_true, y_pred) == pytest.approx((p, r, f))


def test_rank_column_disagreement_is_warned(tmp_path):
    run = tmp_path / "run.csv"
    run.write_text("claim_id,abstract_id,rank\nc1,a2,2\nc1,a1,1\n")
    loaded = read_run(run)
    assert loaded.to_lists() == {"c1": ["a2", "a1"]}  # evalkit's own metrics read row order, as official Recall@k
    assert "disagrees with row order" in loaded.warnings[0] and "official Bpref sorts by the rank column" in loaded.warnings[0]


def test_unknown_label_is_kept_and_warned(tmp_path):
    run = tmp_path / "run.csv"
    run.write_text("claim_id,abstract_id,rank,label\nc1,a1,1,Maybe\n")
    loaded = read_run(run)  # the official scorer reads it (a wrong label), so evalkit does too
    assert list(loaded.labels) == ["Maybe"]
    assert any("'Maybe' (line 2)" in w for w in loaded.warnings)


def test_abstract_original_index_column(tmp_path):
    gold = tmp_path / "gold.csv"
    gold.write_text("claim_id,abstract_original_index,annotation\nc1,17,Supports\n")
    assert read_qrels(gold).to_dict() == {"c1": {"17": 1}}
