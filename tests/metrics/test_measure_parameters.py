"""Every measure declares its parameters (evalkit.metrics.parameters); one check applies them on every path.

Hostile values (issue 39, section 2) are refused with one line, exit 2 and nothing written, through the Python API,
``evalkit score``, ``evalkit competition bundle`` and ``evalkit check`` baselines (read and ``--add``).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit import api
from evalkit.cli import main
from evalkit.core.errors import UsageError
from evalkit.metrics import parse_metrics, registered
from evalkit.metrics.base import Metric
from evalkit.metrics.parameters import CUTOFFS, ParameterError, declared, table_markdown, table_rows
from support.helpers import run_cli

# values a careless organiser or a hostile participant writes; each is refused, whatever the path
HOSTILE_VALUES = [
    "rbp.p=nan", "rbp.p=2", "rbp.p=1", "rbp.p=1e-400x", "rbp.p=-0.5", "rbp.p=0x1p1", "rbp(p=inf)", "rbp_resid.p=inf", "rbp_resid.p=1",
    "utility.nan,1,0,0", "utility.1e308,1e308,0,0", "utility.1,-1,0,inf", "utility(1,-1,0,1e101)",
    "ndcg.1=nan", "ndcg.1=inf", "ndcg(2=-inf)", "dcg.2=1e309", "ideal_dcg.1=nan", "G.1=-inf", "Rndcg.1=nan", "ndcg_rel.0=1e200",
    "set_F.beta=nan", "set_F.nan", "set_F.-1", "F(beta=inf)", "11pt_avg.1.5", "11pt_avg.nan", "11pt_avg(0.5,-0.1)",
    "relstring.nan", "relstring.inf", "relstring.-1", "relstring.2.5",
    "P@0", "P@-3", "P@100000000000000000000", "IPrec@1.5", "IPrec@-0.1", "Rprec_mult.-1", "Rprec_mult@1e9", "RR(rel=nan)",
]
# spellings trec_eval refuses (repeated or empty cutoffs) or reads as a number nobody meant (atol: 5x -> 5, 1e1 -> 1)
HOSTILE_SPELLINGS = ["P.5,5", "recall.30,30", "success.1,1", "P.5,", "P.5,,10", "iprec_at_recall.0.1,1e-1", "P.5x", "P.1e1", "ndcg_cut.1e2"]
HOSTILE = HOSTILE_VALUES + HOSTILE_SPELLINGS
FINE = ["rbp.p=0.5", "rbp.p=0", "rbp(p=0.8,1=3)", "utility.2,-1,0.5,0.25", "ndcg.1=3,2=9", "set_F.0.5", "F(beta=2)", "11pt_avg.0.2,0.5,0.8",
        "relstring.20", "ndcg_cut.+30", "ndcg_cut.23.4", "iprec_at_recall.1e-1", "Rprec_mult.0.3,1.5", "P.5,10", "P.5, ndcg@10"]

QRELS = "1 0 d1 1\n1 0 d2 2\n1 0 d3 0\n2 0 d1 1\n"
RUN = "1 Q0 d1 1 3.0 t\n1 Q0 d3 2 2.0 t\n1 Q0 d2 3 1.0 t\n2 Q0 d4 1 1.0 t\n2 Q0 d1 2 0.5 t\n"


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("params")
    (folder / "qrels").write_text(QRELS)
    (folder / "run").write_text(RUN)
    return folder / "run", folder / "qrels"


def one_line_exit_2(argv: list[str], capsys) -> str:
    assert main([str(a) for a in argv]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err and "Warning" not in captured.err, captured.err
    assert captured.out == ""
    return lines[0]


# --- the declarations ---

def _declaring_class(cls: type[Metric]) -> type:
    return next(base for base in cls.__mro__ if "parameters" in vars(base))


@pytest.mark.parametrize("cls", registered(), ids=lambda c: c.name)
def test_every_measure_declares_its_parameters_beside_its_formula(cls):
    owner = _declaring_class(cls)
    assert owner is not Metric and owner.__module__ == cls.__module__, f"{cls.name} declares no parameters of its own"
    takes_cutoff = cls.cutoff != "none" or bool(cls.cutoff_aliases)
    assert (declared(cls, "k") is not None) == takes_cutoff
    if takes_cutoff:
        assert declared(cls, "k") is CUTOFFS[cls.cutoff_kind]
    for name in cls.params:  # every name=value parameter is declared
        assert declared(cls, name) is not None, f"{cls.name}({name}=...) is not declared"
    if cls.spec_kind:  # trec_eval's parameter text reads into declared parameters
        assert any(p.name not in ("k", "rel") for p in cls.parameters), cls.name
    for param in cls.parameters:
        assert param.what and param.range_text()
    assert len({p.name for p in cls.parameters}) == len(cls.parameters)


def test_the_table_is_generated_from_the_declarations():
    table = table_markdown()
    assert all(cls.name.replace("_", "\\_") in table or cls.name in table for cls in registered())
    assert "number in [0, 1)" in table  # rbp's p
    assert len(table_rows()) >= len(registered())


def test_the_docs_page_holds_the_generated_table():
    page = (Path(__file__).resolve().parents[2] / "docs" / "guide" / "measure-parameters.md").read_text()
    assert table_markdown() in page, "regenerate the table: python -c 'from evalkit.metrics.parameters import table_markdown; ...'"


@pytest.mark.parametrize("spelling", FINE)
def test_good_values_and_trec_eval_spellings_are_read(spelling):
    assert parse_metrics(spelling)


def test_values_are_read_as_trec_eval_reads_them():
    labels = [m.label for m in parse_metrics("ndcg_cut.+30 ndcg_cut.23.4 iprec_at_recall.1e-1 P.05")]
    assert labels == ["nDCG@30", "nDCG@23", "IPrec@0.1", "P@5"]
    assert [m.trec_name() for m in parse_metrics("iprec_at_recall.1e-1 rbp.p=0.5")] == ["iprec_at_recall_0.10", "rbp_p=0.5"]


# --- hostile values: every path ---

@pytest.mark.parametrize("metric", HOSTILE)
def test_the_parser_refuses(metric):
    with pytest.raises(ParameterError) as caught:
        parse_metrics(metric)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("metric", HOSTILE)
def test_the_python_api_refuses(metric, files):
    run, qrels = files
    with pytest.raises(UsageError):
        api.score(str(run), str(qrels), metrics=[metric])


def test_direct_construction_is_checked_too():
    from evalkit.metrics.rbp import RBP
    from evalkit.metrics.utility import Utility

    with pytest.raises(ParameterError, match="p must be a number in"):
        RBP(spec="p=2")
    with pytest.raises(ParameterError, match="out of range"):
        Utility(spec="1e308,1e308,0,0")


@pytest.mark.parametrize("metric", HOSTILE)
def test_score_refuses_with_one_line_and_writes_nothing(metric, files, tmp_path, capsys):
    run, qrels = files
    out = tmp_path / "out.json"
    line = one_line_exit_2(["score", run, qrels, "-m", metric, "-o", "json", "--out", out], capsys)
    assert "metric" in line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("metric", HOSTILE)
def test_competition_bundle_refuses_with_one_line_and_writes_nothing(metric, files, tmp_path, capsys):
    _, qrels = files
    one_line_exit_2(["competition", "bundle", "trec", "--phase", f"test:{qrels}", "-m", metric, "--out", tmp_path / "b.zip"], capsys)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("metric", HOSTILE)
def test_a_baseline_naming_it_is_refused_and_left_as_it_is(metric, files, tmp_path, capsys):
    run, qrels = files
    baseline = tmp_path / "scores.json"
    text = json.dumps({"evalkit_baseline": 1, "entries": [
        {"task": "trec", "gold": str(qrels), "run": str(run), "metric": "MAP", "expected": 0.5},
        {"task": "trec", "gold": str(qrels), "run": str(run), "metric": metric, "expected": 0.5}]}, allow_nan=False)
    baseline.write_text(text)
    line = one_line_exit_2(["check", "--baseline", baseline], capsys)
    assert line.startswith(f"{baseline}: entry 2: metric")
    one_line_exit_2(["check", "--baseline", baseline, "--update"], capsys)
    assert baseline.read_text() == text and sorted(tmp_path.iterdir()) == [baseline]


@pytest.mark.parametrize("metric", HOSTILE)
def test_check_add_refuses_and_creates_no_baseline(metric, files, tmp_path, capsys):
    run, qrels = files
    one_line_exit_2(["check", "--baseline", tmp_path / "new.json", "--add", "--task", "trec", "--gold", qrels, "--run", run,
                     "--metric", metric], capsys)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", ["score", "bundle", "check"])
def test_as_a_process_one_line_on_stderr_and_exit_2(command, files, tmp_path):
    """The same through ``python -m evalkit`` (no numpy RuntimeWarning, no source line, no traceback)."""
    run, qrels = files
    metric = "utility.1e308,1e308,0,0"
    args = {"score": ["score", run, qrels, "-m", metric, "-o", "json"],
            "bundle": ["competition", "bundle", "trec", "--phase", f"test:{qrels}", "-m", metric, "--out", tmp_path / "b.zip"],
            "check": ["check", "--baseline", tmp_path / "b.json", "--add", "--task", "trec", "--gold", qrels, "--run", run,
                      "--metric", metric]}[command]
    done = run_cli(*args, env={"PYTHONWARNINGS": "always"})
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and "out of range" in done.stderr, done.stderr
    assert list(tmp_path.iterdir()) == []


def test_hostile_case_count():
    """The number reported in the closing note: each case runs through 6 paths (parser, API, score, bundle, check, --add)."""
    assert len(HOSTILE) == len(set(HOSTILE)) >= 45
