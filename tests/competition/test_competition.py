"""``evalkit competition bundle|check|run``: bundles for every built-in task, the local worker, Codabench's semantics."""
from __future__ import annotations

import json
import struct
import zlib

import pytest
from support.codabench_helpers import (
    GOLD_4B,
    RUN_4B,
    climatecheck_gold,
    climatecheck_submission,
    competition_yaml,
    trec_qrels,
    trec_run,
    unzip,
    with_yaml,
    write_zip,
    zip_of,
)

import evalkit
from evalkit.competition import check_bundle, make_bundle, run_submission
from evalkit.competition import codabench
from evalkit.competition.columns import columns_for, key_of
from evalkit.tasks import get_task


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    """One bundle per built-in task (self-tested while written), with their gold files."""
    folder = tmp_path_factory.mktemp("bundles")
    cc_dev, cc_test = climatecheck_gold(folder / "cc_dev.csv", "d", 25, 1), climatecheck_gold(folder / "cc_test.csv", "t", 30, 2)
    qrels = trec_qrels(folder / "qrels.txt")
    plans = {
        "checkthat2025-4b": [("dev", GOLD_4B), ("test", GOLD_4B)],
        "climatecheck2025-retrieval": [("dev", cc_dev), ("test", cc_test)],
        "climatecheck2025-verification": [("dev", cc_dev), ("test", cc_test)],
        "trec": [("test", qrels)],
    }
    built = {}
    for task, phases in plans.items():
        result = make_bundle(task, [(name, str(path)) for name, path in phases], str(folder / f"{task}.zip"))
        built[task] = (result, dict(phases))
    return built


@pytest.mark.parametrize("task", ["checkthat2025-4b", "climatecheck2025-retrieval", "climatecheck2025-verification", "trec"])
def test_a_bundle_for_each_built_in_task_passes_check(bundles, task):
    result, _ = bundles[task]
    assert check_bundle(str(result.path)) == []
    files = unzip(result.path)
    document = competition_yaml(files)
    assert document["version"] == 2 and document["enable_detailed_results"] is True
    assert document["docker_image"] == codabench.PYTHON_IMAGE
    columns = document["leaderboards"][0]["columns"]
    assert [c["key"] for c in columns] == [c.key for c in result.columns]
    assert all(len(c["key"]) <= 36 and len(c["title"]) <= 36 for c in columns)
    assert document["leaderboards"][0]["primary_index"] == 0 and columns[0]["index"] == 0
    assert set(result.self_test) == {p["name"] for p in document["phases"]}  # each phase scored end to end while built
    manifest = json.loads(files["evalkit-manifest.json"])
    assert manifest["task"] == task and manifest["evalkit_version"] == evalkit.__version__
    assert json.loads(result.path.with_name(result.path.name + ".manifest.json").read_text())["files"] == manifest["files"]


def test_leaderboard_columns_are_the_figures_the_task_reports(bundles):
    assert [c.key for c in bundles["checkthat2025-4b"][0].columns] == ["MRR@5", "MRR@1", "MRR@10", "Recall@1", "Recall@5", "Recall@10"]
    # ClimateCheck: the organisers' scorer's names (evaluate.py prints Recall@2 ... B-pref, SubtaskI-Score, F1, SubtaskII-Score)
    assert [c.key for c in bundles["climatecheck2025-retrieval"][0].columns] == ["SubtaskI-Score", "Recall@2", "Recall@5", "Recall@10", "B-pref"]
    verification = [c.key for c in bundles["climatecheck2025-verification"][0].columns]
    assert verification[:5] == ["SubtaskII-Score", "F1", "Precision", "Recall", "Recall@10"]
    assert {"SubtaskI-Score", "Recall@2", "Recall@5", "B-pref"} <= set(verification)
    assert bundles["trec"][0].columns[0].key == "nDCG@10"


def test_keys_fit_codabench_and_stay_unique():
    task = get_task("trec")
    long = "Subtask III score (a very long explanation that does not fit)"
    columns = columns_for(task, [long, "Subtask III score (another explanation, also too long)", "F1 (weighted)", "MRR@5"])
    assert [c.key for c in columns] == ["Subtask_III_score", "Subtask_III_score_2", "F1_weighted", "MRR@5"]
    assert columns[0].title == "Subtask III score"
    assert key_of("x" * 50) == "x" * 36


