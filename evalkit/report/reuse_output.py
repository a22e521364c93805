"""The leave-one-group-out test as JSON, a text table and a Markdown report with its figure."""
from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Protocol

from evalkit.core.errors import UsageError
from evalkit.core.jsonout import strict
from evalkit.report.tables import markdown_table, number, printable, signed, text_table

from evalkit.judging.reuse import Reuse


class ReuseResult(Protocol):
    """What the outputs read of :class:`evalkit.api.judging.ReuseResult` (read-only: that result is frozen)."""

    @property
    def reuse(self) -> Reuse: ...
    @property
    def policy(self) -> list[str]: ...
    @property
    def notes(self) -> list[str]: ...
    @property
    def manifest(self) -> dict[str, Any]: ...
    @property
    def files(self) -> list[str | None]: ...

OUTPUTS = ("table", "markdown", "json")
METHOD = (
    "For each group, every judgment of a (query, document) pair that only the group's runs put in the depth-{depth} pool "
    "is removed from the qrels, and the group's runs are scored again: the removed documents count as unjudged "
    "(non-relevant), as they would for a new run outside the pool. The other runs keep their full scores. "
    "Rank = 1 + runs scoring strictly higher; Kendall's tau (tau-b) and tau_AP (Yilmaz, Aslam and Robertson 2008; "
    "the full ranking as the truth; tau_AP,b of Urbano and Marrero 2017 where scores tie) compare the full and the "
    "reduced leaderboard. Zobel 1998; Buckley et al. 2007."
)


def figure_path(out: str | os.PathLike) -> Path:
    """The figure written beside a report ``NAME.md`` / ``NAME.json``: ``NAME.reuse.png``."""
    from evalkit.report.figures import figure_beside

    return figure_beside(out, "reuse")


def output_of(out: str | os.PathLike | None, output: str | None) -> str:
    """The output format: as asked, else from ``out``'s suffix (.md, .json), else a text table."""
    if output is not None:
        if output not in OUTPUTS:
            raise UsageError(f"unknown output {output!r} (choose {', '.join(OUTPUTS)})")
        return output
    lowered = os.fspath(out or "").lower()
    return "markdown" if lowered.endswith(".md") else "json" if lowered.endswith(".json") else "table"


def _finite(value: float) -> float | None:
    return None if isinstance(value, float) and math.isnan(value) else value


def as_dict(result: "ReuseResult") -> dict[str, Any]:
    found = result.reuse
    return {
        "task": found.task,
        "metric": found.metric,
        "depth": found.depth,
        "pool_size": found.pool.size,
        "queries": int(len(found.pool.query_ids)),
        "summary": {k: _finite(v) for k, v in found.summary().items()},
        "full_scores": found.full_scores,
        "groups": [
            {
                "group": g.group, "unique_pairs": g.unique_pairs, "removed_judgments": g.removed, "removed_relevant": g.removed_relevant,
                "kendall_tau": _finite(g.kendall_tau), "tau_ap": _finite(g.tau_ap), "tau_ap_variant": g.tau_ap_variant,
                "runs": [
                    {"run": r.run, "full": r.full, "reduced": r.reduced, "change": r.change, "full_rank": r.full_rank,
                     "reduced_rank": r.reduced_rank, "rank_change": r.rank_change}
                    for r in g.runs
                ],
                "reduced_scores": g.reduced_scores,
            }
            for g in found.groups
        ],
        "method": METHOD.format(depth=found.depth),
        "notes": result.notes + result.policy,
        "manifest": dict(result.manifest),
    }


def as_json(result: "ReuseResult") -> str:
    return strict(as_dict(result), "the reuse result", indent=2) + "\n"


def _tau(value: float, variant: str, default: str) -> str:
    text = number(value, 3)
    return text if variant == default or text == "n/a" else f"{text} ({variant})"


