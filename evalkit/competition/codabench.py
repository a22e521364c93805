"""What Codabench (v2 bundles, its compute worker) does, written down once for the bundle writer, the linter and
the local worker.

Sources, in ``codalab/codabench``: the unpacker (``src/apps/competitions/unpackers/v2.py``,
``base_unpacker.py``, ``utils.py``, ``tasks.py:unpack_competition``), the models and serializers
(``src/apps/leaderboards/models.py``, ``src/apps/api/serializers/leaderboards.py``,
``src/apps/api/serializers/competitions.py``, ``src/apps/competitions/models.py``), the score upload
(``src/apps/api/views/submissions.py:upload_submission_scores``) and the worker
(``compute_worker/compute_worker.py``). Default images: ``codalab/codalab-dockers`` (``Dockerfiles/``).
"""
from __future__ import annotations

import datetime as _dt
import decimal
import math
import posixpath
import re
from typing import Any, Callable

# ---------------------------------------------------------------- the bundle (unpacker, models, serializers)
YAML_NAME = "competition.yaml"  # at the zip root (unpack_competition)
SUPPORTED_VERSION = "2"  # str(yaml.get("version", "1")); "1" and "1.5" go to the v1.5 unpacker
DEFAULT_DOCKER_IMAGE = "codalab/codalab-legacy:py37"  # what a bundle without docker_image gets
COMPETITION_TITLE_MAX = 256  # Competition.title
DOCKER_IMAGE_MAX = 128  # Competition.docker_image
TASK_NAME_MAX = 256  # Task.name
PHASE_NAME_MAX = 256  # Phase.name
LEADERBOARD_TITLE_MAX = 64  # Leaderboard.title
LEADERBOARD_KEY_MAX = 36  # Leaderboard.key
COLUMN_TITLE_MAX = 36  # Column.title
COLUMN_KEY_MAX = 36  # Column.key
SUBMISSION_RULES = ("Add", "Add_And_Delete", "Add_And_Delete_Multiple", "Force_Last", "Force_Latest_Multiple", "Force_Best")
SORTINGS = ("desc", "asc")
COMPUTATIONS = ("avg", "sum", "min", "max")
IMAGE_TYPES = ("png", "jpeg", "gif", "webp")  # the logo: an image the Base64ImageField accepts
DEFAULT_EXECUTION_TIME_LIMIT = 600  # Phase.execution_time_limit default, seconds
MAX_EXECUTION_TIME_LIMIT = 600  # the default queue caps every phase's limit (MAX_EXECUTION_TIME_LIMIT env, 600)
DEFAULT_PRECISION = 2  # Column.precision
DEFAULT_MAX_SUBMISSIONS_PER_DAY = 5
DEFAULT_MAX_SUBMISSIONS = 100
# a score is stored as DecimalField(max_digits=20, decimal_places=10)
SCORE_MAX_DIGITS, SCORE_DECIMAL_PLACES = 20, 10

# ---------------------------------------------------------------- the compute worker
PYTHON_IMAGE = "codalab/codalab-legacy:py312"  # python:3.12-slim-bookworm + numpy 1.26.4, scipy, pandas, pyyaml (tini entrypoint)
CONTAINER_ROOT = "/app"
WORKING_DIR = "/app/program"  # the container's working directory
SCORES_JSON, SCORES_TXT = "scores.json", "scores.txt"
DETAILED_RESULTS = "detailed_results.html"
WORKER_METADATA = "metadata"  # written by the worker into output/ after each step; a program must not write it
PROGRAM_METADATA = ("metadata.yaml", "metadata")  # looked for, in this order, in a program folder
# the mount points of a scoring step, as paths inside the container
MOUNTS = ("program", "output", "input", "shared", "input_data", "ingested_program", "data")


def replace_legacy_variables(command: str, *, ingestion: bool = False, scoring: bool = True,
                             ingestion_only_during_scoring: bool = False) -> str:
    """The command as the container runs it: the worker's plain text replacements, in its order.

    ``$input`` is replaced first, so ``$input_data`` of a scoring program becomes
    ``/app/input_data`` by accident; ``$tmp`` is the output folder; ``$predictions``
    is ``input/res`` when scoring (the worker's ``replace_legacy_metadata_command``).
    """
    replacements = (
        ("$input", "/app/input_data" if ingestion else "/app/input"),
        ("$output", "/app/output"),
        ("$program", "/app/ingestion_program" if ingestion_only_during_scoring and scoring else "/app/program"),
        ("$ingestion_program", "/app/program"),
        ("$hidden", "/app/input/ref"),
        ("$shared", "/app/shared"),
        ("$submission_program", "/app/ingested_program"),
        ("$tmp", "/app/output"),
        ("$predictions", "/app/input/res" if scoring else "/app/output"),
    )
    for variable, path in replacements:
        command = command.replace(variable, path)
    return command


