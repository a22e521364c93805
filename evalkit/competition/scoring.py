"""The scoring program of an evalkit bundle, as it runs in Codabench's compute worker.

``python3 $program/score.py $input $output`` (the worker makes these
``/app/program``, ``/app/input``, ``/app/output``): the participant's files
are in ``input/res`` (with the worker's own ``metadata`` file beside them),
the gold and its phase settings in ``input/ref``. It scores the submission
as ``evalkit score`` does (the task's own ``score``) under the task and options the organiser fixed at
bundle time (``evalkit-scoring.json`` in the program, never anything a
participant's file says), then writes ``output/scores.json`` (exactly the
leaderboard's column keys, every value finite) and
``output/detailed_results.html``. It writes nothing else anywhere (no
``output/metadata``: the worker's own) and reads no bytecode cache.

A submission that breaks the task's submission rules (what ``evalkit
validate`` calls INVALID: :mod:`evalkit.competition.rules`) fails before it
is scored, unless the bundle relaxed them (``--submission-rules warn``).
An invalid submission ends with ONE line on stderr (what the participant
sees in Codabench's log), exit code 2, no traceback and no scores: an
undefined figure (ClimateCheck Subtask II without labels) is such a failure,
never a NaN Codabench cannot store. A bug ends as one line and exit code 1.
"""
from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from evalkit.core.errors import EvalkitError, InputError, PartialRunError, UsageError
from evalkit.core.jsonout import strict

PROGRAM_CONFIG = "evalkit-scoring.json"
REFERENCE_CONFIG = "evalkit-reference.json"
MANIFEST = "evalkit-manifest.json"  # in output/: what was scored, with which evalkit (the scoring output's manifest)
WORKER_METADATA = "metadata"  # the file the worker leaves in input/res (and writes into output/ itself)
IGNORED = ("__MACOSX",)  # folders of an upload that hold no data (macOS resource forks)
MAX_ENTRIES = 1000  # files and folders looked at in input/res
MAX_DEPTH = 8


class SubmissionError(EvalkitError):
    """What is wrong with the participant's upload (the one line they read)."""


class SetupError(EvalkitError):
    """What is wrong with the organiser's side: the program's configuration, the reference data."""


@dataclass(frozen=True)
class ScoredSubmission:
    """What the scoring program wrote: the scores by column key, the file it scored (relative to input/res), notes."""

    scores: dict[str, float]
    path: str  # the submission file, relative to input/res
    notes: list[str]


def read_json(path: Path, what: str) -> dict:
    from evalkit.io.textio import parse_json, read_input_bytes

    if not path.is_file():
        raise UsageError(f"{what} {path.name} is missing from {path.parent} (rebuild the bundle with evalkit competition bundle)")
    value = parse_json(read_input_bytes(path, 1 << 20), str(path))
    if not isinstance(value, dict):
        raise InputError(str(path), "is not a JSON object")
    return value


def find_submission(res: Path, member: str | None) -> Path:
    """The participant's file in ``res``, relative to it: the only data file (in any folder: a zip re-zipped
    with its folder is found), or the one named ``member`` among several. Symbolic links, dotfiles, macOS
    folders and the worker's ``metadata`` are never read."""
    found: list[str] = []
    links: list[str] = []
    seen = 0

    def walk(folder: Path, relative: str, depth: int) -> None:
        nonlocal seen
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            raise SubmissionError(f"the submission cannot be read ({exc.strerror or exc})") from None
        for entry in entries:
            seen += 1
            if seen > MAX_ENTRIES:
                raise SubmissionError(f"the submission holds more than {MAX_ENTRIES} files; upload a zip holding only {member or 'the run'}")
            name = f"{relative}{entry.name}"
            if entry.name.startswith(".") or entry.name in IGNORED or (not relative and entry.name == WORKER_METADATA):
                continue
            if entry.is_symlink():
                links.append(name)
            elif entry.is_dir(follow_symlinks=False):
                if depth >= MAX_DEPTH:
                    raise SubmissionError(f"the submission's folders nest deeper than {MAX_DEPTH} levels ({name}/)")
                walk(Path(entry.path), f"{name}/", depth + 1)
            elif entry.is_file(follow_symlinks=False):
                found.append(name)

    walk(res, "", 0)
    expected = f"a zip holding {member}" if member else "a zip holding the run file"
    if not found:
        detail = f" (symbolic links are not read: {', '.join(links[:3])})" if links else ""
        raise SubmissionError(f"the submission holds no file{detail}; upload {expected}")
    if len(found) == 1:
        return Path(found[0])
    named = [name for name in found if member and name.rsplit("/", 1)[-1] == member]
    if len(named) == 1:
        return Path(named[0])
    shown = ", ".join(found[:5]) + (f" and {len(found) - 5} more" if len(found) > 5 else "")
    raise SubmissionError(f"the submission holds {len(found)} files ({shown}); upload {expected} and nothing else")


