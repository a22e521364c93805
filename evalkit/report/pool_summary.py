"""What a pool holds, for the organiser: its size, each run's and group's share and unique contribution.

As a dict (JSON), a text table (the terminal) and Markdown. A run's
*pooled* pairs are its top-k documents over all queries; its *unique* ones
are those no other run pooled (:mod:`evalkit.judging.pool`). The share of a
group's pooled pairs that are unique says how much the pool depends on it:
the documents a later run like it would find unjudged.
"""
from __future__ import annotations

from typing import Any, Protocol, Sequence

import numpy as np

from evalkit.data import Run
from evalkit.core.jsonout import strict
from evalkit.judging.pool import Pool
from evalkit.report.tables import markdown_table, printable, text_table



class PoolResult(Protocol):
    """What a summary reads of :class:`evalkit.api.judging.PoolResult` (read-only: that result is frozen)."""

    @property
    def pool(self) -> Pool: ...
    @property
    def seed(self) -> int: ...
    @property
    def files(self) -> list[str | None]: ...
    @property
    def notes(self) -> list[str]: ...
    @property
    def manifest(self) -> dict[str, Any]: ...

COVERAGE = 0.9  # a run whose queries are less than this share of the runs' common ones (or the reverse) is noted


def coverage_notes(pool: Pool, runs: Sequence[Run]) -> list[str]:
    """A note for each run whose queries differ from those most runs answer (a run of another split pools junk).

    The common queries are those more than half the runs answer; a run is
    noted when fewer than 90% of its queries are common, or when it answers
    fewer than 90% of the common queries.
    """
    answered = [set(run.query_ids.tolist()) for run in runs]
    counts: dict[str, int] = {}
    for queries in answered:
        for query in queries:
            counts[query] = counts.get(query, 0) + 1
    common = {q for q, n in counts.items() if n > len(runs) / 2}
    notes = []
    for run, queries in zip(runs, answered):
        shared = len(queries & common)
        if queries and (shared < COVERAGE * len(queries) or shared < COVERAGE * len(common)):
            notes.append(f"{run.name}: {shared:,} of its {len(queries):,} queries are among the {len(common):,} queries most runs "
                         f"answer (the pool has {len(pool.query_ids):,}); a run of another split?")
    return notes


def share(part: int, whole: int) -> float | None:
    """``part / whole``; ``None`` (JSON null) for nothing pooled."""
    return part / whole if whole else None


def pool_summary(result: "PoolResult") -> dict[str, Any]:
    """The pool's figures as plain data (see the module docstring)."""
    pool = result.pool
    sizes = pool.sizes_per_query()
    placed, unique = pool.placed_per_run().tolist(), pool.unique_per_run().tolist()
    group_placed, group_unique = pool.placed_per_group(), pool.unique_per_group()
    return {
        "depth": pool.depth,
        "seed": result.seed,
        "queries": int(len(pool.query_ids)),
        "pool_size": pool.size,
        "per_query": {
            "min": int(sizes.min()) if len(sizes) else 0, "median": float(np.median(sizes)) if len(sizes) else 0.0,
            "mean": float(sizes.mean()) if len(sizes) else 0.0, "max": int(sizes.max(initial=0)),
        },
        "runs": [
            {"run": name, "group": group, "file": file, "pooled": p, "unique": u, "unique_share": share(u, p)}
            for name, group, file, p, u in zip(pool.runs, pool.groups, result.files, placed, unique)
        ],
        "groups": [
            {"group": g, "runs": [r for r, rg in zip(pool.runs, pool.groups) if rg == g], "pooled": group_placed[g],
             "unique": group_unique[g], "unique_share": share(group_unique[g], group_placed[g])}
            for g in pool.group_names
        ],
        "notes": list(result.notes),
        "manifest": dict(result.manifest),
    }


def _rows(summary: dict[str, Any]) -> tuple[list[list[str]], list[list[str]]]:
    runs = [[printable(r["run"]), printable(r["group"]), f"{r['pooled']:,}", f"{r['unique']:,}", _pct(r["unique_share"])]
            for r in summary["runs"]]
    groups = [[printable(g["group"]), str(len(g["runs"])), f"{g['pooled']:,}", f"{g['unique']:,}", _pct(g["unique_share"])]
              for g in summary["groups"]]
    return runs, groups


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def headline(summary: dict[str, Any]) -> str:
    q = summary["per_query"]
    return (f"depth-{summary['depth']} pool of {len(summary['runs'])} runs in {len(summary['groups'])} groups: "
            f"{summary['pool_size']:,} (query, document) pairs to judge over {summary['queries']:,} queries "
            f"(per query: min {q['min']}, median {q['median']:g}, mean {q['mean']:.1f}, max {q['max']})")


RUN_HEADERS = ["run", "group", "pooled", "unique", "unique share"]
GROUP_HEADERS = ["group", "runs", "pooled", "unique", "unique share"]
RIGHT = [False, False, True, True, True]


def as_table(summary: dict[str, Any]) -> str:
    runs, groups = _rows(summary)
    parts = [headline(summary), "", text_table(RUN_HEADERS, runs, RIGHT), "", text_table(GROUP_HEADERS, groups, [False] + [True] * 4)]
    parts += [f"# {printable(note)}" for note in summary["notes"]]
    return "\n".join(parts)


def as_markdown(summary: dict[str, Any]) -> str:
    from evalkit.io.manifest import manifest_markdown

    runs, groups = _rows(summary)
    parts = ["# Judging pool", "", headline(summary), "", "## Runs", "", markdown_table(RUN_HEADERS, runs, RIGHT), "",
             "## Groups", "", markdown_table(GROUP_HEADERS, groups, [False] + [True] * 4), "",
             "- pooled: (query, document) pairs in the top "
             f"{summary['depth']} of the run (of any run of the group); unique: pairs no other run (group) pooled"]
    parts += [f"- {note}" for note in summary["notes"]]
    parts += ["", "## Manifest", "", manifest_markdown(summary["manifest"])]
    return "\n".join(parts) + "\n"


def as_json(summary: dict[str, Any]) -> str:
    return strict(summary, "the pool summary", indent=2) + "\n"
