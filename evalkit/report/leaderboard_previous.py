"""What changed on a leaderboard: this ranking against an earlier one (``evalkit leaderboard ... --previous OLD.json``).

The earlier leaderboard is the JSON ``evalkit leaderboard -o json`` wrote
before new judgments, a new scoring program or corrected gold: its
``ranking`` gives each run's ``rank`` and ``official`` value. For each run
ranked now: its previous rank and score and its move (``previous_rank -
rank``: places gained); runs new since then and runs gone; over the runs in
both, Kendall's tau-b between the two official scores and tau_AP of the new
ranking against the old (Yilmaz, Aslam and Robertson 2008; tau_AP,b where
scores tie), and every pair of runs whose order flipped (strictly ordered
both times). Runs are matched by name.
"""
from __future__ import annotations

import html
import json
import math
import os
from dataclasses import dataclass, field
from typing import Any

from evalkit.core.errors import InputError
from evalkit.judging.agreement import ranking_agreement
from evalkit.report.tables import markdown_table, number, printable, text_table

MAX_PREVIOUS_BYTES = 64 << 20


@dataclass
class PreviousRanking:
    """The earlier ranking read back: ``{run: (rank, official value)}``, its metric and file."""

    path: str
    metric: str
    runs: dict[str, tuple[int, float]]


@dataclass
class Changes:
    """This ranking against the earlier one (see the module docstring)."""

    previous: PreviousRanking
    rows: list[dict[str, Any]]  # run, rank, score, previous_rank, previous_score, move (None for a new run)
    gone: list[dict[str, Any]]  # runs ranked before and not now
    kendall_tau: float | None
    tau_ap: float | None
    tau_ap_variant: str
    flipped_pairs: list[dict[str, Any]] = field(default_factory=list)


def read_previous(path: str | os.PathLike) -> PreviousRanking:
    """The ranking of a leaderboard JSON (``evalkit leaderboard -o json``); one clear line for anything else."""
    label = os.fspath(path)
    try:
        if os.path.getsize(label) > MAX_PREVIOUS_BYTES:
            raise InputError(label, f"a previous leaderboard over {MAX_PREVIOUS_BYTES >> 20} MiB")
        with open(label, "rb") as handle:
            data = json.loads(handle.read().decode("utf-8"))
    except FileNotFoundError:
        raise InputError(label, "no such file (--previous: a leaderboard JSON of evalkit leaderboard -o json)") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise InputError(label, f"not JSON ({exc.__class__.__name__}): --previous takes a leaderboard JSON of evalkit leaderboard -o json") from None
    ranking = data.get("ranking") if isinstance(data, dict) else None
    if not isinstance(ranking, list):
        raise InputError(label, "no 'ranking' list: --previous takes a leaderboard JSON of evalkit leaderboard -o json")
    runs: dict[str, tuple[int, float]] = {}
    metric = ""
    for i, entry in enumerate(ranking):
        official = entry.get("official") if isinstance(entry, dict) else None
        run, rank = (entry.get("run"), entry.get("rank")) if isinstance(entry, dict) else (None, None)
        value = official.get("value") if isinstance(official, dict) else None
        if not isinstance(run, str) or isinstance(rank, bool) or not isinstance(rank, int) or not isinstance(official, dict):
            raise InputError(label, f"ranking[{i}] needs a run name, an integer rank and an official value")
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)):
            raise InputError(label, f"ranking[{i}].official.value is not a finite number")
        if run in runs:
            raise InputError(label, f"run {run!r} ranked twice")
        runs[run] = (rank, math.nan if value is None else float(value))
        metric = metric or str(official.get("metric") or "")
    return PreviousRanking(path=label, metric=metric, runs=runs)


def compare_previous(current: list[tuple[str, int, float]], previous: PreviousRanking) -> Changes:
    """``current`` (run, rank, official value), best first, against ``previous``."""
    rows: list[dict[str, Any]] = []
    for run, rank, score in current:
        before = previous.runs.get(run)
        rows.append({"run": run, "rank": rank, "score": score, "previous_rank": before[0] if before else None,
                     "previous_score": before[1] if before else None, "move": before[0] - rank if before else None})
    now = {run for run, _, _ in current}
    gone = [{"run": run, "previous_rank": rank, "previous_score": score}
            for run, (rank, score) in sorted(previous.runs.items(), key=lambda x: x[1][0]) if run not in now]
    both = [r for r in rows if r["previous_rank"] is not None and not math.isnan(r["score"]) and not math.isnan(r["previous_score"])]
    if len(both) < 2:
        return Changes(previous, rows, gone, None, None, "tau_ap")
    found = ranking_agreement([r["run"] for r in both], [r["previous_score"] for r in both], [r["score"] for r in both], previous.metric,
                              pairs_a=None, pairs_b=None)
    flipped = [{"runs": [f["above_under_a"], f["above_under_b"]], "before": f["scores_a"], "after": f["scores_b"]} for f in found.flipped_pairs]
    return Changes(previous, rows, gone, found.kendall_tau, found.tau_ap, found.tau_ap_variant, flipped)


