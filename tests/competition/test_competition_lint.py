"""``evalkit competition check``: one test per rule, each violated once in an otherwise valid bundle, named in the message."""
from __future__ import annotations

import json

import pytest
from support.codabench_helpers import GOLD_4B, competition_yaml, unzip, with_yaml, write_zip, zip_of

from evalkit.competition import make_bundle
from evalkit.competition.lint import all_rules, lint_bundle


@pytest.fixture(scope="module")
def valid(tmp_path_factory):
    """The files of a valid two-phase 4b bundle."""
    path = tmp_path_factory.mktemp("lint") / "valid.zip"
    make_bundle("checkthat2025-4b", [("dev", str(GOLD_4B)), ("test", str(GOLD_4B))], str(path), test=False)
    assert lint_bundle(str(path)) == []
    return unzip(path)


def yaml_change(change):
    """A case changing competition.yaml only."""
    def apply(files):
        document = competition_yaml(files)
        change(document)
        return with_yaml(files, document)
    return apply


def column(**fields):
    """A computed column appended to the leaderboard (scoring programs never write computed keys)."""
    base = {"title": "Mean", "key": "mean", "index": 6, "computation": "avg", "computation_indexes": [0, 1]}
    return yaml_change(lambda y: y["leaderboards"][0]["columns"].append({**base, **fields}))


def program(files_of_program):
    return lambda files: {**files, "scoring_program.zip": zip_of(files_of_program)}


def program_config(change):
    def apply(files):
        import io
        import zipfile

        inner = zipfile.ZipFile(io.BytesIO(files["scoring_program.zip"]))
        members = {name: inner.read(name) for name in inner.namelist()}
        config = json.loads(members["evalkit-scoring.json"])
        change(config)
        members["evalkit-scoring.json"] = json.dumps(config).encode()
        return {**files, "scoring_program.zip": zip_of(members)}
    return apply


def set_in(path, value):
    def change(y):
        target = y
        for key in path[:-1]:
            target = target[key]
        if value is DELETE:
            del target[path[-1]]
        else:
            target[path[-1]] = value
    return yaml_change(change)


