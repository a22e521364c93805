"""Rendering a task score as a text table, JSON, Markdown, TSV or trec_eval's ``-q`` lines."""
from __future__ import annotations

import math
from typing import Any, Mapping

from evalkit.core.safetext import markdown_text as md, visible
from evalkit.tasks.base import TaskScore


def fmt(value: float, digits: int = 4) -> str:
    return "nan" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def score_header(score: TaskScore) -> str:
    ev = score.evaluation
    return f"task {score.task} · run {visible(ev.run_name)} · {ev.n_gold - len(ev.gold_only)}/{ev.n_gold} gold queries answered"


def shown(score: TaskScore, name: str, value: float, digits: int) -> str:
    """A value as printed; the official figure reads ``undefined`` when the task says it is."""
    return "undefined" if name == score.official and score.undefined else fmt(value, digits)


def as_table(score: TaskScore, digits: int = 4) -> str:
    width = max(len(k) for k in score.values) + 2
    lines = [score_header(score), ""]
    for name, value in score.values.items():
        mark = "   (official)" if name == score.official else ""
        lines.append(f"{name:<{width}}{shown(score, name, value, digits)}{mark}")
    lines.append("")
    lines += [f"# {visible(line)}" for line in score.policy_lines()]
    return "\n".join(lines)


def as_markdown(score: TaskScore, manifest: Mapping[str, Any] | None = None, digits: int = 4) -> str:
    from evalkit.io.manifest import manifest_markdown

    lines = [f"**{md(score_header(score))}**", "", "| metric | value |", "|---|---:|"]
    for name, value in score.values.items():
        text = shown(score, name, value, digits)
        text = f"**{text}**" if name == score.official else text
        lines.append(f"| {md(name)}{' (official)' if name == score.official else ''} | {text} |")
    lines.append("")
    lines += [f"- {md(line)}" for line in score.policy_lines()]
    if manifest:
        lines += ["", manifest_markdown(manifest)]
    return "\n".join(lines)


def as_dict(score: TaskScore, manifest: Mapping[str, Any] | None = None) -> dict[str, Any]:
    ev = score.evaluation
    return {
        "task": score.task,
        "run": ev.run_name,
        "official": {"metric": score.official, "value": None if score.undefined else score.official_value,
                     **({"undefined": score.undefined} if score.undefined else {})},
        "metrics": score.values,
        "queries": {
            "gold": ev.n_gold,
            "evaluated": int(len(ev.query_ids)),
            "gold_only": len(ev.gold_only),
            "run_only": len(ev.run_only),
            "excluded_by_task": len(ev.excluded),
        },
        "missing_policy": ev.missing,
        "depth": ev.depth,
        "notes": score.policy_lines(),
        "warnings": list(ev.warnings),
        "manifest": dict(manifest or {}),
    }


def as_json(score: TaskScore, manifest: Mapping[str, Any] | None = None) -> str:
    from evalkit.core import jsonout

    return jsonout.dumps(as_dict(score, manifest), undefined_reasons(score, "metrics"), indent=2)


def undefined_reasons(score: TaskScore, prefix: str) -> dict[str, str]:
    """JSON path -> why, for the values left undefined with an undefined official score (see :mod:`evalkit.core.jsonout`)."""
    if not score.undefined:
        return {}
    why = f"undefined with the official score: {score.undefined}"
    return {f"{prefix}.{name}": why for name, value in score.values.items() if not math.isfinite(value)}


def as_tsv(score: TaskScore, digits: int = 6) -> str:
    lines = ["metric\tvalue"] + [f"{k}\t{shown(score, k, v, digits)}" for k, v in score.values.items()]
    return "\n".join(lines)


def per_query_tsv(score: TaskScore, digits: int = 6) -> str:
    ev = score.evaluation
    labels = [m.label for m in ev.metrics]
    lines = ["query_id\t" + "\t".join(labels)]
    columns = [ev.per_query[label] for label in labels]
    for i, query in enumerate(ev.query_ids.tolist()):
        lines.append(query + "\t" + "\t".join(str(c[i]) if c.dtype == object else fmt(float(c[i]), digits) for c in columns))
    return "\n".join(lines) + "\n"


def as_trec_eval(score: TaskScore) -> str:
    """``measure<TAB>query<TAB>value`` lines as ``trec_eval -q`` prints them (:mod:`evalkit.report.trec_eval`)."""
    from evalkit.report.trec_eval import as_trec_eval as lines

    return lines(score)


RENDERERS = {"table": as_table, "markdown": as_markdown, "json": as_json, "tsv": as_tsv, "trec_eval": as_trec_eval}
