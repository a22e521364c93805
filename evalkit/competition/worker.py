"""``evalkit competition run``: one submission through a bundle as Codabench's compute worker runs it, locally.

The worker's two steps for a result submission, reproduced
(``compute_worker/compute_worker.py``):

1. *prediction*: the upload is extracted (as ``ZipFile.extractall`` does)
   into ``program/``; having no ``metadata.yaml`` it is copied to the
   output, and the worker adds its ``metadata`` file (the program statuses);
   that output becomes the scoring step's ``input/res``;
2. *scoring*: ``program/`` (the task's scoring program), ``input/ref`` (its
   reference data), ``input/res``, ``output/`` and ``shared/`` are laid out;
   the command of ``metadata.yaml`` gets the worker's variable replacements
   (``$program``, ``$input``, ``$output``, ``$hidden``, ``$predictions``,
   ``$shared``, ``$tmp``...), is split into words as docker splits it (no
   shell), and runs in ``program/`` under the phase's time limit (capped at
   600 s, the default queue's); a non-zero exit fails the submission; the
   program must not write ``output/metadata``; scores come from
   ``output/scores.json``, else ``output/scores.txt`` read as YAML.

The scores are then put on the first leaderboard, the one every phase gets:
a key matching no column is reported (Codabench drops it silently), a
column with no score reads n/a, computed columns are computed. Paths under
``/app`` in the command are mapped onto the local layout and ``python3`` is
the given interpreter: what is not reproduced is the docker image itself
(see ``--python``).
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from evalkit.competition import codabench
from evalkit.competition.archive import Archive, extract
from evalkit.core.errors import EvalkitError, UsageError, listed, unquoted

LOG_LIMIT = 64 << 10  # bytes of the program's stdout / stderr kept
PYTHON_NAMES = ("python3", "python", "/usr/bin/python3", "/usr/local/bin/python3", "/usr/bin/python", "/usr/local/bin/python")


@dataclass
class Cell:
    title: str
    key: str
    value: float | None
    precision: int

    def shown(self) -> str:
        return "n/a" if self.value is None else f"{self.value:.{self.precision}f}"


@dataclass
class WorkerRun:
    """What the worker did with one submission, and the leaderboard row it would show."""

    phase: str
    tasks: list
    command: list[str] = field(default_factory=list)  # as the container would run it
    returncode: int | None = None
    elapsed: float = 0.0
    stdout: str = ""
    stderr: str = ""
    scores: dict = field(default_factory=dict)
    scores_file: str | None = None
    row: list[Cell] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)  # scores keys matching no column
    failure: str | None = None  # the status Codabench would show (None: finished)
    output: dict[str, bytes] = field(default_factory=dict, repr=False)  # the scoring output folder's files
    manifest: dict = field(default_factory=dict, repr=False)  # evalkit, the bundle and the upload (sha256), phase, interpreter

    def as_json(self) -> dict:
        return {"phase": self.phase, "tasks": self.tasks, "command": self.command, "returncode": self.returncode,
                "elapsed_seconds": round(self.elapsed, 3), "failure": self.failure, "scores_file": self.scores_file,
                "scores": self.scores, "unmatched_keys": self.unmatched,
                "leaderboard_row": [{"title": c.title, "key": c.key, "value": c.value} for c in self.row],
                "stdout": self.stdout, "stderr": self.stderr, "manifest": self.manifest}


class Failed(Exception):
    """The submission failed as it would on Codabench (the message is the status detail)."""


def load_yaml(archive: Archive) -> dict:
    import yaml

    return yaml.safe_load(archive.read(codabench.YAML_NAME).decode("utf-8"))


def pick_phase(competition: dict, name: str | None, now: _dt.datetime | None = None) -> dict:
    """The phase named (exactly, else ignoring case), or the one open now, else the first (in index order)."""
    phases = sorted(competition["phases"], key=lambda p: p.get("index", 0))
    names = [str(p.get("name")) for p in phases]
    if name is not None:
        for wanted in (lambda n: n == name, lambda n: n.lower() == name.lower()):
            chosen = [p for p, n in zip(phases, names) if wanted(n)]
            if chosen:
                return chosen[0]
        raise UsageError(f"--phase {name}: the bundle's phases are {listed(names, 10, unquoted)}")
    now = now or _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None)
    for phase in phases:
        start, end = codabench.phase_datetime(phase.get("start")), codabench.phase_datetime(phase.get("end"))
        if start is not None and start <= now and (end is None or now < end):
            return phase
    return phases[0]


def lay_out(bundle: Archive, reference: str, target: Path) -> None:
    """A program or data entry of the bundle (a zip, or a folder the unpacker zips) extracted into ``target``."""
    name = codabench.bundle_path(reference)
    target.mkdir(parents=True, exist_ok=True)
    if name is not None and bundle.is_file(name):
        inner = Archive.from_bytes(bundle.read(name), f"{bundle.label}: {name}")
        extract(inner, target)
        return
    for member, _ in bundle.under(name or "").items():
        path = target / member
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(bundle.read(f"{name}/{member}" if name else member))


def prediction_step(submission: str, root: Path) -> Path:
    """The upload extracted and passed through a result submission's prediction step: the scoring step's input/res."""
    try:
        upload = Archive.open(submission)
    except EvalkitError as exc:
        raise Failed(f"Bad or empty zip file (the worker's words; {exc.one_line()})") from None
    staged = root / "prediction" / "program"
    try:
        if not upload.files and not upload.folders:
            # extractall of an empty zip creates nothing: no program folder, no output folder, and the worker's
            # push_output cannot write output/metadata
            raise Failed("the upload is an empty zip: the prediction step fails (the worker's words: Metadata file not found)")
        extract(upload, staged)
    except EvalkitError as exc:
        raise Failed(f"the upload cannot be extracted: {exc.one_line()}") from None
    finally:
        upload.close()
    if any((staged / name).exists() for name in codabench.PROGRAM_METADATA):
        raise Failed("the upload holds metadata.yaml (or metadata) at its root: Codabench would run it as the participant's "
                     "program (a code submission); evalkit competition run scores result submissions only")
    res = root / "input" / "res"
    shutil.copytree(staged, res, symlinks=True)
    (res / codabench.WORKER_METADATA).write_text(codabench.worker_metadata_text())
    return res


def local_command(command: str, root: Path, python: str) -> tuple[list[str], list[str]]:
    """(the words the container runs, the words run here): ``/app/...`` mapped onto ``root``, python3 onto ``python``."""
    replaced = codabench.replace_legacy_variables(command)
    try:
        words = shlex.split(replaced)
    except ValueError as exc:
        raise Failed(f"the command {replaced!r} cannot be split into words ({exc})") from None
    mounts = "|".join(sorted(codabench.MOUNTS, key=len, reverse=True))  # input_data before input: one pass, longest first
    container = re.compile(rf"{re.escape(codabench.CONTAINER_ROOT)}/({mounts})(?![A-Za-z0-9_])")
    local = [container.sub(lambda match: str(root / match.group(1)), word) for word in words]
    if local and local[0] in PYTHON_NAMES:
        local[0] = python
    return words, local


def _tail(path: Path) -> str:
    with open(path, "rb") as handle:
        handle.seek(max(0, path.stat().st_size - LOG_LIMIT))
        return handle.read().decode("utf-8", "replace")


def run_program(argv: list[str], cwd: Path, root: Path, limit: int) -> tuple[int | None, float, str, str]:
    """Run the scoring command (its own process group, killed whole at the time limit): (exit code or None
    when it timed out, seconds, stdout, stderr)."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1",
           "LANG": "C.UTF-8", "HOME": str(root / "home")}
    (root / "home").mkdir(exist_ok=True)
    out_path, err_path = root / "stdout.txt", root / "stderr.txt"
    start = time.monotonic()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        try:
            process = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as exc:
            raise Failed(f"the command {argv[0]!r} cannot be started ({exc.strerror or exc})") from None
        try:
            code: int | None = process.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            code = None
    return code, time.monotonic() - start, _tail(out_path), _tail(err_path)


