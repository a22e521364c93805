"""Regression baselines for CI: recorded scores that ``evalkit check --baseline FILE`` recomputes.

Not the baseline *run* of ``evalkit compare`` / ``report`` (the first run, the
reference the others are tested against): this module is the CI gate only.
A regression baseline is a JSON file::

    {"evalkit_baseline": 1, "tolerance": 0.001,
     "entries": [{"name": "...", "task": "checkthat2025-4b", "gold": "...",
                  "run": "...", "metric": "MRR@5", "expected": 0.7028}]}

``gold`` and ``run`` are stored relative to the baseline file's folder, so a
baseline in ``bench/baselines/`` can point at ``../../../shared/data/...`` and
works from any working directory. An entry may also set ``missing`` and
``allow_partial`` (the options of ``evalkit score``). A score that drops by
more than the tolerance is a regression; one that rises is reported as an
improvement. Expected values and the tolerance must be finite (and the
tolerance not negative), and a score that cannot be computed now (an error,
NaN) is never "ok": the gate cannot be green by accident. ``--add`` and
``--update`` hold an exclusive lock (``FILE.lock``, :func:`locked`) around
their read-modify-write and replace the file atomically, so concurrent
writers never lose an entry.
"""
from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from evalkit.core.errors import EvalkitError, InputError, UsageError
from evalkit.core.jsonout import strict
from evalkit.scoring.check_schema import FORMAT_VERSION

DEFAULT_TOLERANCE = 0.001
OFFICIAL = "official"


@dataclass
class Entry:
    name: str
    task: str
    gold: str  # relative to the baseline's folder (as stored)
    run: str
    metric: str
    expected: float
    options: dict[str, Any] = field(default_factory=dict)  # missing, allow_partial

    def key(self) -> tuple[str, str, str, str]:
        return (self.task, self.gold, self.run, self.metric)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        options = data.pop("options")
        data.update({k: v for k, v in options.items() if v not in (None, False)})
        return data


@dataclass
class Result:
    entry: Entry
    now: float | None = None
    error: str | None = None

    @property
    def delta(self) -> float | None:
        return None if self.now is None else self.now - self.entry.expected

    def status(self, tolerance: float) -> str:
        if self.error is not None:
            return "error"
        assert self.now is not None  # a result holds an error or a score (BaselineChecker.measure)
        if not math.isfinite(self.now):
            return "error"  # NaN compares false both ways: it must not read as "ok"
        delta = self.now - self.entry.expected  # self.delta, a number here
        if delta < -tolerance:
            return "DROPPED"
        return "improved" if delta > tolerance else "ok"


@dataclass
class RegressionBaseline:
    path: Path
    entries: list[Entry]
    tolerance: float = DEFAULT_TOLERANCE
    description: str = ""

    @property
    def folder(self) -> Path:
        return self.path.parent

    def resolve(self, stored: str) -> Path:
        return self.folder / stored

    def relative(self, user_path: str | os.PathLike) -> str:
        """How a path given on the command line (relative to the cwd) is stored."""
        return Path(os.path.relpath(os.path.abspath(user_path), os.path.abspath(self.folder))).as_posix()

    def to_json(self) -> str:
        data = {"evalkit_baseline": FORMAT_VERSION, "description": self.description, "tolerance": self.tolerance}
        data["entries"] = [e.to_json() for e in self.entries]
        return strict(data, f"baseline {self.path}", indent=2) + "\n"

    def save(self) -> None:
        from evalkit.io.transactions import atomic_write

        atomic_write(self.path, self.to_json(), force=True)


@contextlib.contextmanager
def locked(path: str | os.PathLike) -> Iterator[None]:
    """An exclusive advisory lock (``fcntl.flock``) on the folder of ``path`` for a read-modify-write.

    The folder, not the file, is locked: the file is replaced atomically (a new
    inode), and no lock file is left behind.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no lock
        yield
        return
    folder = Path(path).parent if str(Path(path).parent) else Path(".")
    if not folder.is_dir():
        from evalkit.io.transactions import output_label

        raise UsageError(f"{output_label(path)}: output folder {folder} does not exist")
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError as exc:
        raise UsageError(f"{folder}: cannot open the folder to lock {path} ({exc.strerror or exc})") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def load(path: str | os.PathLike, create: bool = False) -> RegressionBaseline:
    """Read a baseline; ``create`` gives an empty one when the file does not exist yet."""
    from evalkit.scoring import check_schema as schema
    from evalkit.io.transactions import check_writable
    from evalkit.io.textio import parse_json
    from evalkit.io.textio import load as load_text

    target = Path(path)
    if create and not target.exists():
        check_writable(target)
        return RegressionBaseline(target, [])
    data = parse_json(load_text(target).text(), str(path), pairs_hook=schema.unique_keys)
    top, items = schema.check(data, str(path))
    check_metrics(items, str(path))
    entries = [
        Entry(item.get("name") or Path(item["run"]).name, item["task"], item["gold"], item["run"], item["metric"], item["expected"],
              {k: item[k] for k in ("missing", "allow_partial") if k in item})
        for item in items
    ]
    return RegressionBaseline(target, entries, top.get("tolerance", DEFAULT_TOLERANCE), top.get("description", ""))


def check_metrics(items: list[dict[str, Any]], path: str) -> None:
    """Refuse an entry naming a known measure with parameters outside its declaration (``rbp.p=2``): the file is
    wrong, whatever else it holds. A name evalkit does not know may be a task's own label and is left to the scorer."""
    from evalkit.metrics import parse_metrics
    from evalkit.metrics.parameters import ParameterError

    for number, item in enumerate(items, start=1):
        try:
            parse_metrics(item["metric"])
        except ParameterError as problem:
            raise InputError(path, f"entry {number}: {problem}") from None
        except UsageError:
            pass