def test_pages_come_from_the_task_declaration(bundles):
    result, _ = bundles["checkthat2025-4b"]
    files = unzip(result.path)
    task = get_task("checkthat2025-4b")
    evaluation = files["pages/evaluation.md"].decode()
    assert task.official_definition in evaluation
    assert all(f"`{c.key}`" in evaluation for c in result.columns)
    assert "refused as a probable wrong split" in evaluation  # 4b refuses a run missing >10% of the queries
    assert "scored; the others count" in unzip(bundles["climatecheck2025-retrieval"][0].path)["pages/evaluation.md"].decode()
    assert "predictions.tsv" in files["pages/submission_format.md"].decode()
    overview = files["pages/overview.md"].decode()
    assert "| dev |" in overview and "| test |" in overview and task.description in overview


def test_logo_is_a_png_codabench_accepts(bundles):
    png = unzip(bundles["trec"][0].path)["logo.png"]
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = struct.unpack(">II", png[16:24])
    raw = zlib.decompress(png[png.index(b"IDAT") + 4:])
    assert (width, height) == (256, 256) and len(raw) == height * (1 + 3 * width)
    from matplotlib.image import imread

    import io

    assert imread(io.BytesIO(png), format="png").shape == (256, 256, 3)


def test_detailed_results_mode_follows_the_phase(bundles):
    files = unzip(bundles["checkthat2025-4b"][0].path)
    dev = json.loads(unzip_member(files["reference_data_0_dev.zip"], "evalkit-reference.json"))
    test = json.loads(unzip_member(files["reference_data_1_test.zip"], "evalkit-reference.json"))
    assert (dev["detailed_results"], test["detailed_results"]) == ("full", "summary")  # the test gold stays hidden


def unzip_member(data: bytes, name: str) -> bytes:
    import io
    import zipfile

    return zipfile.ZipFile(io.BytesIO(data)).read(name)