def worker_metadata_text() -> str:
    """What the worker writes to ``output/metadata`` after a step with no program run (a result submission's
    prediction step): ``yaml.dump`` of the program statuses, all null."""
    return "elapsedTime: null\nexitCode: null\ningestionElapsedTime: null\ningestionExitCode: null\n"


def extracted_name(member: str) -> str | None:
    """Where ``zipfile.ZipFile.extractall`` (the worker's and the unpacker's extraction) puts a member on Linux,
    relative to the target folder; ``None`` when nothing is left. Empty, ``.`` and ``..`` parts are dropped (so
    a leading slash too); a backslash or a drive letter is an ordinary character of a name on Linux."""
    parts = [part for part in member.split("/") if part not in ("", ".", "..")]
    return "/".join(parts) if parts else None


def bundle_path(reference: str) -> str | None:
    """A path named in competition.yaml as ``os.path.join(temp_directory, reference)`` resolves it, relative to
    the extracted bundle: ``""`` for the root itself, ``None`` for a path outside it (absolute, or climbing above)."""
    joined = posixpath.normpath(posixpath.join("/bundle", str(reference)))
    if joined == "/bundle":
        return ""
    return joined[len("/bundle/"):] if joined.startswith("/bundle/") else None


_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s.]+\Z")


def is_email(value: Any) -> bool:
    """An address Django's EmailField would take, roughly: one @, a dotted domain, no blanks, 256 characters at most."""
    return isinstance(value, str) and len(value) <= 256 and bool(_EMAIL.match(value))


# ---------------------------------------------------------------- dates (unpackers/utils.py get_datetime)
def phase_datetime(value: Any) -> _dt.datetime | None:
    """A phase date as the unpacker reads it: empty -> None; a YAML date -> midnight; text parsed by dateutil;
    any time zone replaced (not converted) by the server's, so every date compares as written."""
    if not value:
        return None
    if isinstance(value, _dt.datetime):
        return value.replace(tzinfo=None)
    if isinstance(value, _dt.date):
        return _dt.datetime.combine(value, _dt.time())
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not a date (write YYYY-MM-DD HH:MM:SS)")
    from dateutil import parser

    try:
        return parser.parse(value).replace(tzinfo=None)
    except (ValueError, OverflowError, TypeError) as exc:
        raise ValueError(f"{value!r} is not a date ({exc})") from None


def format_datetime(value: _dt.datetime) -> str:
    """The date format Codabench's documentation uses (``YYYY-MM-DD HH:MM:SS``, UTC)."""
    return value.strftime("%Y-%m-%d %H:%M:%S")


# ---------------------------------------------------------------- scores (SubmissionScore.score)
def storable_score(value: Any) -> str | None:
    """Why Codabench cannot store ``value`` as a score (``None`` when it can): a number, finite, at most
    10 digits before the decimal point."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str, decimal.Decimal)):
        return f"{value!r} is not a number"
    try:
        number = decimal.Decimal(str(value).strip()) if isinstance(value, str) else decimal.Decimal(value)
    except decimal.InvalidOperation:
        return f"{value!r} is not a number"
    if not number.is_finite() or (isinstance(value, float) and not math.isfinite(value)):
        return f"{value!r} is not finite"
    if abs(number) >= decimal.Decimal(10) ** (SCORE_MAX_DIGITS - SCORE_DECIMAL_PLACES):
        return f"{value!r} has more than {SCORE_MAX_DIGITS - SCORE_DECIMAL_PLACES} digits before the decimal point"
    return None


def column_value(scores: list[float], computation: str) -> float:
    """A computed column (``Column.compute``): avg, sum, min or max of the scores of its computation_indexes."""
    if computation == "avg":
        return sum(scores) / len(scores)
    aggregates: dict[str, Callable[[list[float]], float]] = {"sum": sum, "min": min, "max": max}
    return aggregates[computation](scores)
