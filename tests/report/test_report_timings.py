"""The report's time per stage: wall and CPU seconds, an earlier run's manifest side by side (A/B), bad manifests refused."""
from __future__ import annotations

import json

import pytest

from evalkit.core.errors import InputError, UsageError
from evalkit.report.timings import StageTimings, timing_section


def manifest(tmp_path, options, name="a.trec.manifest.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"evalkit_version": "0.1.0", "command": "run", "options": options}))
    return path


def test_one_run_lists_wall_and_cpu_seconds_and_the_whole_pipeline():
    text = timing_section(StageTimings({"fit dense": 10.0, "run dense": 2.5}, {"fit dense": 19.5, "run dense": 4.0}, 13.0,
                                       {"name": "local", "workers": 2}))
    assert "engine local, 2 worker processes" in text
    assert "| fit dense | 10.0 | 19.5 |" in text and "| total of the steps | 12.5 | 23.5 |" in text
    assert "| the whole command | 13.0 | |" in text


def test_a_baseline_manifest_gives_an_a_b_table_by_step_name(tmp_path):
    path = manifest(tmp_path, {"stage_seconds": {"fit ce": 2024.0, "run ce": 110.9, "fit old": 5.0},
                               "stage_cpu_seconds": {"fit ce": 3400.0}, "engine": {"name": "local"}, "command_seconds": 3082.0})
    baseline = StageTimings.from_manifest(path)
    assert baseline.label == "a.trec.manifest.json" and baseline.command_wall == 3082.0
    text = timing_section(StageTimings({"fit ce": 506.0, "run ce": 37.0}, {"fit ce": 850.0, "run ce": 60.0}, 900.0), baseline)
    assert "| fit ce | 2,024.0 | 506.0 | 0.25 | 3,400.0 | 850.0 | 0.25 |" in text
    assert "| run ce | 110.9 | 37.0 | 0.33 | - | 60.0 | - |" in text
    assert "| fit old | 5.0 | - | - | - | - | - |" in text  # a step only A had
    assert "| the whole command | 3,082.0 | 900.0 | 0.29 |" in text


@pytest.mark.parametrize("content, message", [
    ("{", "not valid JSON"),
    ('{"options": {}}', "no stage seconds"),
    ('[1, 2]', "no stage seconds"),
    ('{"options": {"stage_seconds": {"fit": "slow"}}}', "not a number of seconds"),
    ('{"options": {"stage_seconds": {"fit": -1}}}', "not a number of seconds"),
])
def test_bad_manifests_are_one_line(tmp_path, content, message):
    path = tmp_path / "m.json"
    path.write_text(content)
    with pytest.raises((UsageError, InputError), match=message):
        StageTimings.from_manifest(path)
