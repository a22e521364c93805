"""A competition enforces its own rules: what `evalkit validate` calls INVALID fails the submission through the
bundle (one line naming the rule and the first offending line, exit 2, no scores), unless the organiser built the
bundle with ``--submission-rules warn`` (scored, with a note); the bundle records the choice, `competition check`
reports it. Synthetic cases on the shipped 4b example, then the real 4b runs (realdata)."""
from __future__ import annotations

import json

import pytest
from support.codabench_helpers import GOLD_4B, RUN_4B, trec_qrels, trec_run, unzip, write_zip, zip_of
from support.helpers import CT4B, shared_or_skip, split_of

import evalkit
from evalkit.competition import check_bundle, make_bundle, run_submission
from evalkit.core.errors import UsageError
from evalkit.tasks.submissions import validate

TASK = "checkthat2025-4b"
RULES_LINE = f"invalid submission: breaks the {TASK} submission rules: predictions.tsv:"


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    folder = tmp_path_factory.mktemp("rules")
    enforce = make_bundle(TASK, [("dev", str(GOLD_4B))], str(folder / "enforce.zip"))
    warn = make_bundle(TASK, [("dev", str(GOLD_4B))], str(folder / "warn.zip"), submission_rules="warn")
    return {"enforce": enforce.path, "warn": warn.path}


def _ten_ids() -> str:
    """The example submission with 10 ids a tweet (the five it had, then five more): 'exactly 5' broken on every row."""
    lines = RUN_4B.read_text().splitlines()
    extra = "'x1', 'x2', 'x3', 'x4', 'x5'"
    return "\n".join([lines[0]] + [line.replace("']", f"', {extra}]") for line in lines[1:]]) + "\n"


def _rows(text: str) -> list[str]:
    return text.splitlines()


def _upload(tmp_path, name: str, text: str):
    return write_zip(tmp_path / f"{name}.zip", {"predictions.tsv": text})


