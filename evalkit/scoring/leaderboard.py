"""A local leaderboard: rank every run file in a folder and test adjacent ranks.

Every file (recursively by default; zips included) is read and scored against
one gold by one task. Files that cannot be read, or that belong to another
split (answering few gold queries, or holding mostly queries the gold does
not have), are set aside with the reason -- they never stop the ranking.
Every pair of ranked runs is compared by one all-pairs procedure
(:mod:`evalkit.stats.allpairs`; randomised Tukey HSD by default) on the per-query
official metric, which gives each run an interval of ranks it may really
hold, the runs tied with the top and compact letters. Adjacent ranks are also
compared with a paired test (Wilcoxon by default), corrected over the
``n - 1`` adjacent pairs (Holm by default): the older, weaker marks.
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence


from evalkit.stats.allpairs import AllPairs, AllPairsOptions, all_pairs
from evalkit.stats.comparison import CompareOptions, significance_tests
from evalkit.data import Qrels
from evalkit.core.errors import EvalkitError, PartialRunError, UsageError, listed, unquoted
from evalkit.core.options import ScoringOptions
from evalkit.scoring.runset import ScoredRun, by_official_score, comparison_metric, resolve_task, score_one, unique_names
from evalkit.stats.correction import adjust
from evalkit.stats.paired import align

NOT_RUNS = (".manifest.json", ".md", ".png", ".pdf", ".jpg", ".jpeg", ".svg", ".html")


@dataclass(frozen=True)
class Rejected:
    path: str
    kind: str  # "invalid" or "other split"
    reason: str


def reason_for(exc: EvalkitError, path: str) -> str:
    """The error's one line without the file name the table already shows (``line N:`` kept)."""
    from evalkit.core.safetext import visible

    text = exc.one_line()
    path = visible(" ".join(path.split()))  # as one_line shows it
    if not text.startswith(path):
        return text
    rest = text[len(path):]
    if rest.startswith(": "):
        return rest[2:]
    if rest.startswith(":") and rest[1:].split(":", 1)[0].isdigit():
        line, message = rest[1:].split(":", 1)
        return f"line {line}:{message}"
    return rest.lstrip("/")


def unexpected(exc: Exception) -> str:
    return f"could not be scored ({type(exc).__name__}: {' '.join(str(exc).split())}); please report this file"


@dataclass(frozen=True)
class Entry:
    rank: int
    scored: ScoredRun
    file: str  # path relative to the folder

    @property
    def name(self) -> str:
        return self.scored.name


@dataclass(frozen=True)
class AdjacentTest:
    upper: str
    lower: str
    n: int
    difference: float  # mean(upper) - mean(lower) on the tested metric
    p_value: float
    p_adjusted: float
    significant: bool


@dataclass
class Leaderboard:
    task: str
    gold: str
    n_gold: int
    metric: str  # per-query metric of the adjacent tests
    test: str
    options: CompareOptions
    entries: list[Entry]
    adjacent: list[AdjacentTest]
    rejected: list[Rejected]
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    qrels: Qrels | None = field(default=None, repr=False)  # the gold every run was scored against
    task_note: str = ""  # which task ranks the runs and why (from the gold or --task, never from a run)
    all_pairs: AllPairs | None = None  # every pair compared, rank intervals, tied groups, letters


def collect_files(folder: str | Path, patterns: Sequence[str] = ("*",), recursive: bool = True, gold: str | None = None) -> tuple[list[Path], list[str]]:
    """Candidate run files under ``folder`` (sorted) and the files skipped as obviously not runs."""
    root = Path(folder)
    if not root.is_dir():
        raise UsageError(f"{folder}: not a folder")
    gold_path = Path(gold).resolve() if gold else None
    found, skipped = [], []
    walker = root.rglob("*") if recursive else root.glob("*")
    for path in sorted(walker):
        relative = path.relative_to(root)
        if any(part.startswith(".") for part in relative.parts) or not path.is_file():
            continue
        if not any(fnmatch.fnmatch(path.name, p) for p in patterns):
            continue
        if gold_path is not None and path.resolve() == gold_path:
            skipped.append(f"{relative} (the gold file)")
        elif path.name.lower().endswith(NOT_RUNS):
            skipped.append(str(relative))
        else:
            found.append(path)
    return found, skipped


