"""Rendering a :class:`~evalkit.scoring.leaderboard.Leaderboard` as a text table, Markdown or JSON."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from evalkit.stats.comparison import test_description
from evalkit.scoring.leaderboard import AdjacentTest, Leaderboard
from evalkit.report import allpairs_output
from evalkit.report.tables import markdown_table, number, p_value, text_table
from evalkit.core.safetext import markdown_text as md, shown_path, visible


@dataclass(frozen=True)
class RunJudgments:
    """One run: its Judged@k, each metric's value with unjudged documents as non-relevant and as relevant."""

    judged: float
    values: dict[str, float]  # unjudged as non-relevant: the scores printed everywhere (official first), then Judged@k
    upper: dict[str, float]  # unjudged as relevant (NaN where no bound is defined)
    added: int  # retrieved, unjudged (query, document) pairs counted relevant in ``upper``
    llm: float | None = None  # LLM@k: the share of its top k an LLM judged (a gold that says who judged), else None


@dataclass(frozen=True)
class JudgedColumns:
    label: str  # "Judged@10"
    runs: dict[str, RunJudgments]
    judged_only: bool = False  # the scores are judged-only (condensed lists): no bound applies, Judged@k is of the full lists
    llm_label: str | None = None  # "LLM@10" where the gold says who judged each pair (evalkit.judging.provenance)

    def extra_labels(self) -> list[str]:
        """The columns after the scores: Judged@k, and LLM@k where the gold says who judged."""
        return [self.label] + ([self.llm_label] if self.llm_label else [])

    def extra_cells(self, name: str) -> list[str]:
        run = self.runs[name]
        return [number(run.judged)] + ([number(math.nan if run.llm is None else run.llm)] if self.llm_label else [])



TIED, APART = "≈", ">"


def columns(board: Leaderboard) -> list[str]:
    return list(board.entries[0].scored.score.values) if board.entries else []


def vs_next(test: AdjacentTest | None, corrected: bool) -> str:
    if test is None:
        return ""
    mark = APART if test.significant else TIED
    if corrected:
        return f"{mark} p {p_value(test.p_value)} (adj. {p_value(test.p_adjusted)})"
    return f"{mark} p {p_value(test.p_value)}"


def rows(board: Leaderboard, bold_best: bool = False, judged: "JudgedColumns | None" = None, name=str) -> tuple[list[str], list[list[str]]]:
    """Header and cells of the ranking; ``name`` renders file names (``markdown_text`` for Markdown)."""
    cols = columns(board)
    official = board.entries[0].scored.score.official if board.entries else ""
    corrected = board.options.correction != "none" and len(board.adjacent) > 1
    best = {c: max((e.scored.score.values[c] for e in board.entries), default=float("nan")) for c in cols}
    ranked = board.all_pairs.runs if board.all_pairs else None
    headers = ["rank"] + (allpairs_output.RANK_HEADERS if ranked else []) + ["file"]
    headers += [f"{c} (official)" if c == official else c for c in cols] + (judged.extra_labels() if judged else []) + ["vs next rank"]
    out = []
    for i, entry in enumerate(board.entries):
        cells = [str(entry.rank)] + (allpairs_output.rank_cells(ranked[i], bold_best) if ranked else []) + [name(entry.file)]
        for c in cols:
            value = entry.scored.score.values[c]
            text = number(value)
            cells.append(f"**{text}**" if bold_best and abs(value - best[c]) <= 1e-12 else text)
        if judged:
            cells += judged.extra_cells(entry.name)
        cells.append(vs_next(board.adjacent[i] if i < len(board.adjacent) else None, corrected))
        out.append(cells)
    return headers, out


