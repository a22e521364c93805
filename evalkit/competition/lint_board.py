"""Codabench's rules for tasks, solutions, phases, leaderboards and columns (see :mod:`evalkit.competition.lint`)."""
from __future__ import annotations

from evalkit.competition import codabench
from evalkit.competition.lint_base import Bundle, check, is_int, mapping_items, rule

R_TASKS = rule("tasks", "`tasks` is a list of mappings, each with an `index` (V2Unpacker._unpack_tasks)")
R_TASK_INDEX = rule("task-index", "task indexes are unique (V2Unpacker._unpack_tasks: Duplicate task indexes)")
R_TASK_NAME = rule("task-name", "a task has a name of 1 to 256 characters (Task.name)")
R_SCORING = rule("task-scoring-program", "every task has a scoring_program (V2Unpacker._unpack_tasks)")
R_TASK_FILE = rule("task-file", "a task's scoring_program, reference_data, input_data and ingestion_program exist in the bundle "
                                "(BaseUnpacker._get_data_key: Cannot find dataset)")
R_SOLUTIONS = rule("solution", "a solution has an index, tasks that exist, and a path in the bundle or a key "
                               "(V2Unpacker._unpack_solutions)")
R_PHASES = rule("phases", "`phases` is a non-empty list of mappings, each with a name (V2Unpacker._unpack_phases, "
                          "CompetitionSerializer.validate_phases)")
R_PHASE_TASKS = rule("phase-tasks", "a phase lists at least one task, and only tasks that exist (_unpack_phases, _save_competition)")
R_PHASE_DATE = rule("phase-date", "a phase has a start date, and its dates are dates (get_datetime, Phase.start)")
R_PHASE_ORDER = rule("phase-order", "phases follow each other: each ends before the next starts, only the last may be open-ended "
                                    "(BaseUnpacker._validate_phase_ordering)")
R_PHASE_LIMITS = rule("phase-limits", "execution_time_limit is a positive integer, submission limits non-negative integers (Phase)")
R_AUTO_MIGRATE = rule("auto-migrate", "the first phase does not auto-migrate (CompetitionSerializer.validate_phases)")
R_LEADERBOARDS = rule("leaderboards", "`leaderboards` is a non-empty list of mappings (_unpack_leaderboards; every phase gets the first)")
R_BOARD_FIELDS = rule("leaderboard-fields", "a leaderboard has a title of at most 64 characters and a key of at most 36 (Leaderboard)")
R_RULE = rule("submission-rule", "submission_rule is one of Codabench's (Leaderboard.SUBMISSION_RULES)")
R_COLUMNS = rule("columns", "a leaderboard has at least one column, each a mapping with a title, a key and an index "
                            "(LeaderboardSerializer.validate_columns, Column)")
R_KEY_LENGTH = rule("column-key-length", "a column key has at most 36 characters (Column.key)")
R_TITLE_LENGTH = rule("column-title-length", "a column title has at most 36 characters (Column.title)")
R_KEY_UNIQUE = rule("column-key-unique", "column keys are unique in a leaderboard (validate_columns, Column unique_together)")
R_INDEX_UNIQUE = rule("column-index-unique", "column indexes are unique in a leaderboard (validate_columns)")
R_SORTING = rule("column-sorting", "sorting is desc or asc (Column.sorting)")
R_PRECISION = rule("column-precision", "precision is an integer (Column.precision)")
R_COMPUTATION = rule("column-computation", "computation is avg, sum, min or max, given with computation_indexes and never without "
                                           "(ColumnSerializer.validate)")
R_COMPUTATION_INDEXES = rule("computation-indexes", "computation_indexes are indexes of other columns of the leaderboard "
                                                    "(validate_columns, ColumnSerializer.validate)")
FILE_KEYS = ("scoring_program", "reference_data", "input_data", "ingestion_program")


