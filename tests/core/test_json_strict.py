"""JSON is strict everywhere: no writer of evalkit, its systems or its benchmarks can put NaN or Infinity in a file.

The code is read (ast): every ``json.dump``/``json.dumps`` call passes ``allow_nan=False`` (``evalkit.core.jsonout.strict``
and ``dumps`` do), and nothing imports ``dump``/``dumps`` from ``json`` by name (which would hide a call from this
test). A value that is not finite on its way into a file is one clear line, exit 2, nothing written.
"""
from __future__ import annotations

import ast
import json
import math
from pathlib import Path

import pytest

from evalkit.core import jsonout
from evalkit.cli import main

REPO = Path(__file__).resolve().parents[2]
FOLDERS = ("evalkit", "systems", "bench")


def _sources():
    for folder in FOLDERS:
        yield from sorted((REPO / folder).rglob("*.py"))


def _strict_json(text: str):
    def refuse(token):
        raise AssertionError(f"not strict JSON: {token}")

    return json.loads(text, parse_constant=refuse)


def test_every_json_writer_passes_allow_nan_false():
    loose = []
    for path in _sources():
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "json":
                names = {alias.name for alias in node.names}
                assert not names & {"dump", "dumps", "JSONEncoder"}, f"{path}:{node.lineno}: import json and call json.dumps"
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("dump", "dumps") \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "json":
                strict = any(k.arg == "allow_nan" and isinstance(k.value, ast.Constant) and k.value.value is False for k in node.keywords)
                if not strict:
                    loose.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert not loose, "json.dump(s) without allow_nan=False (use evalkit.core.jsonout.strict): " + ", ".join(loose)


def test_the_scan_sees_the_writers():
    count = sum(source.count("json.dump") for source in (p.read_text() for p in _sources()))
    assert count >= 30  # the scan above reads the real tree (not an empty folder)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_strict_refuses_a_non_finite_number_naming_its_path(value):
    with pytest.raises(jsonout.NotFiniteJSON) as caught:
        jsonout.strict({"entries": [{"expected": 1.0}, {"expected": value}]}, "baseline x.json", indent=2)
    message = caught.value.one_line()
    assert message.startswith("baseline x.json: entries[1].expected is not a finite number") and "\n" not in message
    assert caught.value.exit_code == 2


def test_dumps_writes_null_and_says_why():
    data = _strict_json(jsonout.dumps({"a": math.nan, "b": [1.0, math.inf]}))
    assert data == {"a": None, "b": [1.0, None], "undefined": {"a": jsonout.DEFAULT_REASONS["NaN"], "b[1]": jsonout.DEFAULT_REASONS["Infinity"]}}


def test_a_baseline_is_never_written_with_a_nan(tmp_path):
    from evalkit.scoring.check import Entry, RegressionBaseline

    baseline = RegressionBaseline(tmp_path / "b.json", [Entry("r", "trec", "g", "r", "MAP", math.nan)])
    with pytest.raises(jsonout.NotFiniteJSON, match="entries\\[0\\].expected"):
        baseline.to_json()


def test_score_json_output_is_strict_json_with_an_undefined_value(tmp_path, capsys):
    """11pt_avg of a condensed list with nothing judged is NaN (trec_eval's 0/0): null in the JSON, never NaN."""
    (tmp_path / "qrels").write_text("1 0 d1 1\n2 0 d9 1\n")
    (tmp_path / "run").write_text("1 Q0 d1 1 1.0 t\n2 Q0 d5 1 1.0 t\n")
    assert main(["score", str(tmp_path / "run"), str(tmp_path / "qrels"), "-m", "11pt_avg utility(1,-1,0,0)", "-J", "-o", "json"]) == 0
    data = _strict_json(capsys.readouterr().out)
    assert "metrics" in data


def test_overflow_is_refused_before_anything_is_computed(tmp_path, capsys):
    (tmp_path / "qrels").write_text("1 0 d1 1\n")
    (tmp_path / "run").write_text("1 Q0 d1 1 1.0 t\n")
    assert main(["score", str(tmp_path / "run"), str(tmp_path / "qrels"), "-m", "utility.1e308,1e308,0,0", "-o", "json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1 and "out of range" in captured.err
