"""evalkit's own rules: what Codabench accepts at upload but fails (or shows as "n/a") when submissions are scored."""
from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from typing import Callable

from evalkit.competition import codabench
from evalkit.competition.archive import Archive
from evalkit.competition.lint_base import TEXT_LIMIT, Bundle, check, is_int, mapping_items, rule
from evalkit.competition.scoring import PROGRAM_CONFIG, REFERENCE_CONFIG
from evalkit.core.errors import EvalkitError

R_PRIMARY = rule("primary-index", "primary_index is the index of a column (Codabench ranks by that column; none: the page fails)")
R_ONE_BOARD = rule("one-leaderboard", "one leaderboard: Codabench attaches the first to every phase, so a second never gets scores")
R_COMMAND = rule("scoring-command", "the scoring program has metadata.yaml (or metadata) at its root with a `command` "
                                    "(else the worker runs nothing and finds no scores)")
R_SHELL = rule("command-shell", "the command uses no shell syntax (the worker splits it into words and runs it without a shell)")
R_TIME = rule("time-limit", "execution_time_limit is at most 600 s (Codabench's default queue caps it there)")
R_KEYS = rule("scores-keys", "an evalkit scoring program writes exactly the keys of the leaderboard's columns "
                             "(a key matching no column is dropped silently; a column without a key shows n/a)")
R_RULES = rule("submission-rules", "an evalkit scoring program's submission_rules is enforce or warn (evalkit.competition.rules)")
R_REFERENCE = rule("reference-data", "an evalkit scoring program's task has reference_data holding evalkit-reference.json and the gold it names")
NESTED_LIMIT = 256 << 20  # a program or data zip inside the bundle, read to look inside it
SHELL_WORDS = ("&&", "||", "|", ";", ">", ">>", "<", "2>", "2>&1", "&")


@dataclass
class Tree:
    """The files of a program or data entry as the worker lays them out (a zip extracted, or a bundle folder zipped)."""

    names: set[str]
    read: Callable[[str], bytes]


def tree_of(bundle: Bundle, reference) -> Tree | None:
    name = bundle.file(reference)
    if name is None:
        return None
    if bundle.archive.is_file(name):
        try:
            inner = Archive.from_bytes(bundle.archive.read(name, NESTED_LIMIT), f"{bundle.archive.label}: {name}")
        except EvalkitError:
            return Tree(set(), lambda _: b"")  # not a zip: the worker extracts nothing (Bad or empty zip file)
        return Tree(set(inner.files), lambda member: inner.read(member, TEXT_LIMIT))
    files = bundle.archive.under(name)
    return Tree(set(files), lambda member: bundle.archive.read(f"{name}/{member}" if name else member, TEXT_LIMIT))