def test_run_gives_exactly_the_figures_of_evalkit_score(bundles, tmp_path, cli):
    result, _ = bundles["checkthat2025-4b"]
    upload = write_zip(tmp_path / "team.zip", {"predictions.tsv": RUN_4B.read_bytes()})
    done = cli("competition", "run", result.path, upload, "--phase", "dev", "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    scores = json.loads((tmp_path / "out" / "scores.json").read_text())
    expected = evalkit.score(str(RUN_4B), str(GOLD_4B), task="checkthat2025-4b", missing=None).means
    assert scores == {c.key: expected[c.label] for c in result.columns}
    assert "MRR@5" in done.stdout and f"{expected['MRR@5']:.4f}" in done.stdout
    page = (tmp_path / "out" / "detailed_results.html").read_text()
    assert "evalkit-page/1" in page  # dev: evalkit's own page
    worker = json.loads((tmp_path / "out" / "worker.json").read_text())
    assert worker["command"] == ["python3", "/app/program/score.py", "/app/input", "/app/output"]
    again = cli("competition", "run", result.path, upload, "--phase", "dev", "--out", tmp_path / "out")
    assert again.returncode == 2 and "exists; pass --force" in again.stderr


def test_test_phase_shows_a_summary_without_the_gold(bundles, tmp_path):
    result, _ = bundles["checkthat2025-4b"]
    done = run_submission(str(result.path), str(write_zip(tmp_path / "t.zip", {"predictions.tsv": RUN_4B.read_bytes()})), "test")
    assert done.failure is None
    page = done.output["detailed_results.html"].decode()
    assert "evalkit-page/1" not in page and "Per-query results are not shown" in page
    gold_ids = [line.split("\t")[2] for line in GOLD_4B.read_text().splitlines()[1:]]
    assert not any(doc in page for doc in gold_ids)  # no gold document id on the page


def test_a_rezipped_root_folder_is_found_and_scored(bundles, tmp_path):
    result, _ = bundles["checkthat2025-4b"]
    plain = run_submission(str(result.path), str(write_zip(tmp_path / "a.zip", {"predictions.tsv": RUN_4B.read_bytes()})), "dev")
    nested = run_submission(str(result.path), str(write_zip(tmp_path / "b.zip", {"my run/": b"", "my run/predictions.tsv": RUN_4B.read_bytes()})), "dev")
    assert nested.failure is None and nested.scores == plain.scores


def test_climatecheck_bundle_scores_climatecheck_submissions(bundles, tmp_path):
    from oracles.official_climatecheck import official_scores

    result, golds = bundles["climatecheck2025-verification"]
    organisers = {"Recall@2": "Recall@2", "Recall@5": "Recall@5", "Recall@10": "Recall@10", "Bpref": "B-pref",
                  "Subtask I": "SubtaskI-Score", "Precision": "Precision", "Recall": "Recall", "F1": "F1", "Subtask II": "SubtaskII-Score"}
    for seed in range(3):
        text = climatecheck_submission(golds["test"], seed)
        plain = tmp_path / f"predictions{seed}.csv"
        plain.write_text(text)
        done = run_submission(str(result.path), str(write_zip(tmp_path / f"cc{seed}.zip", {"predictions.csv": text})), "test")
        assert done.failure is None, done.stderr
        expected = evalkit.score(str(plain), str(golds["test"]), task="climatecheck2025-verification", missing=None).means
        assert done.scores == {c.key: expected[c.label] for c in result.columns}
        oracle = official_scores(plain, golds["test"])  # the organisers' scorer's figures, under its own names
        for name, key in organisers.items():
            assert done.scores[key] == pytest.approx(oracle[name], abs=1e-12)
        assert [cell.key for cell in done.row] == [c.key for c in result.columns] and all(cell.value is not None for cell in done.row)


def test_an_undefined_figure_fails_clearly_never_nan(bundles, tmp_path):
    """No label column: the task's submission rules fail it first; with the rules relaxed, Subtask II is undefined."""
    result, golds = bundles["climatecheck2025-verification"]
    text = climatecheck_submission(golds["dev"], 5, labels=False)
    upload = str(write_zip(tmp_path / "nolabel.zip", {"predictions.csv": text}))
    relaxed = make_bundle("climatecheck2025-verification", [("dev", str(golds["dev"]))], str(tmp_path / "warn.zip"),
                          submission_rules="warn", test=False)
    for bundle, start in ((result.path, "invalid submission: breaks the climatecheck2025-verification submission rules: "
                                        "predictions.csv:1: no 'label' column"),
                          (relaxed.path, "invalid submission: Subtask II score (F1 + Recall@10) is undefined")):
        done = run_submission(str(bundle), upload, "dev")
        assert done.failure == "the scoring program exited with code 2"
        assert done.stderr.count("\n") == 1 and done.stderr.startswith(start), done.stderr
        assert "scores.json" not in done.output and "Traceback" not in done.stderr


def test_bundle_writes_nothing_over_an_existing_file_and_never_an_input(bundles, tmp_path, cli):
    result, _ = bundles["trec"]
    gold = tmp_path / "qrels.txt"
    trec_qrels(gold)
    before = gold.read_bytes()
    refused = cli("competition", "bundle", "trec", "--phase", f"test:{gold}", "--out", result.path)
    assert refused.returncode == 2 and "exists; pass --force" in refused.stderr
    misnamed = cli("competition", "bundle", "trec", "--phase", f"test:{gold}", "--out", tmp_path / "b.tar")
    assert misnamed.returncode == 2 and "NAME.zip" in misnamed.stderr
    clash = cli("competition", "bundle", "trec", "--phase", f"test:{gold}", "--phase", f"test:{gold}", "--out", tmp_path / "c.zip")
    assert clash.returncode == 2 and "given twice" in clash.stderr and not (tmp_path / "c.zip").exists()
    order = cli("competition", "bundle", "trec", "--phase", f"a:{gold}", "--phase", f"b:{gold}", "--start", "a=2025-01-01",
                "--end", "a=2025-03-01", "--start", "b=2025-02-01", "--out", tmp_path / "d.zip", "--no-self-test")
    assert order.returncode == 2 and "phase 'a' must end before phase 'b' starts" in order.stderr and not (tmp_path / "d.zip").exists()
    assert gold.read_bytes() == before


def test_check_cli_exit_codes(bundles, tmp_path, cli):
    good = cli("competition", "check", bundles["trec"][0].path)
    assert good.returncode == 0 and good.stdout.strip().endswith(": ok")
    files = unzip(bundles["trec"][0].path)
    document = competition_yaml(files)
    document["leaderboards"][0]["columns"][0]["key"] = "k" * 40
    document["phases"][0]["max_submissions_per_day"] = -3
    bad = write_zip(tmp_path / "bad.zip", with_yaml(files, document))
    done = cli("competition", "check", bad)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if "[" in line]
    assert any(line.startswith("leaderboards[0].columns[0].key:") and "[column-key-length]" in line for line in lines)
    assert any(line.startswith("phases[0].max_submissions_per_day:") and "[phase-limits]" in line for line in lines)
    unreadable = cli("competition", "check", tmp_path / "none.zip")
    assert unreadable.returncode == 2 and "no such file" in unreadable.stderr