def _one_line(done) -> str:
    assert done.failure == "the scoring program exited with code 2", (done.failure, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr and "scores.json" not in done.output, done.stderr
    return lines[0]


HOSTILE = {  # a submission breaking one rule -> (the kind of rule named, the line named)
    "ten ids a tweet": (_ten_ids, "list length", 2),
    "four ids": (lambda: RUN_4B.read_text().replace(", 'vitd0001']", "]", 1), "list length", 2),
    "a tweet twice": (lambda: RUN_4B.read_text() + _rows(RUN_4B.read_text())[1] + "\n", "duplicate query", 8),
    "a tweet missing": (lambda: "\n".join(_rows(RUN_4B.read_text())[:-1]) + "\n", "missing query", None),
    "a tweet of no phase": (lambda: RUN_4B.read_text() + "zz9\t['a', 'b', 'c', 'd', 'e']\n", "unknown query", 8),
    "an id twice": (lambda: RUN_4B.read_text().replace("'vent0042', 'kids0007'", "'vent0042', 'vent0042'", 1), "repeated id", 2),
    "the wrong header": (lambda: RUN_4B.read_text().replace("post_id\tpreds", "tweet_id\tpreds", 1), "header", 1),
    "comma-separated": (lambda: RUN_4B.read_text().replace("\t", ","), "delimiter", 1),
    "a TREC run": (lambda: "".join(f"t{q} Q0 d{d} {d} {1 - d / 10} tag\n" for q in range(1, 7) for d in range(1, 6)), "header", 1),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_what_validate_calls_invalid_fails_with_one_line_naming_the_rule(bundles, tmp_path, case):
    make, kind, line = HOSTILE[case]
    text = make()
    path = tmp_path / "predictions.tsv"
    path.write_text(text)
    checked = validate(path, TASK, gold=[GOLD_4B])
    assert not checked.valid and checked.problems.errors[0].kind == kind, checked.lines()
    message = _one_line(run_submission(str(bundles["enforce"]), str(_upload(tmp_path, "team", text)), "dev"))
    where = f"predictions.tsv:{line}: " if line else "predictions.tsv: "
    assert message.startswith(f"invalid submission: breaks the {TASK} submission rules: {where}"), message
    assert f"(rule: {kind}; " in message and f"`evalkit validate predictions.tsv --task {TASK}` lists every one)" in message
    assert message.endswith("lists every one)") and len(message) < 1200


@pytest.mark.parametrize("case", ["ten ids a tweet", "four ids", "an id twice"])
def test_relaxed_rules_score_the_file_as_evalkit_score_does_with_a_note(bundles, tmp_path, case):
    text = HOSTILE[case][0]()
    plain = tmp_path / "predictions.tsv"
    plain.write_text(text)
    done = run_submission(str(bundles["warn"]), str(_upload(tmp_path, "team", text)), "dev")
    assert done.failure is None, done.stderr
    expected = evalkit.score(str(plain), str(GOLD_4B), task=TASK, missing=None).means
    assert done.scores == {key: expected[key] for key in done.scores}
    note = next(line for line in done.stdout.splitlines() if "submission rules" in line)
    assert note.startswith(f"note: breaks the {TASK} submission rules: predictions.tsv") and "--submission-rules warn" in note


def test_a_valid_submission_scores_alike_under_both(bundles, tmp_path):
    upload = _upload(tmp_path, "team", RUN_4B.read_text())
    enforced, relaxed = (run_submission(str(bundles[mode]), str(upload), "dev") for mode in ("enforce", "warn"))
    assert enforced.failure is None and relaxed.failure is None and enforced.scores == relaxed.scores
    assert "submission rules" not in enforced.stdout + relaxed.stdout
    expected = evalkit.score(str(RUN_4B), str(GOLD_4B), task=TASK, missing=None).means
    assert enforced.scores == {key: expected[key] for key in enforced.scores}
    assert json.loads(enforced.output["evalkit-manifest.json"])["competition"]["submission_rules"] == "enforce"
    assert json.loads(relaxed.output["evalkit-manifest.json"])["competition"]["submission_rules"] == "warn"


def test_the_bundle_records_the_choice_and_check_reports_it(bundles, tmp_path, cli):
    for mode, path in bundles.items():
        files = unzip(path)
        manifest = json.loads(files["evalkit-manifest.json"])
        assert manifest["options"]["submission_rules"] == mode
        program = unzip_bytes(files["scoring_program.zip"])
        assert json.loads(program["evalkit-scoring.json"])["submission_rules"] == mode
        notes: list[str] = []
        assert check_bundle(str(path), notes) == [] and notes == [next(n for n in notes if n.startswith(f"submission rules: {mode}: "))]
        done = cli("competition", "check", path)
        assert done.returncode == 0 and f"{path.name}: submission rules: {mode}: " in done.stdout and f"{path}: ok" in done.stdout
        for page in (files["pages/submission_format.md"].decode(), files["pages/evaluation.md"].decode()):
            assert ("enforced" in page) == (mode == "enforce") and ("relaxed" in page) == (mode == "warn")


def unzip_bytes(data: bytes) -> dict[str, bytes]:
    import io
    import zipfile

    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def test_the_command_line_takes_enforce_or_warn_and_nothing_else(tmp_path, cli):
    out = tmp_path / "b.zip"
    done = cli("competition", "bundle", TASK, "--phase", f"dev:{GOLD_4B}", "--out", out, "--submission-rules", "warn", "--no-self-test")
    assert done.returncode == 0, done.stderr
    assert json.loads(unzip(out)["evalkit-manifest.json"])["options"]["submission_rules"] == "warn"
    assert json.loads((tmp_path / "b.zip.manifest.json").read_text())["options"]["submission_rules"] == "warn"
    bad = cli("competition", "bundle", TASK, "--phase", f"dev:{GOLD_4B}", "--out", tmp_path / "c.zip", "--submission-rules", "off")
    assert bad.returncode == 2 and not (tmp_path / "c.zip").exists()
    with pytest.raises(UsageError, match="--submission-rules 'off': choose enforce or warn"):
        make_bundle(TASK, [("dev", str(GOLD_4B))], str(tmp_path / "d.zip"), submission_rules="off", test=False)
    assert not (tmp_path / "d.zip").exists()


def test_competition_run_shows_the_participant_the_rule(bundles, tmp_path, cli):
    done = cli("competition", "run", bundles["enforce"], _upload(tmp_path, "team", _ten_ids()), "--out", tmp_path / "out")
    assert done.returncode == 1
    assert f"  ! {RULES_LINE}2: post_id 't1' has 10 ids, expected exactly 5 (rule: list length; 6 problems in all" in done.stderr
    assert "submission failed: the scoring program exited with code 2" in done.stderr


def test_a_tampered_setting_is_the_organisers_problem_never_a_silent_pass(bundles, tmp_path, capsys, monkeypatch):
    """A bundle whose program says submission_rules 'off': check names the rule, and every submission fails as the
    program's error (exit 1), never scored without its rules."""
    files = unzip(bundles["enforce"])
    program = unzip_bytes(files["scoring_program.zip"])
    config = json.loads(program["evalkit-scoring.json"])
    config["submission_rules"] = "off"
    program["evalkit-scoring.json"] = (json.dumps(config) + "\n").encode()
    files["scoring_program.zip"] = zip_of(program)
    tampered = tmp_path / "tampered.zip"
    tampered.write_bytes(zip_of(files))
    assert [p.rule for p in check_bundle(str(tampered))] == ["submission-rules"]
    with pytest.raises(UsageError, match=r"submission_rules 'off'.*\[submission-rules\]"):
        run_submission(str(tampered), str(_upload(tmp_path, "team", RUN_4B.read_text())), "dev")
    layout = {"program": program, "input/ref": unzip_bytes(files[next(n for n in files if n.startswith("reference_data_"))]),
              "input/res": {"predictions.tsv": RUN_4B.read_bytes()}, "output": {}}
    for folder, members in layout.items():
        (tmp_path / folder).mkdir(parents=True)
        for name, data in members.items():
            (tmp_path / folder / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / folder / name).write_bytes(data)
    from evalkit.competition.scoring import main

    assert main(tmp_path / "program", [str(tmp_path / "input"), str(tmp_path / "output")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("scoring program error (organisers: check the bundle") and "'off'" in err
    assert not (tmp_path / "output" / "scores.json").exists()
    del config["submission_rules"]  # a bundle from before the setting: reported as not recorded
    program["evalkit-scoring.json"] = (json.dumps(config) + "\n").encode()
    files["scoring_program.zip"] = zip_of(program)
    tampered.write_bytes(zip_of(files))
    notes: list[str] = []
    assert check_bundle(str(tampered), notes) == [] and notes[0].startswith("submission rules: not recorded")


def test_a_task_without_a_submission_format_has_no_rules_to_apply(tmp_path):
    qrels = trec_qrels(tmp_path / "qrels.txt")
    made = make_bundle("trec", [("test", str(qrels))], str(tmp_path / "trec.zip"))
    done = run_submission(str(made.path), str(write_zip(tmp_path / "run.zip", {"run.trec": trec_run(qrels)})), "test")
    assert done.failure is None and done.scores
    notes: list[str] = []
    assert check_bundle(str(made.path), notes) == [] and notes == [
        "submission rules: none to apply (task trec declares no submission format: every run evalkit reads is scored)"]


# --- the real CheckThat! 4b runs -------------------------------------------------------------------------------

REAL_TEN = "airwaves/predictions_BM25_test_TOP10.tsv"  # 10 ids a tweet, 1,446 tweets: the case


@pytest.mark.realdata
def test_real_runs_breaking_the_rules_fail_and_their_cut_scores(tmp_path, cli):
    """The real run of 10 ids a tweet: INVALID by validate, failed by the default bundle (its first line named);
    relaxed, it scores higher Recall@10 than the same run cut to 5 by `evalkit submit`, which the default bundle takes."""
    run = shared_or_skip(CT4B / "runs" / REAL_TEN)
    gold = CT4B / "queries" / "subtask4b_query_tweets_test_gold.tsv"
    enforce = make_bundle(TASK, [("test", str(gold))], str(tmp_path / "enforce.zip"), test=False).path
    warn = make_bundle(TASK, [("test", str(gold))], str(tmp_path / "warn.zip"), test=False, submission_rules="warn").path
    assert not validate(run, TASK, gold=[gold]).valid
    upload = write_zip(tmp_path / "ten.zip", {"predictions.tsv": run.read_bytes()})
    message = _one_line(run_submission(str(enforce), str(upload), "test"))
    first = run.read_text().splitlines()[1].split("\t")[0]
    assert message.startswith(f"{RULES_LINE}2: post_id {first!r} has 10 ids, expected exactly 5 (rule: list length; 1446 problems")
    relaxed = run_submission(str(warn), str(upload), "test")
    cut = tmp_path / "cut.zip"
    assert cli("submit", run, "--task", TASK, "--out", cut).returncode == 0
    kept = run_submission(str(enforce), str(cut), "test")
    assert relaxed.failure is None and kept.failure is None, kept.stderr
    assert relaxed.scores["Recall@10"] > kept.scores["Recall@10"] and relaxed.scores["MRR@5"] == kept.scores["MRR@5"]


@pytest.mark.realdata
@pytest.mark.slow  # about 20 scoring processes
def test_every_real_test_run_fails_exactly_when_validate_calls_it_invalid(tmp_path):
    shared_or_skip(CT4B)
    gold = CT4B / "queries" / "subtask4b_query_tweets_test_gold.tsv"
    bundle = make_bundle(TASK, [("test", str(gold))], str(tmp_path / "b.zip"), test=False).path
    runs = [run for run in sorted((CT4B / "runs").glob("*/*")) if split_of(run) == "test"]
    verdicts = {True: 0, False: 0}
    for run in runs:
        checked = validate(run, TASK, gold=[gold])
        upload = run if run.suffix == ".zip" else write_zip(tmp_path / f"{run.stem}.zip", {run.name: run.read_bytes()})
        done = run_submission(str(bundle), str(upload), "test")
        verdicts[checked.valid] += 1
        if checked.valid:
            assert done.failure is None, (run.name, done.stderr)
            continue
        first = checked.problems.errors[0]
        message = _one_line(done)
        where = f"{run.name}:{first.line}: " if first.line else f"{run.name}: "
        assert message.startswith(f"invalid submission: breaks the {TASK} submission rules: {where}{first.message}"), message
    assert verdicts[True] >= 9 and verdicts[False] >= 9