def collect_runs(paths: str | Path | Sequence[str | Path], patterns: Sequence[str] = ("*",), recursive: bool = True,
                 gold: str | None = None) -> tuple[list[Path], list[str], dict[str, str]]:
    """The run files of ``paths`` (folders, walked as :func:`collect_files` does, and files, taken as given), the
    files skipped, and each file's name on the board (relative to its folder; a file given: its path as given)."""
    given = [paths] if isinstance(paths, (str, Path)) else list(paths)
    files: list[Path] = []
    skipped: list[str] = []
    relative: dict[str, str] = {}
    for path in given:
        if Path(path).is_dir():
            found, passed = collect_files(path, patterns, recursive, gold)
            files += [p for p in found if str(p) not in relative]
            relative.update({str(p): str(p.relative_to(path)) for p in found if str(p) not in relative})
            skipped += passed
        elif Path(path).is_file():
            if gold is not None and Path(path).resolve() == Path(gold).resolve():
                skipped.append(f"{path} (the gold file)")
            elif str(path) not in relative:
                files.append(Path(path))
                relative[str(path)] = str(path)
        else:
            raise UsageError(f"{path}: not a folder, nor a run file (no such path)")
    return files, skipped, relative


def rank_entries(scored: Sequence[ScoredRun], files: dict[str, str]) -> list[Entry]:
    """Sort by official score (best first, NaN last, then name); equal scores share a rank."""
    order = by_official_score(scored)
    entries: list[Entry] = []
    for i, item in enumerate(order):
        rank = i + 1
        if entries and abs(item.score.official_value - entries[-1].scored.score.official_value) <= 1e-12:
            rank = entries[-1].rank
        entries.append(Entry(rank, item, files[item.name]))
    return entries


def adjacent_tests(entries: Sequence[Entry], metric: str, test: str, options: CompareOptions) -> list[AdjacentTest]:
    """Paired test between each rank and the next, corrected over the ``n - 1`` pairs."""
    rows = []
    for upper, lower in zip(entries, entries[1:]):
        evaluations = [upper.scored.score.evaluation, lower.scored.score.evaluation]
        skip = evaluations[0].missing == "skip"
        values = align(evaluations, metric, [upper.name, lower.name], common=skip)
        a, b, _ = values.pair(0, 1)
        rows.append((a, b))
    results = significance_tests(test, rows, options)
    raw = [
        (upper.name, lower.name, len(a), float(a.mean() - b.mean()) if len(a) else 0.0, result.p_value)
        for upper, lower, (a, b), result in zip(entries, entries[1:], rows, results)
    ]
    adjusted = adjust([r[4] for r in raw], options.correction, options.alpha)
    return [
        AdjacentTest(u, lo, n, diff, p, q, q < options.alpha) for (u, lo, n, diff, p), q in zip(raw, adjusted)
    ]


def all_pairs_of(entries: Sequence[Entry], metric: str, options: AllPairsOptions, binary: str = "success@1") -> tuple[AllPairs | None, list[str]]:
    """Every pair of the ranked runs compared on ``metric`` (McNemar: on ``binary``); a note instead where it cannot be done."""
    from evalkit.metrics.judgments import with_metric
    from evalkit.metrics import parse_metric

    evaluations = [e.scored.score.evaluation for e in entries]
    names = [e.name for e in entries]
    common = evaluations[0].missing == "skip"
    try:
        values = align(evaluations, metric, names, common=common)
        outcome = None
        if options.procedure == "mcnemar":
            chosen = parse_metric(binary)
            outcome = align([with_metric(ev, chosen) for ev in evaluations], chosen.label, names, common=common)
        return all_pairs(values, options, outcome), []
    except UsageError as exc:
        return None, [f"all pairs not compared: {exc.one_line()}"]


def check_binary_outcome(binary: str) -> None:
    """A bad ``--binary`` is refused before any file is read."""
    from evalkit.metrics import parse_metric

    if not parse_metric(binary).binary:
        raise UsageError(f"binary {binary}: not a 0/1 outcome per query (use success@k)")