def load_task(config: dict, program: Path):
    """The task the organiser chose; a plugin task's own code travels in the program folder."""
    from evalkit.tasks import get_task, register

    plugin = config.get("plugin")
    if plugin:
        import importlib

        if str(program) not in sys.path:
            sys.path.insert(0, str(program))
        cls = getattr(importlib.import_module(plugin["module"]), plugin["class"])
        register(cls)
    return get_task(config["task"])


def check_figures(values: dict[str, float], columns: list[dict], undefined: str | None) -> dict[str, float]:
    """The scores by column key; one clear failure for a figure that is missing or undefined."""
    from evalkit.competition.codabench import storable_score

    scores = {}
    for column in columns:
        label, key = column["label"], column["key"]
        if label not in values:
            raise SetupError(f"the task reported no figure {label!r} for leaderboard column {key!r} (a task changed since the bundle?)")
        value = values[label]
        if value is None or not math.isfinite(value):
            reason = undefined or "the figure has no value for this submission"
            raise SubmissionError(f"{label} is undefined: {reason}; Codabench cannot store an undefined score")
        problem = storable_score(value)
        if problem:
            raise SubmissionError(f"{label}: {problem}; Codabench cannot store it")
        scores[key] = float(value)
    return scores


def score_run(task, qrels, run, scoring) -> tuple:
    """(the run scored as ``evalkit score`` scores it, its manifest): the task's own ``score`` under ``scoring``."""
    from evalkit.io.reading import input_entry
    from evalkit.io.manifest import build_manifest
    from evalkit.scoring.runset import score_one

    name = Path(run.source.path).name if run.source is not None else run.name
    scored = score_one(task, qrels, run, name, scoring.metrics, scoring)
    options = {"metrics": list(scored.score.values), "missing": scored.score.missing, "relevance_level": scoring.relevance_level,
               "allow_partial": scoring.allow_partial}
    if scoring.depth is not None:
        options["depth"] = scoring.depth
    manifest = build_manifest(task.name, [input_entry("run", run), input_entry("gold", qrels)], options, command="competition scoring")
    return scored, manifest


