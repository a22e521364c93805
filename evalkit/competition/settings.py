"""What an organiser chooses for a bundle, checked before any work, the task's own settings as defaults.

Defaults follow Codabench's (5 submissions a day, 100 in all) and what a
shared task expects: the last submission counts (``Force_Last``), four
decimals on the leaderboard, the full evalkit page as detailed results in a
phase whose gold is public (a phase named dev, train, practice or
validation) and a summary elsewhere (the test gold stays hidden). Phases
follow each other: without dates the first starts today (UTC), each lasts
four weeks, the last is open-ended.
"""
from __future__ import annotations

import datetime as _dt
from dataclasses import asdict, dataclass, field, replace
from typing import Mapping, Sequence, TypeVar

from evalkit.competition import codabench
from evalkit.competition.results_page import DETAIL_MODES
from evalkit.competition.rules import ENFORCE, check_mode
from evalkit.core.errors import UsageError, listed, unquoted
from evalkit.core.options import ScoringOptions

PUBLIC_GOLD_PHASES = ("dev", "train", "practice", "valid")  # a phase whose name holds one of these shows the full page
DEFAULT_PHASE_DAYS = 28
DEFAULT_TIME_LIMIT = 300  # seconds; evalkit scores a 4b submission in about a second
DEFAULT_MAX_SUBMISSION = 256 << 20  # bytes a submission may hold or expand to

T = TypeVar("T")


def preset_of(task_name: str):
    """The task's own competition settings (:class:`~evalkit.tasks.base.CompetitionPreset`), or ``None``."""
    from evalkit.tasks import get_task

    try:
        return get_task(task_name).competition
    except UsageError:
        return None


@dataclass(frozen=True)
class PhaseSettings:
    name: str
    gold: str
    start: _dt.datetime
    end: _dt.datetime | None
    description: str
    detailed_results: str
    max_submissions_per_day: int = codabench.DEFAULT_MAX_SUBMISSIONS_PER_DAY
    max_submissions: int = codabench.DEFAULT_MAX_SUBMISSIONS
    execution_time_limit: int = DEFAULT_TIME_LIMIT

    @property
    def start_text(self) -> str:
        return codabench.format_datetime(self.start)

    @property
    def end_text(self) -> str | None:
        return codabench.format_datetime(self.end) if self.end else None


@dataclass(frozen=True)
class BundleSettings:
    task: str
    phases: tuple[PhaseSettings, ...]
    title: str
    description: str = ""
    terms: str | None = None  # the terms page's text (None: evalkit's default terms)
    docker_image: str = codabench.PYTHON_IMAGE
    submission_rule: str = "Force_Last"
    precision: int = 4
    scoring: ScoringOptions = field(default_factory=ScoringOptions)  # how every submission is scored (task: the bundle's)
    max_submission_size: int = DEFAULT_MAX_SUBMISSION
    contact_email: str | None = None
    submission_rules: str = ENFORCE  # what `evalkit validate` calls INVALID fails a submission (evalkit.competition.rules)

    def scoring_options(self) -> dict:
        """The scoring options as the scoring program's configuration stores them (JSON; the task apart)."""
        chosen = asdict(self.scoring)
        del chosen["task"]
        chosen["metrics"] = list(chosen["metrics"]) if chosen["metrics"] else None
        return chosen

    def options_for(self, task_name: str, **changes) -> ScoringOptions:
        return ScoringOptions.of(self.scoring, task=task_name, **changes)


def _date(value, what: str) -> _dt.datetime:
    try:
        parsed = codabench.phase_datetime(value)
    except ValueError as exc:
        raise UsageError(f"{what}: {exc}") from None
    if parsed is None:
        raise UsageError(f"{what}: empty date")
    return parsed


def _by_phase(values: Mapping[str, T] | None, names: Sequence[str], what: str) -> dict[str, T]:
    values = dict(values or {})
    unknown = [n for n in values if n not in names]
    if unknown:
        raise UsageError(f"{what} names phase {unknown[0]!r}, which is not a phase (phases: {listed(names, 10, unquoted)})")
    return values


