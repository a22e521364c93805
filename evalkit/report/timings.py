"""The report's "Time per stage" section: wall and CPU seconds per step of ``evalkit run``, optionally beside an
earlier run's (A/B).

Wall seconds say what a user waits; CPU seconds (user + system of the
process, its children and the local engine's worker processes) say what the
work cost, and move less when other jobs share the machine. An earlier run
is read from its manifest (``OUT.manifest.json``: ``options.stage_seconds``
and ``options.stage_cpu_seconds``), as JSON only; its steps are matched by
name, and the ratio B/A is printed per step (below 1: B is faster).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, TypeGuard

from evalkit.core.errors import UsageError

MAX_MANIFEST_BYTES = 16 << 20


@dataclass(frozen=True)
class StageTimings:
    """Seconds per step (``wall``, ``cpu``), the whole command's wall seconds and the engine, as the manifest records them."""

    wall: Mapping[str, float]
    cpu: Mapping[str, float] = field(default_factory=dict)
    command_wall: float | None = None
    engine: Mapping[str, Any] = field(default_factory=dict)
    label: str = ""

    @classmethod
    def from_manifest(cls, path: str | Path) -> "StageTimings":
        """The stage seconds an earlier ``evalkit run`` wrote into its manifest (one clear line when there are none)."""
        from evalkit.io.textio import parse_json, read_input_bytes

        data = parse_json(read_input_bytes(path, MAX_MANIFEST_BYTES), str(path))
        options = data.get("options") if isinstance(data, dict) else None
        wall = options.get("stage_seconds") if isinstance(options, dict) else None
        if not isinstance(wall, dict) or not wall:
            raise UsageError(f"{path}: no stage seconds in this manifest (write one with evalkit run --out)")
        assert isinstance(options, dict)  # the stage seconds were read from it
        cpu = options.get("stage_cpu_seconds") or {}
        recorded_engine = options.get("engine")
        engine = recorded_engine if isinstance(recorded_engine, dict) else {}
        command = options.get("command_seconds")
        return cls(_seconds(wall, path), _seconds(cpu, path) if isinstance(cpu, dict) else {},
                   float(command) if _number(command) else None, engine, label=Path(path).name)


def _number(value: Any) -> TypeGuard[float]:
    """A number of seconds: an int or float (not a bool), finite and not negative."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


def _seconds(table: Mapping[str, Any], path: str | Path) -> dict[str, float]:
    bad = [k for k, v in table.items() if not isinstance(k, str) or not _number(v)]
    if bad:
        raise UsageError(f"{path}: stage seconds of {bad[0]!r} is not a number of seconds")
    return {k: float(v) for k, v in table.items()}


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}"


def _ratio(new: float | None, old: float | None) -> str:
    return "-" if new is None or not old else f"{new / old:.2f}"


def timing_section(this: StageTimings, baseline: StageTimings | None = None) -> str:
    """Markdown: one row per step with wall and CPU seconds (and the baseline's with B/A ratios), then the totals.
    Step names, engine names and the baseline's label come from a config or a file: shown, never obeyed (markdown_text)."""
    from evalkit.core.safetext import markdown_text as md

    where = f"engine {md(str(this.engine.get('name', '?')))}" + (f", {this.engine['workers']} worker processes"
                                                       if this.engine.get("workers", 1) > 1 else "")
    steps = list(this.wall) + [s for s in (baseline.wall if baseline else {}) if s not in this.wall]
    total_row = ("total of the steps", sum(this.wall.values()), sum(this.cpu.values()) if this.cpu else None)
    if baseline is None:
        rows = "".join(f"| {md(s)} | {_cell(this.wall.get(s))} | {_cell(this.cpu.get(s))} |\n" for s in steps)
        rows += f"| {total_row[0]} | {_cell(total_row[1])} | {_cell(total_row[2])} |\n"
        if this.command_wall is not None:
            rows += f"| the whole command | {_cell(this.command_wall)} | |\n"
        return (f"\n## Time per stage\n\nSeconds of `evalkit run` ({where}): wall, and CPU (user + system of every "
                f"process doing the work).\n\n| step | wall s | CPU s |\n|---|---:|---:|\n{rows}")
    old_where = f"engine {md(str(baseline.engine.get('name', '?')))}" if baseline.engine else "engine ?"
    head = ("| step | A wall s | B wall s | B/A wall | A CPU s | B CPU s | B/A CPU |\n"
            "|---|---:|---:|---:|---:|---:|---:|\n")
    rows = ""
    for s in steps:
        a_wall, b_wall, a_cpu, b_cpu = baseline.wall.get(s), this.wall.get(s), baseline.cpu.get(s), this.cpu.get(s)
        rows += (f"| {md(s)} | {_cell(a_wall)} | {_cell(b_wall)} | {_ratio(b_wall, a_wall)} | {_cell(a_cpu)} | {_cell(b_cpu)} | "
                 f"{_ratio(b_cpu, a_cpu)} |\n")
    a_total, a_cpu_total = sum(baseline.wall.values()), sum(baseline.cpu.values()) if baseline.cpu else None
    rows += (f"| {total_row[0]} | {_cell(a_total)} | {_cell(total_row[1])} | {_ratio(total_row[1], a_total)} | {_cell(a_cpu_total)} | "
             f"{_cell(total_row[2])} | {_ratio(total_row[2], a_cpu_total)} |\n")
    if this.command_wall is not None or baseline.command_wall is not None:
        rows += (f"| the whole command | {_cell(baseline.command_wall)} | {_cell(this.command_wall)} | "
                 f"{_ratio(this.command_wall, baseline.command_wall)} | | | |\n")
    return (f"\n## Time per stage\n\nSeconds of `evalkit run`: A = the earlier run {md(baseline.label)} ({old_where}), "
            f"B = this run ({where}); wall, and CPU (user + system of every process doing the work); B/A below 1: B "
            f"is faster.\n\n{head}{rows}")