def score_submission(program: Path, input_dir: Path, output_dir: Path) -> ScoredSubmission:
    """Score ``input_dir/res`` against ``input_dir/ref`` and write scores.json and detailed_results.html."""
    from evalkit.competition.results_page import full_page, summary_page
    from evalkit.competition.rules import ENFORCE, apply_rules, check_mode
    from evalkit.io.reading import as_qrels, as_run
    from evalkit.core.options import ScoringOptions
    from evalkit.io.transactions import atomic_write
    from evalkit.io.textio import MAX_INPUT_ENV

    try:
        config = read_json(program / PROGRAM_CONFIG, "the scoring program's configuration")
        ref = read_json(input_dir / "ref" / REFERENCE_CONFIG, "the reference data's configuration")
        if config.get("max_input_size"):
            os.environ[MAX_INPUT_ENV] = str(int(config["max_input_size"]))
        task = load_task(config, program)
        scoring = ScoringOptions.of(task=task.name, **config.get("options", {}))
        rules = check_mode(config.get("submission_rules", ENFORCE))
        qrels = as_qrels(str(input_dir / "ref" / ref["gold"]), format=scoring.gold_format)
    except EvalkitError as exc:
        raise SetupError(exc.one_line()) from None
    res = input_dir / "res"
    if not res.is_dir():
        raise SubmissionError("no submission: input/res is missing")
    fmt = task.submission_format
    relative = find_submission(res, fmt.member if fmt is not None else None)
    os.chdir(res)  # every message names the file as the participant zipped it
    failure, rule_notes = apply_rules(task, relative, input_dir / "ref" / ref["gold"], rules)
    if failure is not None:
        raise SubmissionError(failure)
    run = as_run(str(relative), format=scoring.run_format, column=scoring.column)
    try:
        scored, manifest = score_run(task, qrels, run, scoring)
    except PartialRunError:  # said for a participant: no gold path, no command-line option to pass
        evaluation = score_run(task, qrels, run, ScoringOptions.of(scoring, allow_partial=True))[0].score.evaluation
        answered = evaluation.n_gold - len(evaluation.gold_only)
        raise SubmissionError(f"{relative}: answers only {answered} of the {evaluation.n_gold} queries of this phase "
                              f"({len(evaluation.run_only)} of its queries are not in this phase): a file for another phase?") from None
    scores = check_figures(scored.score.values, config["columns"], scored.score.undefined)
    manifest["competition"] = {"title": config.get("title"), "phase": ref.get("phase"), "submission_rules": rules,
                               "columns": {c["key"]: c["label"] for c in config["columns"]}}
    title = f"{config.get('title') or task.name}: {ref.get('phase', '')} phase"
    if ref.get("detailed_results", "summary") == "full":
        page = full_page(title, task, qrels, scored, manifest)
    else:
        page = summary_page(title, task, config["columns"], scored.score, str(relative), manifest)
    atomic_write(output_dir / "detailed_results.html", page, force=True)
    atomic_write(output_dir / MANIFEST, strict(manifest, str(output_dir / MANIFEST), indent=2) + "\n", force=True)
    atomic_write(output_dir / "scores.json", strict(scores, str(output_dir / "scores.json"), indent=2) + "\n", force=True)
    return ScoredSubmission(scores, str(relative), [*rule_notes, *scored.score.evaluation.warnings, *scored.score.notes])


def main(program: str | os.PathLike, argv: list[str] | None = None) -> int:
    """``score.py INPUT OUTPUT``: the exit code; one line on stderr on failure."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: score.py INPUT OUTPUT (Codabench: python3 $program/score.py $input $output)", file=sys.stderr)
        return 2
    input_dir, output_dir = Path(args[0]).absolute(), Path(args[1]).absolute()
    try:
        if not output_dir.is_dir():
            raise SetupError(f"output folder {output_dir} does not exist")
        done = score_submission(Path(program).absolute(), input_dir, output_dir)
    except SetupError as exc:
        print(f"scoring program error (organisers: check the bundle with evalkit competition check): {exc.one_line()}", file=sys.stderr)
        return 1
    except EvalkitError as exc:
        print(f"invalid submission: {exc.one_line()}", file=sys.stderr)
        return 2
    except MemoryError:
        print("invalid submission: too large to score in the memory of the scoring machine", file=sys.stderr)
        return 2
    except RecursionError:
        print("invalid submission: nested too deeply to read", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - a bug is one line too: the participant's log is no place for a traceback
        print(f"scoring program error (evalkit): {type(exc).__name__}: {' '.join(str(exc).split())[:500]}", file=sys.stderr)
        return 1
    for note in done.notes:
        print(f"note: {note}")
    print(f"scored {done.path}: " + ", ".join(f"{key} = {value:.6g}" for key, value in done.scores.items()))
    return 0
