"""The Python API refuses text that no UTF-8 file could hold (a lone surrogate, ``"d\\ud800"``) as the file readers
refuse a bad byte: one evalkit error naming where, never a ``UnicodeEncodeError`` from deep inside (a manifest's
hash, an output). Every in-memory input: dicts of scores and of lists, DataFrames (id, score and label columns, a
task's layouts, list cells), Run and Qrels built in code, and a list literal whose escape writes a surrogate."""
from __future__ import annotations

import pandas as pd
import pytest

from evalkit import api
from evalkit.data import Qrels, Run
from evalkit.core.errors import EvalkitError

GOLD = {"q1": {"d1": 1, "d2": 0}}
TWEETS_GOLD = "gold/examples/tweets_gold.tsv"
LONE = ["d\ud800", "\udfff", "a\udc80b", "\ud83d\ude00"]  # high, low, in the middle, a pair written as two code points


def _text(values) -> pd.Series:
    return pd.Series(values, dtype=object)  # pandas' own string dtype cannot hold a surrogate at all


CASES = {
    "run dict doc": lambda s: api.score({"q1": {s: 1.0, "d1": 0.5}}, GOLD, task="trec"),
    "run dict query": lambda s: api.score({s: {"d1": 1.0}, "q1": {"d1": 1.0}}, GOLD, task="trec", allow_partial=True),
    "list run": lambda s: api.score({"q1": ["d1", s]}, GOLD, task="trec"),
    "gold dict doc": lambda s: api.score({"q1": {"d1": 1.0}}, {"q1": {s: 1, "d1": 1}}, task="trec"),
    "gold dict query": lambda s: api.score({"q1": {"d1": 1.0}}, {s: {"d1": 1}, **GOLD}, task="trec"),
    "run frame doc": lambda s: api.score(pd.DataFrame({"query_id": ["q1"], "doc_id": _text([s]), "score": [1.0]}), GOLD, task="trec"),
    "run frame label": lambda s: api.score(pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "score": [1.0], "label": _text([s])}),
                                           GOLD, task="trec"),
    "gold frame": lambda s: api.score({"q1": {"d1": 1.0}}, pd.DataFrame({"query_id": ["q1"], "doc_id": _text([s]), "relevance": [1]}),
                                      task="trec"),
    "4b gold frame": lambda s: api.score({"t1": {"x": 1.0}}, pd.DataFrame({"post_id": _text([s]), "tweet_text": ["t"], "cord_uid": ["x"]})),
    "4b run frame post": lambda s: api.score(pd.DataFrame({"post_id": _text([s]), "preds": ["['a', 'b', 'c', 'd', 'e']"]}), TWEETS_GOLD),
    "4b run frame list": lambda s: api.score(pd.DataFrame({"post_id": ["t1"], "preds": _text([[s, "b", "c", "d", "e"]])}), TWEETS_GOLD,
                                             allow_partial=True),
    "Run.from_scores": lambda s: api.score(Run.from_scores({"q1": {s: 1.0}}), GOLD, task="trec"),
    "Run.from_lists": lambda s: api.score(Run.from_lists({"q1": ["d1", s]}), GOLD, task="trec"),
    "Run.from_rows label": lambda s: api.score(Run.from_rows(["q1"], ["d1"], [1.0], labels=[s]), GOLD, task="trec"),
    "Qrels.from_rows label": lambda s: api.score({"q1": {"d1": 1.0}}, Qrels.from_rows(["q1"], ["d1"], [1.0], labels=[s]), task="trec"),
    "Qrels.from_dict": lambda s: api.score({"q1": {"d1": 1.0}}, Qrels.from_dict({"q1": {s: 1}}), task="trec"),
    "compare": lambda s: api.compare(GOLD, {"q1": {"d1": 1.0}}, {"q1": {s: 1.0}}, task="trec", permutations=10, bootstrap=10),
    "score_many names": lambda s: api.score_many(GOLD, [{"q1": {"d1": 1.0}}], task="trec", names=[s]),
    "compare names": lambda s: api.compare(GOLD, {"q1": {"d1": 1.0}}, {"q1": {"d2": 1.0}}, task="trec", names=["a", s],
                                           permutations=10, bootstrap=10),
}


@pytest.mark.parametrize("lone", LONE, ids=["high", "low", "middle", "pair"])
@pytest.mark.parametrize("case", list(CASES))
def test_a_lone_surrogate_is_one_evalkit_error(case, lone, monkeypatch):
    monkeypatch.chdir(__import__("support.helpers", fromlist=["_"]).REPO)
    with pytest.raises(EvalkitError) as caught:
        CASES[case](lone)
    message = str(caught.value)
    assert "not UTF-8 text" in message and "\n" not in message and len(message) < 400, message
    message.encode("utf-8")  # the message itself prints anywhere


@pytest.mark.parametrize("case", list(CASES))
def test_other_text_of_every_script_is_taken(case, monkeypatch):
    """The check refuses only what UTF-8 cannot hold: accents, CJK, an emoji (one code point) are ids like any."""
    monkeypatch.chdir(__import__("support.helpers", fromlist=["_"]).REPO)
    for text in ("dü", "日本", "\U0001F600"):
        try:
            CASES[case](text)
        except EvalkitError as problem:  # a case may fail on its own grounds (an unknown doc, a partial run), never UTF-8
            assert "UTF-8" not in str(problem), (case, text, str(problem))


def test_a_list_literal_writing_a_surrogate_as_an_escape_is_refused_in_a_file(tmp_path):
    """A 4b list cell that spells ``"d\\ud800"`` with an escape: the file is UTF-8 text, the id would not be."""
    from evalkit.core.errors import InputError
    from evalkit.io.reading import read_run

    path = tmp_path / "run.tsv"
    path.write_text('post_id\tpreds\nt1\t["d\\ud800", "b", "c", "d", "e"]\n')
    with pytest.raises(InputError) as caught:
        read_run(str(path))
    assert str(caught.value).startswith(f"{path}:2: ") and "not UTF-8 text" in str(caught.value)