def task_indexes(bundle: Bundle) -> dict:
    """Task index -> the task's mapping (the first of a duplicated index)."""
    found: dict = {}
    for _, task in mapping_items(bundle, "tasks"):
        if "index" in task and task["index"] not in found:
            found[task["index"]] = task
    return found


@check
def tasks(bundle: Bundle) -> None:
    if "tasks" not in bundle.yaml:
        bundle.add(R_TASKS, "tasks", "missing: No tasks listed in this competition")
        return
    seen = set()
    for where, task in mapping_items(bundle, "tasks", R_TASKS):
        if "index" not in task:
            bundle.add(R_TASKS, f"{where}.index", "missing: No index for task")
        elif task["index"] in seen:
            bundle.add(R_TASK_INDEX, f"{where}.index", f"{task['index']!r} is used by an earlier task (Duplicate task indexes)")
        else:
            seen.add(task["index"])
        if "key" in task:
            continue  # a task already on the server: Codabench ignores every other field
        name = task.get("name")
        if name is None or not str(name).strip() or len(str(name)) > codabench.TASK_NAME_MAX:
            bundle.add(R_TASK_NAME, f"{where}.name", f"{name!r}: a task needs a name of 1 to {codabench.TASK_NAME_MAX} characters")
        if "scoring_program" not in task:
            bundle.add(R_SCORING, f"{where}.scoring_program", "missing: the task does not have a scoring program")
        for key in FILE_KEYS:
            if key in task and bundle.file(task[key]) is None and not _looks_like_uuid(task[key]):
                bundle.add(R_TASK_FILE, f"{where}.{key}", f"{task[key]!r} is not in the bundle (Cannot find dataset)")


def _looks_like_uuid(value) -> bool:
    import uuid

    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return True


@check
def solutions(bundle: Bundle) -> None:
    known = task_indexes(bundle)
    for where, solution in mapping_items(bundle, "solutions", R_SOLUTIONS):
        if "index" not in solution:
            bundle.add(R_SOLUTIONS, f"{where}.index", "missing: No index for solution")
        listed = solution.get("tasks")
        if not isinstance(listed, list):
            bundle.add(R_SOLUTIONS, f"{where}.tasks", "missing: Could not find tasks for solution")
        else:
            for i, index in enumerate(listed):
                if index not in known:
                    bundle.add(R_SOLUTIONS, f"{where}.tasks[{i}]", f"{index!r} is not a task index (missing task index pointers)")
        if "key" not in solution:
            if "path" not in solution:
                bundle.add(R_SOLUTIONS, f"{where}.path", "missing: a solution needs a path (or the key of one on the server)")
            elif bundle.file(solution["path"]) is None:
                bundle.add(R_SOLUTIONS, f"{where}.path", f"{solution['path']!r} is not in the bundle (Cannot find dataset)")