def _rows(result: "ReuseResult") -> tuple[list[str], list[list[str]], list[str], list[list[str]]]:
    found = result.reuse
    group_headers = ["group", "runs", "unique pairs", "judgments removed (relevant)", "largest change", "most places lost",
                     "Kendall's tau", "tau_AP"]
    groups = [
        [printable(g.group), str(len(g.runs)), f"{g.unique_pairs:,}", f"{g.removed:,} ({g.removed_relevant:,})", signed(g.largest_drop),
         f"{g.most_places_lost:+d}", number(g.kendall_tau, 3), _tau(g.tau_ap, g.tau_ap_variant, "tau_AP")]
        for g in found.groups
    ]
    run_headers = ["run", "group", f"{found.metric} full", "reduced", "change", "rank full -> reduced"]
    runs = sorted(((r, g.group) for g in found.groups for r in g.runs), key=lambda x: (x[0].full_rank, x[0].run))
    run_rows = [[printable(r.run), printable(group), number(r.full), number(r.reduced), signed(r.change),
                 f"{r.full_rank} -> {r.reduced_rank} ({r.rank_change:+d})"] for r, group in runs]
    return group_headers, groups, run_headers, run_rows


def headline(result: "ReuseResult") -> str:
    found = result.reuse
    worst = found.summary()
    return (
        f"leave one group out · task {found.task} · {found.metric} · depth-{found.depth} pool of {len(found.full_scores)} runs in "
        f"{len(found.groups)} groups ({found.pool.size:,} pairs over {len(found.pool.query_ids):,} queries) · worst case: change "
        f"{signed(worst['largest_drop'])}, {worst['most_places_lost']:+d} places, Kendall's tau {number(worst['lowest_kendall_tau'], 3)}, "
        f"tau_AP {number(worst['lowest_tau_ap'], 3)}"
    )


def as_table(result: "ReuseResult") -> str:
    group_headers, groups, run_headers, runs = _rows(result)
    parts = [headline(result), "", text_table(group_headers, groups, [False] + [True] * 7), "",
             text_table(run_headers, runs, [False, False, True, True, True, False]), ""]
    parts += [f"# {printable(line)}" for line in result.notes + result.policy]
    return "\n".join(parts).rstrip("\n")


def as_markdown(result: "ReuseResult", figure: str | None = None) -> str:
    from evalkit.io.manifest import manifest_markdown

    found = result.reuse
    group_headers, groups, run_headers, runs = _rows(result)
    parts = [f"# Reusability of the judgments: leave one group out ({found.task}, {found.metric})", "", headline(result), "",
             "## Groups", "", markdown_table(group_headers, groups, [False] + [True] * 7), "",
             "## Runs", "", markdown_table(run_headers, runs, [False, False, True, True, True, False]), ""]
    if figure:
        parts += [f"![{found.metric} of each run with full judgments and without its group's unique documents]({figure})", ""]
    parts += ["## Method", "", METHOD.format(depth=found.depth), ""]
    extra = result.notes + result.policy
    if extra:
        parts += ["## Notes", ""] + [f"- {printable(line)}" for line in extra] + [""]
    parts += ["## Manifest", "", manifest_markdown(result.manifest)]
    return "\n".join(parts) + "\n"


def figure_png(result: "ReuseResult") -> bytes:
    from evalkit.report.figures import before_after_chart

    found = result.reuse
    runs = sorted(((r, g.group) for g in found.groups for r in g.runs), key=lambda x: (x[0].full_rank, x[0].run))
    return before_after_chart(
        [printable(r.run) for r, _ in runs], [printable(g) for _, g in runs], [r.full for r, _ in runs], [r.reduced for r, _ in runs],
        found.metric, f"{found.metric} before and after leaving each run's group out of the depth-{found.depth} pool",
    )


def write_reuse(result: "ReuseResult", out: str | os.PathLike, *, output: str | None = None, force: bool = False) -> list[Path]:
    """Write the report (Markdown, JSON or table, by ``output`` or ``out``'s suffix) and its figure beside it, atomically."""
    from evalkit.io.manifest import write_sidecar
    from evalkit.io.transactions import atomic_write, committed_together, sidecar_of

    kind = output_of(out, output)
    picture = figure_path(out)
    outputs = [out, picture] + ([sidecar_of(out)] if kind == "table" else [])
    with committed_together(outputs, force, inputs=[f for f in result.files if f]):  # the report and its figure, or neither
        text = {"json": as_json, "table": lambda r: as_table(r) + "\n"}.get(kind, lambda r: as_markdown(r, picture.name))(result)
        atomic_write(picture, figure_png(result), force=force)
        written = [atomic_write(out, text, force=force), picture]
        if kind == "table":
            written.append(Path(write_sidecar(out, result.manifest)))
    return written