def _finite(value: Any) -> Any:
    return None if isinstance(value, float) and math.isnan(value) else value


def as_dict(changes: Changes) -> dict[str, Any]:
    """The ``previous`` block of the leaderboard JSON."""
    return {"file": changes.previous.path, "metric": changes.previous.metric, "kendall_tau": _finite(changes.kendall_tau),
            "tau_ap": _finite(changes.tau_ap), "tau_ap_variant": changes.tau_ap_variant,
            "flipped_pairs": [f["runs"] for f in changes.flipped_pairs], "flips": changes.flipped_pairs,
            "new_runs": [r["run"] for r in changes.rows if r["previous_rank"] is None], "gone_runs": changes.gone}


def entry_fields(changes: Changes) -> dict[str, dict[str, Any]]:
    """``{run: {"previous_rank", "previous_score", "move"}}`` for each ranked run's JSON entry."""
    return {r["run"]: {"previous_rank": r["previous_rank"], "previous_score": _finite(r["previous_score"]), "move": r["move"]}
            for r in changes.rows}


def _move(move: int | None) -> str:
    return "new" if move is None else "=" if move == 0 else f"{move:+d}"


def _table(changes: Changes) -> tuple[list[str], list[list[str]], list[str]]:
    headers = ["run", "rank", "score", "previous rank", "previous score", "move"]
    body = [[printable(r["run"]), str(r["rank"]), number(r["score"]), "-" if r["previous_rank"] is None else str(r["previous_rank"]),
             "-" if r["previous_score"] is None else number(r["previous_score"]), _move(r["move"])] for r in changes.rows]
    body += [[printable(g["run"]), "-", "-", str(g["previous_rank"]), number(g["previous_score"]), "gone"] for g in changes.gone]
    summary = [f"Kendall's tau {number(changes.kendall_tau)}, {changes.tau_ap_variant.replace('tau_ap', 'tau_AP')} "
               f"{number(changes.tau_ap)} (new ranking against the previous, runs in both); {len(changes.flipped_pairs)} pairs flipped"]
    summary += [f"flipped: {printable(f['runs'][0])} was above {printable(f['runs'][1])}, now below" for f in changes.flipped_pairs]
    return headers, body, summary


def as_text(changes: Changes) -> str:
    headers, body, summary = _table(changes)
    return "\n".join([f"changes since {printable(changes.previous.path)}:", text_table(headers, body, [False, True, True, True, True, True]),
                      *summary])


def as_markdown(changes: Changes) -> str:
    headers, body, summary = _table(changes)
    return "\n".join([f"## Changes since {printable(os.path.basename(changes.previous.path))}", "",
                      markdown_table(headers, body, [False, True, True, True, True, True]), "", *(f"- {line}" for line in summary), ""])


def as_html(changes: Changes) -> str:
    """A static HTML section of the changes, for the leaderboard page."""
    headers, body, summary = _table(changes)
    cells = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    rows = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in body)
    notes = "".join(f"<li>{html.escape(line)}</li>" for line in summary)
    title = html.escape(os.path.basename(changes.previous.path))
    return (f'<section id="previous"><h2>Changes since {title}</h2><div class="scroll"><table class="data" id="previous-table">'
            f"<thead><tr>{cells}</tr></thead><tbody>{rows}</tbody></table></div><ul>{notes}</ul></section>")


def with_previous_json(text: str, changes: Changes) -> str:
    """The leaderboard JSON ``text`` with each ranked run's previous rank, score and move, and the ``previous`` block
    (its ``kendall_tau`` also at the top level)."""
    from evalkit.core import jsonout

    data = json.loads(text)
    fields = entry_fields(changes)
    for entry in data.get("ranking", []):
        entry.update(fields.get(entry.get("run"), {"previous_rank": None, "previous_score": None, "move": None}))
    block = as_dict(changes)
    data["previous"] = block
    data["kendall_tau"] = block["kendall_tau"]
    return jsonout.dumps(data, indent=2)