@check
def phases(bundle: Bundle) -> None:
    if "phases" not in bundle.yaml:
        bundle.add(R_PHASES, "phases", "missing: Unable to find any phases for this competition")
        return
    items = mapping_items(bundle, "phases", R_PHASES)
    if not items:
        bundle.add(R_PHASES, "phases", "is empty: Competitions must have at least one phase")
        return
    known = task_indexes(bundle)
    # the unpacker sorts phases by `index` (absent: 0), stably, then checks them in that order
    ordered = sorted(items, key=lambda item: item[1].get("index", 0) if is_int(item[1].get("index", 0)) else 0)
    dates = []
    for position, (where, phase) in enumerate(ordered):
        name = phase.get("name")
        if name is None or not str(name).strip() or len(str(name)) > codabench.PHASE_NAME_MAX:
            bundle.add(R_PHASES, f"{where}.name", f"{name!r}: a phase needs a name of 1 to {codabench.PHASE_NAME_MAX} characters")
        listed = phase.get("tasks")
        if not isinstance(listed, list) or not listed:
            bundle.add(R_PHASE_TASKS, f"{where}.tasks", "missing: Phases must contain at least one task to be valid")
        else:
            for i, index in enumerate(listed):
                if index not in known:
                    bundle.add(R_PHASE_TASKS, f"{where}.tasks[{i}]", f"{index!r} is not the index of a task")
        for key in ("execution_time_limit",):
            if key in phase and phase[key] is not None and not (is_int(phase[key], 1)):
                bundle.add(R_PHASE_LIMITS, f"{where}.{key}", f"{phase[key]!r} is not a positive number of seconds")
        for key in ("max_submissions_per_day", "max_submissions"):
            if key in phase and phase[key] is not None and not is_int(phase[key]):
                bundle.add(R_PHASE_LIMITS, f"{where}.{key}", f"{phase[key]!r} is not a non-negative integer")
        if position == 0 and phase.get("auto_migrate_to_this_phase") is True:
            bundle.add(R_AUTO_MIGRATE, f"{where}.auto_migrate_to_this_phase", "You cannot auto migrate to the first phase of a competition")
        dates.append((where, phase, _dates(bundle, where, phase)))
    for (where1, phase1, (_, end1)), (where2, phase2, (start2, _)) in zip(dates, dates[1:]):
        label1 = phase1.get("name", where1)
        if end1 is None and phase1.get("end") in (None, ""):
            bundle.add(R_PHASE_ORDER, f"{where1}.end", f"missing: phase {label1!r} must have an end because a phase follows it")
        elif end1 is not None and start2 is not None and start2 <= end1:
            verb = "starts when" if start2 == end1 else "starts before"
            bundle.add(R_PHASE_ORDER, f"{where2}.start", f"phase {phase2.get('name', where2)!r} {verb} phase {label1!r} ends "
                                                           f"({codabench.format_datetime(end1)}); it must start after")


def _dates(bundle: Bundle, where: str, phase: dict):
    parsed = []
    for key in ("start", "end"):
        try:
            parsed.append(codabench.phase_datetime(phase.get(key)))
        except ValueError as exc:
            bundle.add(R_PHASE_DATE, f"{where}.{key}", str(exc))
            parsed.append(None)
            continue
    if parsed[0] is None and not phase.get("start"):
        bundle.add(R_PHASE_DATE, f"{where}.start", "missing: a phase needs a start date")
    if parsed[0] is not None and parsed[1] is not None and parsed[1] < parsed[0]:
        bundle.add(R_PHASE_DATE, f"{where}.end", "is before the phase's start")
    return parsed[0], parsed[1]


@check
def leaderboards(bundle: Bundle) -> None:
    if "leaderboards" not in bundle.yaml:
        bundle.add(R_LEADERBOARDS, "leaderboards", "missing: Could not find leaderboards in the competition yaml")
        return
    items = mapping_items(bundle, "leaderboards", R_LEADERBOARDS)
    if not items and isinstance(bundle.yaml.get("leaderboards"), list):
        bundle.add(R_LEADERBOARDS, "leaderboards", "is empty: every phase is given the first leaderboard")
    for where, board in items:
        title, key = board.get("title"), board.get("key")
        if title is None or not str(title).strip() or len(str(title)) > codabench.LEADERBOARD_TITLE_MAX:
            bundle.add(R_BOARD_FIELDS, f"{where}.title", f"{title!r}: give a title of 1 to {codabench.LEADERBOARD_TITLE_MAX} characters")
        if key is None or not str(key).strip() or len(str(key)) > codabench.LEADERBOARD_KEY_MAX:
            bundle.add(R_BOARD_FIELDS, f"{where}.key", f"{key!r}: give a key of 1 to {codabench.LEADERBOARD_KEY_MAX} characters")
        if "submission_rule" in board and board["submission_rule"] not in codabench.SUBMISSION_RULES:
            bundle.add(R_RULE, f"{where}.submission_rule", f"{board['submission_rule']!r} is not one of {', '.join(codabench.SUBMISSION_RULES)}")
        if "primary_index" in board and not is_int(board["primary_index"]):
            bundle.add(R_BOARD_FIELDS, f"{where}.primary_index", f"{board['primary_index']!r} is not a non-negative integer")
        columns(bundle, where, board)