DELETE = object()
PHASE0, BOARD = ("phases", 0), ("leaderboards", 0)
# rule id -> (how the valid bundle is broken, the YAML path the problem names)
CASES = {
    "zip": (lambda files: b"this is not a zip", None),
    "yaml-at-root": (lambda files: {f"bundle/{k}": v for k, v in files.items()}, "competition.yaml"),
    "yaml": (lambda files: {**files, "competition.yaml": b"title: [unclosed\n"}, "competition.yaml"),
    "version": (set_in(("version",), "1.5"), "version"),
    "title": (set_in(("title",), DELETE), "title"),
    "image": (set_in(("image",), "no-such-logo.png"), "image"),
    "image-format": (lambda files: {**files, "logo.png": b"GIF? no: plain text"}, "image"),
    "terms": (lambda files: {**files, "terms.md": b""}, "terms"),
    "pages": (set_in(("pages",), DELETE), "pages"),
    "page-file": (lambda files: {**files, "pages/overview.md": b""}, "pages[0].file"),
    "docker-image": (set_in(("docker_image",), "x" * 129), "docker_image"),
    "contact-email": (set_in(("contact_email",), "organisers at example dot org"), "contact_email"),
    "tasks": (yaml_change(lambda y: y["tasks"].append("scoring_program.zip")), "tasks[2]"),
    "task-index": (yaml_change(lambda y: y["tasks"].append({**y["tasks"][0]})), "tasks[2].index"),
    "task-name": (set_in(("tasks", 0, "name"), ""), "tasks[0].name"),
    "task-scoring-program": (set_in(("tasks", 0, "scoring_program"), DELETE), "tasks[0].scoring_program"),
    "task-file": (set_in(("tasks", 0, "ingestion_program"), "ingestion.zip"), "tasks[0].ingestion_program"),
    "solution": (set_in(("solutions",), [{"index": 0, "tasks": [7], "path": "scoring_program.zip"}]), "solutions[0].tasks[0]"),
    "phases": (set_in(("phases",), []), "phases"),
    "phase-tasks": (set_in((*PHASE0, "tasks"), [5]), "phases[0].tasks[0]"),
    "phase-date": (set_in((*PHASE0, "start"), "the first of April"), "phases[0].start"),
    "phase-order": (yaml_change(lambda y: y["phases"][1].update(start=y["phases"][0]["end"])), "phases[1].start"),
    "phase-limits": (set_in((*PHASE0, "max_submissions_per_day"), -1), "phases[0].max_submissions_per_day"),
    "auto-migrate": (set_in((*PHASE0, "auto_migrate_to_this_phase"), True), "phases[0].auto_migrate_to_this_phase"),
    "leaderboards": (set_in(("leaderboards",), []), "leaderboards"),
    "leaderboard-fields": (set_in((*BOARD, "title"), "t" * 65), "leaderboards[0].title"),
    "submission-rule": (set_in((*BOARD, "submission_rule"), "Force_Worst"), "leaderboards[0].submission_rule"),
    "columns": (set_in((*BOARD, "columns", 1, "title"), None), "leaderboards[0].columns[1].title"),
    "column-key-length": (column(key="k" * 37), "leaderboards[0].columns[6].key"),
    "column-title-length": (set_in((*BOARD, "columns", 1, "title"), "t" * 37), "leaderboards[0].columns[1].title"),
    "column-key-unique": (column(key="MRR@1"), "leaderboards[0].columns[6].key"),
    "column-index-unique": (column(index=3), "leaderboards[0].columns[6].index"),
    "column-sorting": (set_in((*BOARD, "columns", 2, "sorting"), "up"), "leaderboards[0].columns[2].sorting"),
    "column-precision": (set_in((*BOARD, "columns", 2, "precision"), "two"), "leaderboards[0].columns[2].precision"),
    "column-computation": (column(computation="median"), "leaderboards[0].columns[6].computation"),
    "computation-indexes": (column(computation_indexes=[0, 9]), "leaderboards[0].columns[6].computation_indexes[1]"),
    "primary-index": (set_in((*BOARD, "primary_index"), 9), "leaderboards[0].primary_index"),
    "one-leaderboard": (yaml_change(lambda y: y["leaderboards"].append({**y["leaderboards"][0], "key": "second"})), "leaderboards[1]"),
    # both phases' tasks share the one scoring program: each task reports it
    "scoring-command": (program({"metadata.yaml": "description: no command here\n"}), ("tasks[0].scoring_program", "tasks[1].scoring_program")),
    "command-shell": (program({"metadata.yaml": "command: python3 score.py $input $output > log.txt\n"}),
                      ("tasks[0].scoring_program", "tasks[1].scoring_program")),
    "time-limit": (set_in((*PHASE0, "execution_time_limit"), 900), "phases[0].execution_time_limit"),
    "scores-keys": (program_config(lambda c: c["columns"][1].update(key="mrr1")), "leaderboards[0].columns"),
    "submission-rules": (program_config(lambda c: c.update(submission_rules="off")), ("tasks[0].scoring_program", "tasks[1].scoring_program")),
    "reference-data": (lambda files: {**files, "reference_data_0_dev.zip": zip_of({"gold.tsv": GOLD_4B.read_bytes()})},
                       "tasks[0].reference_data"),
}


def test_every_rule_has_its_case():
    assert set(CASES) == set(all_rules())


@pytest.mark.parametrize("rule_id", sorted(CASES))
def test_rule(rule_id, valid, tmp_path):
    breaker, where = CASES[rule_id]
    broken = breaker(dict(valid))
    path = tmp_path / "broken.zip"
    if isinstance(broken, bytes):
        path.write_bytes(broken)
    else:
        write_zip(path, broken)
    problems = lint_bundle(str(path))
    assert problems, rule_id
    assert {p.rule for p in problems} == {rule_id}, [p.line() for p in problems]  # violated once: no other rule fires
    for problem in problems:
        assert problem.line().endswith(f"[{rule_id}]")
        if where is not None:
            places = where if isinstance(where, tuple) else (where,)
            assert problem.where in places and problem.line().startswith((f"{problem.where}:", f"warning: {problem.where}:"))


def test_warnings_do_not_fail_the_check(valid, tmp_path, cli):
    breaker, _ = CASES["time-limit"]
    path = write_zip(tmp_path / "slow.zip", breaker(dict(valid)))
    done = cli("competition", "check", path)
    assert done.returncode == 0 and "warning: phases[0].execution_time_limit" in done.stdout and "1 warning" in done.stdout


def test_rules_are_listed(cli, tmp_path, valid):
    done = cli("competition", "check", "--rules", write_zip(tmp_path / "ok.zip", valid))
    assert done.returncode == 0 and all(rule_id in done.stdout for rule_id in CASES)