def phase_settings(
    task_name: str,
    phases: Sequence[tuple[str, str]],
    *,
    starts: Mapping[str, object] | None = None,
    ends: Mapping[str, object] | None = None,
    detailed: Mapping[str, str] | None = None,
    descriptions: Mapping[str, str] | None = None,
    today: _dt.date | None = None,
    **limits: int,
) -> tuple[PhaseSettings, ...]:
    """The phases in order with their dates (given, or consecutive four-week phases from today, the last open-ended)."""
    if not phases:
        raise UsageError("a competition needs at least one phase: --phase NAME:GOLD (e.g. --phase dev:dev_gold.tsv)")
    names = [name for name, _ in phases]
    for name in names:
        if not name or not name.strip() or len(name) > codabench.PHASE_NAME_MAX:
            raise UsageError(f"phase name {name!r}: give a name of 1 to {codabench.PHASE_NAME_MAX} characters")
    if len(set(names)) != len(names):
        raise UsageError(f"phase {next(n for n in names if names.count(n) > 1)!r} is given twice")
    starts, ends = _by_phase(starts, names, "--start"), _by_phase(ends, names, "--end")
    detailed, descriptions = _by_phase(detailed, names, "--detailed"), _by_phase(descriptions, names, "a description")
    preset = preset_of(task_name)
    today = today or _dt.datetime.now(_dt.timezone.utc).date()
    result: list[PhaseSettings] = []
    previous_end: _dt.datetime | None = None
    for position, (name, gold) in enumerate(phases):
        last = position == len(phases) - 1
        if name in starts:
            start = _date(starts[name], f"--start {name}")
        elif previous_end is not None:
            start = previous_end + _dt.timedelta(seconds=1)
        else:
            start = _dt.datetime.combine(today, _dt.time())
        end: _dt.datetime | None
        if name in ends:
            end = _date(ends[name], f"--end {name}")
        else:
            end = None if last else start + _dt.timedelta(days=DEFAULT_PHASE_DAYS, seconds=-1)
        mode = str(detailed.get(name) or ("full" if any(word in name.lower() for word in PUBLIC_GOLD_PHASES) else "summary"))
        if mode not in DETAIL_MODES:
            raise UsageError(f"--detailed {name}={mode}: choose {' or '.join(DETAIL_MODES)}")
        text = str(descriptions.get(name) or (preset.phases.get(name.lower(), "") if preset else "") or f"Phase {name}.")
        if end is not None and end <= start:
            raise UsageError(f"--end {name}: the phase ends ({end}) before it starts ({start})")
        if result and (previous_end is None or start <= previous_end):
            before = result[-1].name
            raise UsageError(f"phase {before!r} must end before phase {name!r} starts (Codabench: phases follow each other): "
                             f"give --end {before}=DATE and --start {name}=DATE after it")
        result.append(PhaseSettings(name, str(gold), start, end, text, mode, **limits))
        previous_end = end
    return tuple(result)


def bundle_settings(task_name: str, phases: tuple[PhaseSettings, ...], *, title: str | None = None,
                    description: str | None = None, **options) -> BundleSettings:
    """The settings with the task's preset title and description where none is given; numbers checked."""
    preset = preset_of(task_name)
    chosen_title = title or (preset.title if preset else f"{task_name} shared task")
    settings = BundleSettings(task_name, phases, chosen_title, description if description is not None else (preset.description if preset else ""),
                              **options)
    if not 1 <= len(settings.title) <= codabench.COMPETITION_TITLE_MAX:
        raise UsageError(f"--title: give 1 to {codabench.COMPETITION_TITLE_MAX} characters")
    if settings.contact_email is not None and not codabench.is_email(settings.contact_email):
        raise UsageError(f"--contact-email {settings.contact_email!r}: not an e-mail address")
    if settings.submission_rule not in codabench.SUBMISSION_RULES:
        raise UsageError(f"--submission-rule {settings.submission_rule}: choose one of {', '.join(codabench.SUBMISSION_RULES)}")
    check_mode(settings.submission_rules)
    if not 0 <= settings.precision <= 10:
        raise UsageError(f"--precision {settings.precision}: give 0 to 10 decimals (Codabench stores 10)")
    for phase in phases:
        if not 1 <= phase.execution_time_limit <= codabench.MAX_EXECUTION_TIME_LIMIT:
            raise UsageError(f"--time-limit {phase.execution_time_limit}: give 1 to {codabench.MAX_EXECUTION_TIME_LIMIT} seconds "
                             "(Codabench's default queue caps every phase at 600)")
        if phase.max_submissions_per_day < 0 or phase.max_submissions < 0:
            raise UsageError("submission limits must not be negative")
    return replace(settings, docker_image=settings.docker_image or codabench.PYTHON_IMAGE)
