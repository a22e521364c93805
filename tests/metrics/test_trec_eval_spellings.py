"""Measure spellings under ``--output trec_eval``, against a trec_eval 10 binary on the same inputs.

A generated set of ``-m`` spellings (every measure family with parameters, crossed with parameter texts: repeated,
empty, signed, exponent and hexadecimal cutoffs, letters after a number, NaN, infinities, values out of range,
names in another case, plain measures under ``-R qrels_jg``). For each: the same verdict (accepted or refused) as
the binary and, where both accept, the same lines. Where evalkit is stricter on purpose, the refusal must be one
of the reasons listed in docs/guide/measure-parameters.md ("Differences to other tools"): a value outside the
measure's declared range, not finite, or a number followed by other text. evalkit never accepts what trec_eval
refuses. Skips without a binary (``$EVALKIT_TREC_EVAL``).
"""
from __future__ import annotations

import itertools
import os
import subprocess
from pathlib import Path

import pytest

BINARY = os.environ.get("EVALKIT_TREC_EVAL", "")
needs_binary = pytest.mark.skipif(not Path(BINARY).is_file(), reason="no trec_eval binary at $EVALKIT_TREC_EVAL")

LONG = ["P", "recall", "success", "ndcg_cut", "map_cut", "relative_P"]
LONG_TEXTS = ["5", "5,10", "10,5,1", "5,5", "5,", ",5", "5,,10", "+30", "05", "5x", "1e1", "23.4", "7.", "0", "-5", "3,0", "1,+1"]
DOUBLE = ["iprec_at_recall", "Rprec_mult"]
DOUBLE_TEXTS = ["0.1", "1e-1", ".5", "0.1,0.1", "0.1,1e-1", "0.1,", "-1", "2", "nan", "inf", "0x1p-1", "0.5x", "1,0.5", "+0.5"]
VALUES = {
    "set_F": ["0.5", "2", "nan", "-1", "inf", "1e308", "0.5x", "0x1p1"],
    "utility": ["2,-1,0,0", "nan,1,0,0", "1e308,1e308,0,0", "1,-1,0,0x", "1,-1,,0", "1,-1,0,inf", "0.5,-0.25,1,0"],
    "11pt_avg": [".25,.5", "1.5", "0.5,", "nan", "0,1"],
    "relstring": ["20", "nan", "5x", "3"],
}
PAIRS = {
    "ndcg": ["1=3,2=9", "1=nan", "1=inf", "1=3x", "2=0x1p3", "1=-inf"],
    "G": ["2=5", "1=nan"],
    "rbp": ["p=0.5", "p=2", "p=1", "p=nan", "p=0", "p=0.7,2=4", "p=0.5x", "p=inf"],
    "rbp_resid": ["p=0.5", "p=1", "p=-0.5"],
}
OTHER = ["p.5", "Map", "NDCG", "map", "P.5", "official", "all_trec"]
JUDGMENT_GROUPS = ["map", "P.5", "map_avgjg", "P_avgjg.5", "P_avgjg.5,5", "qrels_jg", "runid", "num_q", "Rprec_mult_avgjg.0.5,-1"]

# why evalkit may refuse what trec_eval reads (docs/guide/measure-parameters.md, "Differences to other tools")
DELIBERATE = ("is out of range", "is not a finite number", "is not a number", "is not an integer", "a value is empty",
              "not a number of documents", "an empty cutoff in the list (trec_eval reads it as 0)", "the multiple must not be negative",
              "the recall level must be between 0 and 1")


def spellings() -> list[tuple[str, bool]]:
    """(-m argument, judgment groups) pairs: the generated set."""
    cases = [(f"{name}.{text}", False) for name, text in itertools.product(LONG, LONG_TEXTS)]
    cases += [(f"{name}.{text}", False) for name, text in itertools.product(DOUBLE, DOUBLE_TEXTS)]
    cases += [(f"{name}.{text}", False) for name, texts in {**VALUES, **PAIRS}.items() for text in texts]
    cases += [(name, False) for name in OTHER] + [(name, True) for name in JUDGMENT_GROUPS]
    return cases


QRELS = "1 0 d1 1\n1 0 d2 2\n1 0 d3 0\n1 0 d7 -2\n2 0 d1 1\n2 0 d5 3\n3 0 d2 0\n"
QRELS_JG = "1 u1 d1 1\n1 u2 d1 0\n1 u1 d2 2\n1 u2 d3 1\n2 u1 d1 1\n2 u1 d5 3\n3 u2 d2 0\n"
RUN = ("1 Q0 d1 1 3.0 t\n1 Q0 d3 2 2.0 t\n1 Q0 d2 3 1.0 t\n1 Q0 d7 4 0.5 t\n1 Q0 d9 5 0.25 t\n"
       "2 Q0 d4 1 1.0 t\n2 Q0 d1 2 0.5 t\n2 Q0 d5 3 0.4 t\n3 Q0 d2 1 1.0 t\n")


def theirs(folder: Path, measure: str, groups: bool) -> list[str] | None:
    flags = ["-R", "qrels_jg"] if groups else []
    qrels = folder / ("qrels_jg" if groups else "qrels")
    done = subprocess.run([BINARY, "-q", "-c", *flags, "-m", measure, str(qrels), str(folder / "run")], capture_output=True,
                          text=True, timeout=60)
    return done.stdout.splitlines() if done.returncode == 0 else None


def ours(folder: Path, measure: str, groups: bool) -> tuple[list[str] | None, str]:
    from evalkit import api
    from evalkit.report import text as render
    from evalkit.core.errors import UsageError
    from evalkit.metrics.trec_names import expand_trec_eval

    qrels = folder / ("qrels_jg" if groups else "qrels")
    try:
        result = api.score(str(folder / "run"), str(qrels), task="trec", metrics=expand_trec_eval([measure], groups),
                           missing="zero", allow_partial=True, judgment_groups=groups)
    except UsageError as error:
        return None, error.one_line()
    return render.as_trec_eval(result.task_score).splitlines(), ""


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("spellings")
    (folder / "qrels").write_text(QRELS)
    (folder / "qrels_jg").write_text(QRELS_JG)
    (folder / "run").write_text(RUN)
    return folder


def test_the_generated_set_is_large():
    assert len(spellings()) >= 150


@needs_binary
@pytest.mark.parametrize("measure, groups", spellings(), ids=[f"{m}{' -R qrels_jg' if g else ''}" for m, g in spellings()])
def test_same_verdict_and_numbers_as_trec_eval(folder, measure, groups):
    expected = theirs(folder, measure, groups)
    got, error = ours(folder, measure, groups)
    if expected is None:
        assert got is None, f"evalkit accepts {measure!r}, which trec_eval refuses"
        return
    if got is None:
        assert any(reason in error for reason in DELIBERATE), f"evalkit refuses {measure!r} ({error}); trec_eval reads it"
        return
    assert got == expected