def columns(bundle: Bundle, where: str, board: dict) -> None:
    items = board.get("columns")
    if not isinstance(items, list) or not items:
        bundle.add(R_COLUMNS, f"{where}.columns", "missing or empty: Leaderboards require at least 1 column")
        return
    keys: dict = {}
    indexes: dict = {}
    valid = []
    for i, column in enumerate(items):
        at = f"{where}.columns[{i}]"
        if not isinstance(column, dict):
            bundle.add(R_COLUMNS, at, f"must be a mapping, not {type(column).__name__}")
            continue
        for field_name in ("title", "key"):
            if column.get(field_name) is None or not str(column[field_name]).strip():
                bundle.add(R_COLUMNS, f"{at}.{field_name}", "missing: a column needs a title and a key")
        if not is_int(column.get("index")):
            bundle.add(R_COLUMNS, f"{at}.index", f"{column.get('index')!r} is not a non-negative integer")
        key, title = column.get("key"), column.get("title")
        if key is not None and len(str(key)) > codabench.COLUMN_KEY_MAX:
            bundle.add(R_KEY_LENGTH, f"{at}.key", f"{key!r} is {len(str(key))} characters; Codabench allows {codabench.COLUMN_KEY_MAX}")
        if title is not None and len(str(title)) > codabench.COLUMN_TITLE_MAX:
            bundle.add(R_TITLE_LENGTH, f"{at}.title", f"{title!r} is {len(str(title))} characters; Codabench allows {codabench.COLUMN_TITLE_MAX}")
        if key is not None and str(key) in keys:
            bundle.add(R_KEY_UNIQUE, f"{at}.key", f"{key!r} is also the key of {keys[str(key)]} (Columns must have unique keys)")
        elif key is not None:
            keys[str(key)] = at
        index = column.get("index")
        if is_int(index):
            if int(index) in indexes:
                bundle.add(R_INDEX_UNIQUE, f"{at}.index", f"{index!r} is also the index of {indexes[int(index)]} (Columns must have unique indexes)")
            else:
                indexes[int(index)] = at
        if "sorting" in column and column["sorting"] not in codabench.SORTINGS:
            bundle.add(R_SORTING, f"{at}.sorting", f"{column['sorting']!r} is not desc or asc")
        if "precision" in column and not is_int(column["precision"], None):
            bundle.add(R_PRECISION, f"{at}.precision", f"{column['precision']!r} is not an integer")
        valid.append((at, column))
    for at, column in valid:
        _computation(bundle, at, column, indexes)


def _computation(bundle: Bundle, at: str, column: dict, indexes: dict) -> None:
    computation, listed = column.get("computation"), column.get("computation_indexes")
    if computation is not None and computation not in codabench.COMPUTATIONS:
        bundle.add(R_COMPUTATION, f"{at}.computation", f"{computation!r} is not one of {', '.join(codabench.COMPUTATIONS)}")
    if "computation" in column and not listed:
        bundle.add(R_COMPUTATION, f"{at}.computation_indexes", "missing: a column with a computation needs the columns it acts upon")
    if listed and "computation" not in column:
        bundle.add(R_COMPUTATION, f"{at}.computation", "missing: computation_indexes without a computation function")
    if not listed:
        return
    for i, index in enumerate(listed if isinstance(listed, list) else [listed]):
        if not is_int(index, None):
            bundle.add(R_COMPUTATION_INDEXES, f"{at}.computation_indexes[{i}]", f"{index!r} is not an integer index")
        elif int(index) == column.get("index"):
            bundle.add(R_COMPUTATION_INDEXES, f"{at}.computation_indexes[{i}]", f"{index!r} is the column itself (Cannot self-reference)")
        elif int(index) not in indexes:
            bundle.add(R_COMPUTATION_INDEXES, f"{at}.computation_indexes[{i}]",
                       f"{index!r} does not exist in the column indexes {sorted(indexes)}")