def judgments_section(board: Leaderboard, judged: "JudgedColumns") -> list[str]:
    """Markdown: each run's official score with unjudged documents as non-relevant and as relevant, and its Judged@k."""
    official = board.entries[0].scored.score.official
    if judged.judged_only:
        body = [[str(e.rank), md(e.file), number(judged.runs[e.name].judged)] for e in board.entries]
        return ["## Judgments", "", markdown_table(["rank", "file", judged.label], body, [True, False, True]), "",
                f"- {judged.label}: the judged share of each run's top {judged.label.split('@')[-1]} before condensing",
                "- judged-only scores (condensed lists): unjudged documents are removed, so no bound with them counted relevant applies"]
    shares = [md(label) for label in judged.extra_labels()]
    heads = ["rank", "file", *shares, md(f"{official} (unjudged non-relevant)"), "(unjudged relevant)", "unjudged retrieved"]
    body = []
    for entry in board.entries:
        run = judged.runs[entry.name]
        body.append([str(entry.rank), md(entry.file), *judged.extra_cells(entry.name), number(run.values[official]),
                     number(run.upper[official]), f"{run.added:,}"])
    llm_line = [f"- {judged.llm_label}: the share of each run's top {judged.label.split('@')[-1]} whose judgment an LLM "
                "gave (the gold says who judged each pair)"] if judged.llm_label else []
    return [
        "## Judgments", "",
        markdown_table(heads, body, [True, False, *[True] * len(shares), True, True, True]), "",
        f"- {judged.label}: the judged share of each run's top {judged.label.split('@')[-1]} (retrieved documents with a "
        "grade in the gold; ir_measures' Judged@k)", *llm_line,
        "- unjudged relevant: the score with every retrieved, unjudged document counted relevant (an upper bound for "
        "P@k, Success, MRR and Judged@k; for metrics divided by R, the value under that assumption); the JSON output "
        "has both values for every metric",
    ]


def alignment(headers: list[str]) -> list[bool]:
    """Right-aligned columns of :func:`rows`: numbers and rank intervals."""
    left = {"file", "letters", "tied with #1", "vs next rank"}
    return [h not in left for h in headers]


def single_ranks(board: Leaderboard) -> dict[str, int]:
    return {e.name: e.rank for e in board.entries}


def legend(board: Leaderboard) -> list[str]:
    lines = [allpairs_output.legend(board.all_pairs)] if board.all_pairs else []
    if not board.adjacent:
        return lines
    o = board.options
    if len(board.adjacent) == 1:
        correction = "one adjacent pair, so no correction"
    elif o.correction != "none":
        correction = f"{o.correction.capitalize()}-corrected over the {len(board.adjacent)} adjacent pairs"
    else:
        correction = "not corrected"
    return lines + [
        f"vs next rank: {test_description(board.test, o)} on per-query {board.metric} between a run and the next one, "
        f"{correction}; {APART} = significantly better than the next (adjusted p < {o.alpha}), "
        f"{TIED} = statistically tied with the next"
    ]


def header(board: Leaderboard) -> str:
    return (
        f"leaderboard · task {board.task or '?'} · gold {visible(shown_path(board.gold))} ({board.n_gold} queries) · "
        f"{len(board.entries)} ranked, {len(board.rejected)} not ranked"
    )


def as_table(board: Leaderboard, policy: list[str] | None = None, judged: "JudgedColumns | None" = None) -> str:
    parts = [header(board), ""]
    if board.entries:
        heads, body = rows(board, judged=judged)
        parts.append(text_table(heads, body, alignment(heads)))
    else:
        parts.append("(no run could be ranked)")
    if board.rejected:
        parts += ["", "not ranked:", text_table(["file", "problem", "reason"], [[r.path, r.kind, r.reason] for r in board.rejected], [False] * 3)]
    parts.append("")
    if board.all_pairs:
        parts += [f"# {visible(line)}" for line in allpairs_output.summary(board.all_pairs, single_ranks(board)) + board.all_pairs.description()]
    parts += [f"# {visible(line)}" for line in legend(board) + notes(board) + (policy or [])]
    return "\n".join(parts).rstrip("\n")


def notes(board: Leaderboard) -> list[str]:
    out = list(board.notes)
    if board.skipped:
        out.append(f"skipped (not run files): {', '.join(board.skipped)}")
    return out


