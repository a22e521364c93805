"""One options object for scoring: the API functions and the click commands read the same ScoringOptions."""
from __future__ import annotations

import math

import pytest

import evalkit
from evalkit.core.errors import UsageError
from evalkit.core.options import MAX_DEPTH, ScoringOptions
from support.helpers import run_cli

EXAMPLES = "gold/examples"


def test_defaults_and_normalisation():
    options = ScoringOptions()
    assert (options.task, options.metrics, options.missing, options.depth, options.allow_partial) == ("auto", None, None, None, False)
    assert ScoringOptions(metrics="mrr@10 recall@5").metrics == ("mrr@10 recall@5",)
    assert ScoringOptions(metrics=["mrr@10", " "]).metrics == ("mrr@10",)
    assert ScoringOptions(metrics=[]).metrics is None
    assert isinstance(ScoringOptions(relevance_level=2).relevance_level, float)


@pytest.mark.parametrize(
    "changes, fragment",
    [
        ({"depth": 99999999999999999999}, "depth must be from 1 to"),
        ({"depth": 0}, "depth must be from 1 to"),
        ({"depth": 2.5}, "depth must be a whole number"),
        ({"depth": True}, "depth must be a whole number"),
        ({"relevance_level": math.nan}, "relevance level must be a finite number"),
        ({"relevance_level": "1"}, "relevance level must be a finite number"),
        ({"missing": "drop"}, "missing must be one of"),
        ({"allow_partial": "false"}, "allow_partial must be true or false"),
        ({"metrics": 123}, "metrics must be a string or a list of strings"),
        ({"metrics": ["mrr@10", None]}, "metrics must be strings"),
        ({"task": ""}, "task must be a non-empty string"),
        ({"task": None}, "task must be a non-empty string"),
        ({"depht": 5}, "unknown scoring option(s) 'depht'"),
    ],
)
def test_bad_values_are_one_usage_error(changes, fragment):
    with pytest.raises(UsageError) as caught:
        ScoringOptions.of(**changes)
    assert fragment in str(caught.value)
    assert len(str(caught.value)) < 300  # a huge value is cut, never echoed whole


def test_api_takes_the_object_or_its_fields(tmp_path):
    run, gold = f"{EXAMPLES}/tweets_run.tsv", f"{EXAMPLES}/tweets_gold.tsv"
    by_keywords = evalkit.score(run, gold, metrics="mrr@10", depth=3)
    by_object = evalkit.score(run, gold, scoring=ScoringOptions(metrics=("mrr@10",), depth=3))
    assert by_keywords.means == by_object.means
    assert by_keywords.manifest["options"] == by_object.manifest["options"]
    with pytest.raises(UsageError, match="unknown scoring option"):
        evalkit.score(run, gold, depht=3)


def test_cli_depth_out_of_range_is_one_line():
    result = run_cli("score", f"{EXAMPLES}/tweets_run.tsv", f"{EXAMPLES}/tweets_gold.tsv", "--depth", "99999999999999999999")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"depth must be from 1 to {MAX_DEPTH:,}" in lines[0] and "Traceback" not in result.stderr


def test_commands_share_one_set_of_scoring_options():
    from evalkit.cli.common import _SCORING_OPTIONS
    from evalkit.cli.compare import compare
    from evalkit.cli.leaderboard import leaderboard
    from evalkit.cli.report import report
    from evalkit.cli.score import score

    shared = {"task", "missing", "relevance_level", "depth", "gold_format", "column", "allow_partial"}
    assert shared < set(_SCORING_OPTIONS)
    for command in (score, compare, report, leaderboard):
        names = {p.name for p in command.params}
        assert shared <= names, command.name
