"""The one convention of the commands that take runs and a gold (docs/reference/conventions.md).

Runs are positional; the gold is ``--gold/-g FILE`` everywhere. The positional forms documented before stay:
``score RUN GOLD``, and ``compare``/``report``/``reuse GOLD RUN...`` when ``--gold`` is not given. A gold and a run
given in each other's place say which position wants what. ``--out FILE`` writes the format ``--output`` names, or
the one the file's suffix names when ``--output`` is not given; the two contradicting each other is one line.
"""
from __future__ import annotations

import contextlib
import re
from typing import Iterator, Sequence

import click

GOLD_OPTION = click.option("--gold", "-g", "gold_option", type=click.Path(dir_okay=False), default=None,
                           help="The gold (qrels) file the runs are scored against.")
# where each command takes its gold: said by a gold and a run given in each other's place
GOLD_GOES = {
    "score": "second (evalkit score RUN GOLD) or in --gold GOLD",
    "compare": "in --gold GOLD (evalkit compare RUN RUN... --gold GOLD), or first without --gold",
    "report": "in --gold GOLD (evalkit report RUN... --gold GOLD --out NAME.md), or first without --gold",
    "reuse": "in --gold GOLD (evalkit reuse RUN... --gold GOLD --depth K --group-by REGEX), or first without --gold",
    "leaderboard": "in --gold GOLD (evalkit leaderboard FOLDER --gold GOLD)",
}
RUNS_GO = {"score": "first", "compare": "positional", "report": "positional", "reuse": "positional",
           "leaderboard": "positional (files or folders)"}
# a file's suffix -> the formats it may hold (the first is the one it names)
SUFFIX_FORMATS = {".json": ("json",), ".md": ("markdown",), ".markdown": ("markdown",), ".tsv": ("tsv", "trec_eval")}


def runs_and_gold(command: str, paths: Sequence[str], gold: str | None) -> tuple[list[str], str]:
    """(runs, gold) of ``command``: ``--gold`` given, every path is a run; else the legacy form (the gold first)."""
    from evalkit.core.errors import UsageError

    if gold is not None:
        return list(paths), gold
    if not paths:
        raise UsageError(f"{command}: no runs and no gold; the gold goes {GOLD_GOES[command]}")
    return list(paths[1:]), paths[0]


def score_run_and_gold(run: str, gold: str | None, gold_option: str | None) -> tuple[str, str]:
    """``score RUN GOLD`` or ``score RUN --gold GOLD``: exactly one gold."""
    from evalkit.core.errors import UsageError

    if gold is not None and gold_option is not None:
        raise UsageError(f"score: two golds ({gold} and --gold {gold_option}); give one: evalkit score RUN GOLD")
    if gold is None and gold_option is None:
        raise UsageError(f"score: no gold for {run}; the gold goes {GOLD_GOES['score']}")
    return run, gold if gold is not None else gold_option  # type: ignore[return-value]


@contextlib.contextmanager
def swapped(command: str, gold: str, runs: Sequence[str]) -> Iterator[None]:
    """A gold read where a run goes (or a run where the gold goes) as one line saying which position wants what."""
    from evalkit.core.errors import InputError, UsageError

    try:
        yield
    except InputError as exc:
        found = re.search(r"looks like (a run|a gold/qrels file) \(([^)]*)\)", exc.message)
        if found is None:
            raise
        if found.group(1) == "a run" and _names(exc.path, [gold]):
            raise UsageError(f"{exc.path}: GOLD looks like a run ({found.group(2)}); the gold goes {GOLD_GOES[command]}") from None
        if found.group(1) != "a run" and _names(exc.path, runs):
            raise UsageError(f"{exc.path}: RUN looks like a gold/qrels file ({found.group(2)}); the runs go {RUNS_GO[command]}, "
                             f"the gold {GOLD_GOES[command]}") from None
        raise


def _names(label: str, paths: Sequence[str]) -> bool:
    """Whether an error's file label (``PATH`` or ``PATH:MEMBER`` of an archive) is one of ``paths``."""
    return any(label == p or label.startswith(f"{p}:") for p in map(str, paths))


def out_format(out_path: str | None, output: str | None, choices: Sequence[str], default: str = "table") -> str:
    """The format of ``--out``: ``--output`` when given, else the one ``out_path``'s suffix names (``.json``,
    ``.md``, ``.tsv``), else ``default``; ``--output`` and a suffix naming another format: one line."""
    from pathlib import Path

    from evalkit.core.errors import UsageError

    suffix = Path(out_path).suffix.lower() if out_path else ""
    named = [f for f in SUFFIX_FORMATS.get(suffix, ()) if f in choices]
    if output is None:
        return named[0] if named else default
    if named and output not in named:
        raise UsageError(f"--out {out_path} names {named[0]} by its suffix but --output is {output}; "
                         f"drop --output or name the file for {output}")
    return output