def as_markdown(board: Leaderboard, policy: list[str] | None = None, manifest: Mapping[str, Any] | None = None,
                judged: "JudgedColumns | None" = None) -> str:
    from evalkit.io.manifest import manifest_markdown

    parts = [f"# Leaderboard: {md(board.task or '?')}", "", md(header(board)), "", "## Ranking", ""]
    if board.entries:
        heads, body = rows(board, bold_best=True, judged=judged, name=md)
        heads = [md(h) for h in heads]
        body = [[*row[:-1], md(row[-1])] for row in body]
        parts.append(markdown_table(heads, body, alignment(heads)))
        parts += [""] + [f"- {md(line)}" for line in legend(board)] + ["- best value per column in **bold**"]
        if board.all_pairs:
            parts += [""] + allpairs_output.as_markdown(board.all_pairs, single_ranks(board), runs=False)
        if judged:
            parts += [""] + judgments_section(board, judged)
    else:
        parts.append("No run could be ranked.")
    parts += ["", "## Not ranked", ""]
    if board.rejected:
        parts.append(markdown_table(["file", "problem", "reason"], [[md(r.path), md(r.kind), md(r.reason)] for r in board.rejected], [False] * 3))
    else:
        parts.append("Every file was ranked.")
    extra = notes(board) + (policy or [])
    if extra:
        parts += ["", "## Notes", ""] + [f"- {md(line)}" for line in extra]
    if manifest:
        parts += ["", "## Manifest", "", manifest_markdown(manifest)]
    return "\n".join(parts) + "\n"


def finite(value: float) -> float | None:
    return None if isinstance(value, float) and math.isnan(value) else value


def judged_entry(judged: "JudgedColumns | None", name: str) -> dict:
    """A ranked run's Judged@k and every value with unjudged documents as non-relevant and as relevant (JSON)."""
    if judged is None:
        return {}
    run = judged.runs[name]
    return {
        "judged": {"metric": judged.label, "value": finite(run.judged)},
        **({"llm_judged": {"metric": judged.llm_label, "value": finite(math.nan if run.llm is None else run.llm)}}
           if judged.llm_label else {}),
        "bounds": {label: {"unjudged_nonrelevant": finite(value), "unjudged_relevant": finite(run.upper[label])}
                   for label, value in run.values.items()},
        "unjudged_added": run.added,
    }


def rank_fields(board: Leaderboard, i: int) -> dict:
    """Entry ``i``'s rank interval, bootstrap rank interval, letters and tied-with-#1 (empty without an all-pairs comparison)."""
    if board.all_pairs is None:
        return {}
    ranks = board.all_pairs.runs[i]
    return {"rank_interval": list(ranks.rank_interval), "bootstrap_rank_interval": list(ranks.bootstrap_interval),
            "letters": ranks.letters, "tied_with_top": ranks.tied_with_top}


def as_dict(board: Leaderboard, policy: list[str] | None = None, manifest: Mapping[str, Any] | None = None,
            judged: "JudgedColumns | None" = None) -> dict:
    o = board.options
    return {
        "task": board.task,
        "gold": board.gold,
        "gold_queries": board.n_gold,
        "metric_tested": board.metric,
        "test": board.test,
        "correction": o.correction,
        "alpha": o.alpha,
        "zero_method": o.zero_method,
        "ranking": [
            {
                "rank": e.rank,
                "run": e.name,
                "file": e.file,
                "official": {"metric": e.scored.score.official, "value": e.scored.score.official_value},
                "metrics": e.scored.score.values,
                "vs_next": (
                    {
                        "next": board.adjacent[i].lower,
                        "n": board.adjacent[i].n,
                        "difference": board.adjacent[i].difference,
                        "p_value": board.adjacent[i].p_value,
                        "p_adjusted": board.adjacent[i].p_adjusted,
                        "significant": board.adjacent[i].significant,
                    }
                    if i < len(board.adjacent) else None
                ),
                **rank_fields(board, i),
                **judged_entry(judged, e.name),
            }
            for i, e in enumerate(board.entries)
        ],
        "not_ranked": [{"file": r.path, "problem": r.kind, "reason": r.reason} for r in board.rejected],
        "all_pairs": board.all_pairs.as_dict() if board.all_pairs else None,
        "skipped": board.skipped,
        "notes": legend(board) + notes(board) + (policy or []),
        "manifest": dict(manifest or {}),
    }


def as_json(board: Leaderboard, policy: list[str] | None = None, manifest: Mapping[str, Any] | None = None,
            judged: "JudgedColumns | None" = None) -> str:
    from evalkit.core import jsonout
    from evalkit.report.text import undefined_reasons

    reasons = {}
    for i, e in enumerate(board.entries):
        reasons.update(undefined_reasons(e.scored.score, f"ranking[{i}].metrics"))
        if e.scored.score.undefined:
            reasons[f"ranking[{i}].official.value"] = f"the official score is undefined: {e.scored.score.undefined}"
    return jsonout.dumps(as_dict(board, policy, manifest, judged), reasons, indent=2)