def read_scores(output: Path, result: WorkerRun) -> dict:
    """scores.json, else scores.txt read as YAML (the worker's push_scores)."""
    import yaml

    if (output / codabench.WORKER_METADATA).exists():
        raise Failed("Error, the output directory already contains a metadata file. This file is used to store exitCode "
                     "and other data, do not write to this file manually.")
    if (output / codabench.SCORES_JSON).is_file():
        result.scores_file = codabench.SCORES_JSON
        try:
            scores = json.loads((output / codabench.SCORES_JSON).read_bytes())
        except (ValueError, UnicodeDecodeError) as exc:
            raise Failed(f"Could not decode scores json properly, it contains an error. ({exc})") from None
    elif (output / codabench.SCORES_TXT).is_file():
        result.scores_file = codabench.SCORES_TXT
        try:
            scores = yaml.safe_load((output / codabench.SCORES_TXT).read_text("utf-8"))
        except (yaml.YAMLError, UnicodeDecodeError) as exc:
            raise Failed(f"scores.txt is not YAML ({' '.join(str(exc).split())})") from None
    else:
        raise Failed("Could not find scores file, did the scoring program output it?")
    if not isinstance(scores, dict):
        raise Failed(f"{result.scores_file} must hold a mapping of column keys to scores, not {type(scores).__name__}")
    return scores