def program_command(bundle: Bundle, where: str, tree: Tree) -> str | None:
    """The command of a scoring program, with a problem when the worker would find none."""
    import yaml

    metadata = next((m for m in codabench.PROGRAM_METADATA if m in tree.names), None)
    if metadata is None:
        nested = sorted(n for n in tree.names if n.rsplit("/", 1)[-1] in codabench.PROGRAM_METADATA)
        hint = f" (found {nested[0]}: zip the folder's contents, not the folder)" if nested else ""
        bundle.add(R_COMMAND, where, f"has no metadata.yaml at its root{hint}; the worker would run nothing")
        return None
    try:
        parsed = yaml.safe_load(tree.read(metadata).decode("utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError, EvalkitError) as exc:
        bundle.add(R_COMMAND, where, f"{metadata} cannot be read as YAML ({' '.join(str(exc).split())[:200]})")
        return None
    command = parsed.get("command") if isinstance(parsed, dict) else None
    if not isinstance(command, str) or not command.strip():
        bundle.add(R_COMMAND, where, f"{metadata} has no `command`; the worker would run nothing and find no scores")
        return None
    return command


def check_shell(bundle: Bundle, where: str, command: str) -> None:
    try:
        words = shlex.split(command)
    except ValueError as exc:
        bundle.add(R_SHELL, where, f"command {command!r} cannot be split into words ({exc})")
        return
    if words and words[0].rsplit("/", 1)[-1] in ("sh", "bash", "dash") and "-c" in words[1:2]:
        return
    used = [word for word in words if word in SHELL_WORDS or word.startswith(("$(", "`"))]
    if used:
        bundle.add(R_SHELL, where, f"command {command!r} uses {used[0]!r}, but no shell runs it (write `bash -c '...'` for one)")


def leaderboard_keys(bundle: Bundle) -> tuple[set[str], set[str]] | None:
    """(keys a scoring program should write, computed keys) of the first leaderboard, the one every phase gets."""
    boards = mapping_items(bundle, "leaderboards")
    if not boards:
        return None
    columns = [c for c in boards[0][1].get("columns") or [] if isinstance(c, dict) and c.get("key") is not None]
    written = {str(c["key"]) for c in columns if not c.get("computation")}
    return written, {str(c["key"]) for c in columns if c.get("computation")}


@check
def leaderboard_use(bundle: Bundle) -> None:
    boards = bundle.yaml.get("leaderboards")
    if not isinstance(boards, list):
        return
    if len(boards) > 1:
        bundle.add(R_ONE_BOARD, "leaderboards[1]", f"{len(boards)} leaderboards: every phase is given leaderboards[0]; "
                                                   "the others never receive scores", "warning")
    for i, board in enumerate(boards):
        if not isinstance(board, dict) or not isinstance(board.get("columns"), list):
            continue
        indexes = {int(c["index"]) for c in board["columns"] if isinstance(c, dict) and is_int(c.get("index"))}
        primary = board.get("primary_index", 0)
        if is_int(primary) and indexes and int(primary) not in indexes:
            bundle.add(R_PRIMARY, f"leaderboards[{i}].primary_index", f"{primary!r} is not a column index {sorted(indexes)}")


@check
def scoring_programs(bundle: Bundle) -> None:
    expected = leaderboard_keys(bundle)
    for where, task in mapping_items(bundle, "tasks"):
        if "key" in task or "scoring_program" not in task:
            continue
        tree = tree_of(bundle, task["scoring_program"])
        if tree is None:
            continue  # reported by task-file
        command = program_command(bundle, f"{where}.scoring_program", tree)
        if command:
            check_shell(bundle, f"{where}.scoring_program", command)
        if PROGRAM_CONFIG in tree.names:
            evalkit_program(bundle, where, task, tree, expected)


def evalkit_program(bundle: Bundle, where: str, task: dict, tree: Tree, expected) -> None:
    try:
        config = json.loads(tree.read(PROGRAM_CONFIG))
        written = [str(c["key"]) for c in config["columns"]]
    except (ValueError, KeyError, TypeError, EvalkitError) as exc:
        bundle.add(R_KEYS, f"{where}.scoring_program", f"{PROGRAM_CONFIG} cannot be read ({exc})")
        return
    submission_rules(bundle, where, config)
    if expected is not None:
        columns, computed = expected
        for key in written:
            if key not in columns | computed:
                bundle.add(R_KEYS, "leaderboards[0].columns", f"the scoring program of {where} writes {key!r}, which no column has "
                                                              "(Codabench would drop it silently)")
        for key in sorted(columns - set(written)):
            bundle.add(R_KEYS, "leaderboards[0].columns", f"column {key!r} is never written by the scoring program of {where} "
                                                          "(its leaderboard cell would read n/a)")
    reference = tree_of(bundle, task["reference_data"]) if "reference_data" in task else None
    if reference is None or REFERENCE_CONFIG not in reference.names:
        bundle.add(R_REFERENCE, f"{where}.reference_data", f"missing or without {REFERENCE_CONFIG}: the evalkit program has no gold to score against")
        return
    try:
        settings = json.loads(reference.read(REFERENCE_CONFIG))
        gold = settings["gold"]
    except (ValueError, KeyError, TypeError, EvalkitError) as exc:
        bundle.add(R_REFERENCE, f"{where}.reference_data", f"{REFERENCE_CONFIG} cannot be read ({exc})")
        return
    if gold not in reference.names:
        bundle.add(R_REFERENCE, f"{where}.reference_data", f"names the gold {gold!r}, which it does not hold")


def submission_rules(bundle: Bundle, where: str, config: dict) -> None:
    """The submission rules the program applies, as a note; a value it would refuse, as a problem."""
    from evalkit.competition.rules import MODE_TEXT

    if "submission_rules" not in config:
        bundle.note("submission rules: not recorded (a bundle built before evalkit applied them: its scoring program "
                    "scores what `evalkit validate` calls INVALID; rebuild it to enforce the task's rules)")
        return
    mode = config["submission_rules"]
    if mode not in MODE_TEXT:
        bundle.add(R_RULES, f"{where}.scoring_program", f"{PROGRAM_CONFIG} has submission_rules {mode!r}; the scoring program "
                                                        f"takes {' or '.join(map(repr, MODE_TEXT))} (every submission would fail)")
        return
    if _declares_no_format(config.get("task")):
        bundle.note(f"submission rules: none to apply (task {config['task']} declares no submission format: every run "
                    "evalkit reads is scored)")
        return
    bundle.note(f"submission rules: {mode}: {MODE_TEXT[mode]}")


def _declares_no_format(name) -> bool:
    """Whether ``name`` is a task of this evalkit that has no official submission format (a plugin task: unknown here)."""
    from evalkit.tasks import get_task

    try:
        return isinstance(name, str) and get_task(name).submission_format is None
    except EvalkitError:
        return False


@check
def time_limits(bundle: Bundle) -> None:
    for where, phase in mapping_items(bundle, "phases"):
        limit = phase.get("execution_time_limit")
        if is_int(limit, 1) and int(limit) > codabench.MAX_EXECUTION_TIME_LIMIT:
            bundle.add(R_TIME, f"{where}.execution_time_limit", f"{limit} s: Codabench's default queue stops submissions after "
                                                                 f"{codabench.MAX_EXECUTION_TIME_LIMIT} s", "warning")