def test_legacy_variables_are_replaced_as_the_worker_does():
    assert codabench.replace_legacy_variables("python $program/score.py $input $output") == "python /app/program/score.py /app/input /app/output"
    assert (codabench.replace_legacy_variables("x $hidden $predictions $shared $tmp $input_data $submission_program")
            == "x /app/input/ref /app/input/res /app/shared /app/output /app/input_data /app/ingested_program")


def test_zip_member_names_land_where_extractall_puts_them():
    assert codabench.extracted_name("../../evil.tsv") == "evil.tsv"
    assert codabench.extracted_name("/abs/run.tsv") == "abs/run.tsv"
    assert codabench.extracted_name("a/./b/../c") == "a/b/c"
    assert codabench.extracted_name("C:\\x.tsv") == "C:\\x.tsv"  # a backslash is a character of the name on Linux
    assert codabench.extracted_name("../") is None


def test_scores_codabench_can_store():
    assert codabench.storable_score(0.5) is None and codabench.storable_score("0.25") is None
    assert "not finite" in codabench.storable_score(float("nan"))
    assert "not finite" in codabench.storable_score(float("inf"))
    assert "digits" in codabench.storable_score(1e12)
    assert "not a number" in codabench.storable_score(True)


def custom_bundle(bundle_path, tmp_path, program: dict, **phase_changes):
    """The trec bundle with its scoring program replaced by ``program`` (files) and phase 0 changed."""
    files = unzip(bundle_path)
    document = competition_yaml(files)
    document["phases"][0].update(phase_changes)
    files["scoring_program.zip"] = zip_of(program)
    return write_zip(tmp_path / "custom.zip", with_yaml(files, document))


WRITE = ("import json, os, sys; out = sys.argv[2]; ref = sys.argv[1]; "
         "assert os.path.isfile(os.path.join(sys.argv[3], 'metadata')); "
         "open(os.path.join(out, {name!r}), 'w').write({text!r})")