def leaderboard_row(competition: dict, scores: dict, result: WorkerRun) -> None:
    """Put ``scores`` on the first leaderboard as the score upload does (every phase gets leaderboards[0])."""
    columns = sorted(competition["leaderboards"][0]["columns"], key=lambda c: int(c["index"]))
    by_key = {str(c["key"]): c for c in columns}
    stored: dict[int, float] = {}
    for key, value in scores.items():
        column = by_key.get(str(key))
        if column is None:
            result.unmatched.append(str(key))
            continue
        problem = codabench.storable_score(value)
        if problem:
            raise Failed(f"score {key!r}: {problem}; Codabench cannot store it (its score upload fails, the leaderboard shows nothing)")
        stored[int(column["index"])] = float(value)
    for column in columns:
        listed = column.get("computation_indexes")
        if column.get("computation") and listed:
            values = [stored[int(i)] for i in listed if int(i) in stored]
            if values:
                stored[int(column["index"])] = codabench.column_value(values, column["computation"])
    result.row = [Cell(str(c.get("title", c["key"])), str(c["key"]), stored.get(int(c["index"])), int(c.get("precision", 2)))
                  for c in columns]


def score_task(bundle: Archive, competition: dict, phase: dict, task: dict, submission: str, python: str, result: WorkerRun) -> None:
    with tempfile.TemporaryDirectory(prefix="evalkit-codabench-") as folder:
        root = Path(folder)
        lay_out(bundle, task["scoring_program"], root / "program")
        if task.get("reference_data"):
            lay_out(bundle, task["reference_data"], root / "input" / "ref")
        prediction_step(submission, root)
        for name in ("output", "shared"):
            (root / name).mkdir()
        metadata = next((root / "program" / m for m in codabench.PROGRAM_METADATA if (root / "program" / m).is_file()), None)
        command = _command(metadata)
        result.command, local = local_command(command, root, python)
        limit = min(codabench.MAX_EXECUTION_TIME_LIMIT, int(phase.get("execution_time_limit") or codabench.DEFAULT_EXECUTION_TIME_LIMIT))
        code, result.elapsed, result.stdout, result.stderr = run_program(local, root / "program", root, limit)
        result.returncode = code
        result.output = {p.name: p.read_bytes() for p in sorted((root / "output").iterdir()) if p.is_file()}
        if code is None:
            raise Failed(f"Execution Time Limit exceeded. Limit was {limit} seconds")
        if code != 0:
            raise Failed(f"the scoring program exited with code {code}")
        result.scores.update(read_scores(root / "output", result))


def _command(metadata: Path | None) -> str:
    import yaml

    if metadata is None:
        raise Failed("the scoring program has no metadata.yaml: the worker runs nothing and finds no scores file")
    try:
        parsed = yaml.safe_load(metadata.read_text("utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise Failed(f"{metadata.name} is not YAML ({' '.join(str(exc).split())})") from None
    command = parsed.get("command") if isinstance(parsed, dict) else None
    if not isinstance(command, str) or not command.strip():
        raise Failed(f"{metadata.name} has no command: the worker runs nothing and finds no scores file")
    return command


def run_submission(bundle_path: str, submission: str, phase: str | None = None, python: str | None = None) -> WorkerRun:
    """Score ``submission`` (the zip a participant uploads) with the bundle at ``bundle_path``, as Codabench would.

    The bundle must pass ``evalkit competition check``. The result holds the
    failure Codabench would show (``None`` when scored), the scores read, the
    leaderboard row and the scoring output's files (``detailed_results.html``...).
    """
    from evalkit.competition.lint import lint_bundle
    from evalkit.io.manifest import build_manifest, input_entry
    from evalkit.io.textio import check_regular

    check_regular(submission)
    errors = [p for p in lint_bundle(bundle_path) if p.severity == "error"]
    if errors:
        raise UsageError(f"{bundle_path}: {len(errors)} problem(s), first: {errors[0].line()} (see evalkit competition check)")
    bundle = Archive.open(bundle_path)
    try:
        competition = load_yaml(bundle)
        chosen = pick_phase(competition, phase)
        tasks = {t["index"]: t for t in competition["tasks"]}
        result = WorkerRun(phase=str(chosen.get("name")), tasks=list(chosen["tasks"]))
        interpreter = python or sys.executable
        result.manifest = build_manifest(None, [input_entry("bundle", bundle_path), input_entry("submission", submission)],
                                         {"phase": result.phase, "python": interpreter}, command="competition run")
        try:
            for index in chosen["tasks"]:
                if "key" in tasks[index]:
                    raise Failed(f"task {index!r} is a task on the server (key); its programs are not in the bundle")
                score_task(bundle, competition, chosen, tasks[index], submission, interpreter, result)
            leaderboard_row(competition, result.scores, result)
        except Failed as failure:
            result.failure = str(failure)
        return result
    finally:
        bundle.close()
