"""A feature outside the light install names its extra in one line (evalkit.core.errors.require), exit code 2: simulated
here by hiding the library (``sys.modules[name] = None`` makes its import fail as an absent one does)."""
from __future__ import annotations

import sys

import pytest
from support.helpers import REPO

from evalkit.cli import main
from evalkit.core.errors import MissingExtraError, require

GOLD = str(REPO / "gold" / "examples" / "tweets_gold.tsv")
RUN = str(REPO / "gold" / "examples" / "tweets_run.tsv")


@pytest.fixture()
def hide(monkeypatch):
    def hide_modules(*names):
        for name in list(sys.modules):
            if name.split(".")[0] in names:
                monkeypatch.delitem(sys.modules, name)
        for name in names:
            monkeypatch.setitem(sys.modules, name, None)
    return hide_modules


def test_require_names_the_extra(hide):
    hide("matplotlib")
    with pytest.raises(MissingExtraError) as raised:
        require("matplotlib", "the figures of `evalkit report`", verb="need")
    assert str(raised.value) == "the figures of `evalkit report` need matplotlib: pip install 'evalkit-ir[plots]'"
    assert require("json", "anything").dumps([]) == "[]"


@pytest.mark.parametrize(("hidden", "args", "expected"), [
    ("matplotlib", ["report", RUN, RUN, "--gold", GOLD, "--out", "r.md"], "the figures of `evalkit report` (--out) need matplotlib: "
                                                                           "pip install 'evalkit-ir[plots]'"),
    ("ranx", ["fuse", RUN, RUN, "--method", "condorcet", "--out", "f.trec"], "the fusion method condorcet (computed by ranx) needs ranx: "
                                                                             "pip install 'evalkit-ir[ranx]'"),
])
def test_a_command_says_which_extra_in_one_line(hidden, args, expected, hide, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    hide(hidden)
    code = main(args)
    err = capsys.readouterr().err
    assert code == 2 and err.strip() == expected
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_the_api_frames_name_the_pandas_extra(hide):
    import evalkit

    scored = evalkit.score(RUN, GOLD)
    hide("pandas")
    with pytest.raises(MissingExtraError, match=r"ScoreResult.per_query \(a DataFrame\) needs pandas: pip install 'evalkit-ir\[pandas\]'"):
        _ = scored.per_query


def test_parquet_names_the_arrow_extra(hide, tmp_path):
    from evalkit.io.formats.collections import read_corpus

    path = tmp_path / "corpus.parquet"
    path.write_bytes(b"PAR1" + b"\0" * 16)
    hide("pyarrow")
    with pytest.raises(MissingExtraError, match=r"corpus.parquet: reading Parquet needs pyarrow: pip install 'evalkit-ir\[arrow\]'"):
        read_corpus(str(path))