def test_worker_reads_scores_txt_as_yaml_and_reports_keys_matching_no_column(bundles, tmp_path, cli):
    text = "nDCG@10: 0.5\nMAP: 0.25\nextra: 3\n"
    program = {"metadata.yaml": "command: python3 $program/s.py $hidden $output $predictions\n",
               "s.py": WRITE.format(name="scores.txt", text=text)}
    bundle = custom_bundle(bundles["trec"][0].path, tmp_path, program)
    upload = write_zip(tmp_path / "u.zip", {"run.trec": trec_run(None)})
    done = cli("competition", "run", bundle, upload, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    kept = tmp_path / "u.scoring"  # the default output folder, beside where the command ran
    assert sorted(p.name for p in kept.iterdir()) == ["scores.txt", "worker.json"]
    worker = json.loads((kept / "worker.json").read_text())
    assert worker["unmatched_keys"] == ["extra"] and worker["manifest"]["inputs"][1]["role"] == "submission"
    assert "scores key 'extra' matches no leaderboard column; Codabench drops it silently" in done.stderr
    row = {line.split()[-1].strip("()"): line.split()[-2] for line in done.stdout.splitlines()[1:]}
    assert row["nDCG@10"] == "0.5000" and row["MAP"] == "0.2500" and row["MRR"] == "n/a"


def test_worker_time_limit_kills_the_program(bundles, tmp_path):
    import time

    program = {"metadata.yaml": "command: python3 -c 'import time; time.sleep(60)'\n"}
    bundle = custom_bundle(bundles["trec"][0].path, tmp_path, program, execution_time_limit=1)
    start = time.monotonic()
    done = run_submission(str(bundle), str(write_zip(tmp_path / "u.zip", {"run.trec": "x"})))
    assert done.failure == "Execution Time Limit exceeded. Limit was 1 seconds" and time.monotonic() - start < 20


def test_worker_refuses_a_program_writing_output_metadata(bundles, tmp_path):
    program = {"metadata.yaml": "command: python3 $program/s.py $input/ref $output $input/res\n",
               "s.py": WRITE.format(name="metadata", text="x")}
    done = run_submission(str(custom_bundle(bundles["trec"][0].path, tmp_path, program)), str(write_zip(tmp_path / "u.zip", {"r": "x"})))
    assert done.failure.startswith("Error, the output directory already contains a metadata file")


def test_worker_without_scores_or_command(bundles, tmp_path):
    upload = str(write_zip(tmp_path / "u.zip", {"r": "x"}))
    silent = {"metadata.yaml": "command: python3 -c 'pass'\n"}
    done = run_submission(str(custom_bundle(bundles["trec"][0].path, tmp_path, silent)), upload)
    assert done.failure == "Could not find scores file, did the scoring program output it?"


def test_default_phase_is_the_one_open_now():
    import datetime as dt

    from evalkit.competition.worker import pick_phase

    competition = {"phases": [{"name": "dev", "start": "2025-01-01", "end": "2025-02-01"}, {"name": "test", "start": "2025-02-02"}]}
    assert pick_phase(competition, None, dt.datetime(2025, 1, 15))["name"] == "dev"
    assert pick_phase(competition, None, dt.datetime(2025, 3, 1))["name"] == "test"
    assert pick_phase(competition, None, dt.datetime(2024, 3, 1))["name"] == "dev"
    assert pick_phase(competition, "TEST")["name"] == "test"


PLUGIN = '''
from evalkit.metrics import parse_metrics
from evalkit.tasks import Task


class HitsAt3(Task):
    """Participants upload TREC runs; Success@3 is official."""

    name = "hits-at-3"
    description = "a plugin task scored by Success@3"
    official_definition = "Success@3: share of queries with a relevant document in the top 3"
    default_metrics = "mrr@10"
    gold_formats = ("trec-qrels",)

    def official_metrics(self):
        return parse_metrics("success@3")

    def detects(self, gold_format, run=None):
        return 0
'''


def test_a_plugin_task_travels_in_the_scoring_program(tmp_path):
    import os
    import subprocess
    import sys

    site = tmp_path / "site"
    (site / "plug_task").mkdir(parents=True)
    (site / "plug_task" / "__init__.py").write_text(PLUGIN)
    info = site / "plug_task-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: plug-task\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[evalkit.tasks]\nhits-at-3 = plug_task:HitsAt3\n")
    qrels = trec_qrels(tmp_path / "qrels.txt")
    (tmp_path / "run.trec").write_text(trec_run(qrels))
    with_plugin = {**os.environ, "PYTHONPATH": str(site)}

    def evalkit_cli(*args, env=None):
        return subprocess.run([sys.executable, "-m", "evalkit", *map(str, args)], cwd=tmp_path, env=env or dict(os.environ),
                              capture_output=True, text=True, timeout=300)

    built = evalkit_cli("competition", "bundle", "hits-at-3", "--phase", f"test:{qrels}", "--out", "p.zip", env=with_plugin)
    assert built.returncode == 0, built.stderr
    assert "columns: Success@3, MRR@10" in built.stdout and "self-test test" in built.stdout
    program = unzip_member(unzip(tmp_path / "p.zip")["scoring_program.zip"], "plug_task/__init__.py")
    assert program.decode() == PLUGIN
    write_zip(tmp_path / "up.zip", {"run.trec": trec_run(qrels)})
    done = evalkit_cli("competition", "run", "p.zip", "up.zip", "--out", "out")  # no plugin installed: the vendored copy scores
    assert done.returncode == 0, done.stderr
    printed = json.loads(evalkit_cli("score", "run.trec", qrels, "--task", "hits-at-3", "-o", "json", env=with_plugin).stdout)
    assert json.loads((tmp_path / "out" / "scores.json").read_text()) == printed["metrics"]