def build_leaderboard(
    folder: str | Sequence[str],
    gold_path: str,
    *,
    scoring: ScoringOptions = ScoringOptions(),
    patterns: Sequence[str] = ("*",),
    recursive: bool = True,
    test: str = "wilcoxon",
    options: CompareOptions = CompareOptions(),
    pairs: AllPairsOptions | None = AllPairsOptions(),
    binary: str = "success@1",
    progress: bool = True,
) -> Leaderboard:
    """Read, score and rank every run file in ``folder`` (a folder, or folders and files) under ``scoring``; problems
    go to ``rejected``.

    Every file is read in whatever format it is in (``scoring.run_format`` is not used).
    ``pairs``: the all-pairs procedure and its options (``None``: adjacent
    ranks only); ``binary``: the 0/1 outcome McNemar's test compares.
    """
    from evalkit.io.reading import read_qrels, read_run

    options.check()
    if pairs is not None:
        pairs.check()
        if pairs.procedure == "mcnemar":
            check_binary_outcome(binary)
    qrels = read_qrels(gold_path, scoring.gold_format)  # a bad gold is fatal: nothing can be ranked
    task, task_note = resolve_task(scoring.task, qrels)  # from the gold or the user: never from a participant's file
    task.metrics(list(scoring.metrics) if scoring.metrics else None)  # the organiser's options fail once, never blamed on a file
    files, skipped, relative = collect_runs(folder, patterns, recursive, gold_path)
    if not files:
        where = folder if isinstance(folder, (str, Path)) else " ".join(map(str, folder))
        raise UsageError(f"{where}: no run files found (patterns: {' '.join(patterns)})")
    names = dict(zip(map(str, files), unique_names([relative[str(p)] for p in files])))
    rejected: list[Rejected] = []
    runs = []
    from evalkit.core.progress import progress as progress_of

    for path in progress_of(files, desc="reading", unit="file", enabled=progress):
        try:
            runs.append(read_run(path, column=scoring.column, name=names[str(path)]))
        except EvalkitError as exc:
            rejected.append(Rejected(relative[str(path)], "invalid", reason_for(exc, str(path))))
        except Exception as exc:  # one odd file must not stop the ranking of the others
            rejected.append(Rejected(relative[str(path)], "invalid", unexpected(exc)))
    if not runs:
        return Leaderboard(task.name, str(gold_path), len(qrels.query_ids), "", test, options, [], [], rejected, skipped, qrels=qrels,
                           task_note=task_note)
    scored: list[ScoredRun] = []
    for run in progress_of(runs, desc="scoring", unit="run", enabled=progress):
        file = relative[run.source.path]
        try:
            scored.append(score_one(task, qrels, run, run.name, scoring.metrics, scoring, strict_split=True, task_note=task_note))
        except PartialRunError as exc:
            rejected.append(Rejected(file, "other split", reason_for(exc, run.source.path)))
        except EvalkitError as exc:
            rejected.append(Rejected(file, "invalid", reason_for(exc, run.source.path)))
        except Exception as exc:  # one odd file must not stop the ranking of the others
            rejected.append(Rejected(file, "invalid", unexpected(exc)))
    notes = [note for item in scored for note in item.notes] + duplicate_notes(scored, relative)
    files_of = {s.name: relative[s.path] for s in scored}
    entries = rank_entries(scored, files_of)
    metric = comparison_metric(task, scored[0].score) if scored else ""
    adjacent = adjacent_tests(entries, metric, test, options) if len(entries) > 1 else []
    if scored and metric != scored[0].score.official:
        notes.append(f"adjacent ranks are tested on {metric}: the official score has no per-query values")
    compared = None
    if pairs is not None and len(entries) > 1:
        compared, reasons = all_pairs_of(entries, metric, pairs, binary)
        notes += reasons
    n_gold = scored[0].score.evaluation.n_gold if scored else len(qrels.query_ids)
    rejected.sort(key=lambda r: r.path)
    return Leaderboard(task.name, str(gold_path), n_gold, metric, test, options, entries, adjacent, rejected, skipped, notes, qrels=qrels,
                       task_note=task_note, all_pairs=compared)


def duplicate_notes(scored: Sequence[ScoredRun], relative: dict[str, str]) -> list[str]:
    """Notes for files with byte-identical content (same sha256)."""
    by_hash: dict[str, list[str]] = {}
    for item in scored:
        digest = item.run.source.sha256 if item.run.source else ""
        if digest:
            by_hash.setdefault(digest, []).append(relative[item.path])
    return [f"identical content: {listed(group, 5, unquoted)}" for group in by_hash.values() if len(group) > 1]