class Scorer:
    """Recomputes entries, reading each gold file once."""

    def __init__(self, baseline: RegressionBaseline):
        self.baseline = baseline
        self._gold: dict[Path, Any] = {}

    def gold(self, stored: str):
        from evalkit.io.reading import read_qrels

        path = self.baseline.resolve(stored)
        if path not in self._gold:
            self._gold[path] = read_qrels(path)
        return self._gold[path]

    def value(self, task_name: str, gold: str, run: str, metric: str, options: dict[str, Any]) -> tuple[float, str]:
        """``(value, metric label)``; ``metric`` is a metric name, a task's official label, or ``official``."""
        from evalkit.io.reading import read_run
        from evalkit.metrics import parse_metrics
        from evalkit.metrics.parameters import ParameterError
        from evalkit.core.options import ScoringOptions
        from evalkit.tasks import get_task

        task = get_task(task_name)
        label, extra = metric, None
        if metric != OFFICIAL:
            try:  # the list reader: trec_eval's forms (rbp.p=0.8) are read as everywhere else
                parsed = parse_metrics(metric)
                label, extra = (parsed[0].label, [metric]) if len(parsed) == 1 else (metric, None)
            except ParameterError:
                raise
            except UsageError:
                pass  # a task's own official label, e.g. ClimateCheck's mean of four metrics
        scoring = ScoringOptions.of(**{k: options[k] for k in ("missing", "allow_partial") if k in options})
        score = task.score(read_run(self.baseline.resolve(run)), self.gold(gold), extra, **scoring.task_kwargs())
        if metric == OFFICIAL:
            return score.official_value, score.official
        if label not in score.values:
            raise UsageError(f"task {task.name} does not report {metric!r} (it reports: {', '.join(score.values)})")
        return score.values[label], label

    def measure(self, entry: Entry) -> Result:
        try:
            value, _ = self.value(entry.task, entry.gold, entry.run, entry.metric, entry.options)
        except EvalkitError as exc:
            return Result(entry, error=exc.one_line())
        if not math.isfinite(value):
            return Result(entry, error=f"the score is undefined now ({value}); an undefined score never passes")
        return Result(entry, now=value)


def add_entry(
    baseline: RegressionBaseline, task: str, gold: str, run: str, metric: str | None = None, name: str | None = None, options: dict | None = None
) -> Entry:
    """Record the current value of (task, gold, run, metric); paths are given relative to the cwd."""
    from evalkit.io.formats import display_name
    from evalkit.tasks import get_task

    task_name = get_task(task).name
    stored_gold, stored_run = baseline.relative(gold), baseline.relative(run)
    options = {k: v for k, v in (options or {}).items() if v not in (None, False)}
    value, label = Scorer(baseline).value(task_name, stored_gold, stored_run, metric or OFFICIAL, options)
    entry = Entry(name or f"{Path(run).parent.name}/{display_name(str(run))}", task_name, stored_gold, stored_run, label, value, options)
    for existing in baseline.entries:
        if existing.key() == entry.key():
            raise UsageError(f"{baseline.path}: {entry.name} ({label}) is already recorded (expected {existing.expected:.6f}); use --update to rewrite values")
    baseline.entries.append(entry)
    return entry


def render_table(results: list[Result], tolerance: float) -> str:
    """expected / now / delta / status per entry (control characters in names shown escaped: a name cannot forge a row)."""
    from evalkit.core.safetext import visible

    names, metrics = [visible(r.entry.name) for r in results], [visible(r.entry.metric) for r in results]
    width = max([len(n) for n in names] + [4])
    mwidth = max([len(m) for m in metrics] + [6])
    lines = [f"{'name':<{width}}  {'metric':<{mwidth}}  {'expected':>9}  {'now':>9}  {'delta':>10}  status"]
    for r, name, metric in zip(results, names, metrics):
        now = "-" if r.now is None else f"{r.now:.4f}"
        delta = "-" if r.delta is None else f"{r.delta:+.6f}"
        lines.append(f"{name:<{width}}  {metric:<{mwidth}}  {r.entry.expected:>9.4f}  {now:>9}  {delta:>10}  {r.status(tolerance)}")
    return "\n".join(lines)
