"""The Markdown report of ``evalkit report``: leaderboard, rank distribution, query length, wins/losses, manifest.

:func:`build_report` returns the Markdown text and the PNG figures (file
name -> bytes); the command writes the figures next to the report and the
report links them by file name, so the folder can be moved as a whole.
Every name, id and text from the inputs is escaped (:func:`evalkit.core.safetext.markdown_text`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence
from urllib.parse import quote

import numpy as np

from evalkit.stats.comparison import CompareOptions, significance_test, test_description
from evalkit.data import Qrels
from evalkit.report import analysis, figures
from evalkit.report.tables import is_nan, markdown_table, number, signed
from evalkit.scoring.runset import ScoredRun, by_official_score
from evalkit.core.safetext import markdown_text as md, shown_path
from evalkit.stats.correction import adjust
from evalkit.stats.effect_size import rank_biserial
from evalkit.stats.paired import PairedValues, align

BETTER, WORSE = "▲", "▼"
TEXT_LIMIT = 160


@dataclass(frozen=True)
class ReportOptions:
    baseline: str
    metric: str  # per-query metric for query length and wins/losses
    test: str = "wilcoxon"
    compare: CompareOptions = field(default_factory=CompareOptions)
    pair: tuple[str, str] | None = None  # (a, b): wins of b over a
    top: int = 10
    length_buckets: int = 4
    title: str | None = None


@dataclass
class Report:
    markdown: str
    figures: dict[str, bytes]


ordered = by_official_score


def markers(scored: Sequence[ScoredRun], options: ReportOptions) -> tuple[dict[tuple[str, str], str], list[str]]:
    """``{(run, column): marker}`` against the baseline, and the columns that were tested.

    One family per column: the runs other than the baseline, corrected with
    ``options.compare.correction``. Columns without per-query values (a
    composite official score, a classification F1) get no marker.
    """
    found: dict[tuple[str, str], str] = {}
    tested: list[str] = []
    names = [s.name for s in scored]
    if len(scored) < 2:
        return found, tested
    evaluations = [s.score.evaluation for s in scored]
    base = names.index(options.baseline)
    for column in scored[0].score.values:
        if column not in evaluations[0].per_query:
            continue
        values = align(evaluations, column, names)
        others = [i for i in range(len(names)) if i != base]
        results = []
        for i in others:
            a, b, _ = values.pair(i, base)
            direction = rank_biserial(a, b, options.compare.zero_method) if options.test == "wilcoxon" else float(np.mean(a - b)) if len(a) else 0.0
            results.append((significance_test(options.test, a, b, options.compare), direction))
        adjusted = adjust([r.p_value for r, _ in results], options.compare.correction, options.compare.alpha)
        for i, (_result, diff), p in zip(others, results, adjusted):
            if p < options.compare.alpha and diff != 0:
                found[(names[i], column)] = BETTER if diff > 0 else WORSE
        tested.append(column)
    return found, tested


def leaderboard_section(scored: Sequence[ScoredRun], options: ReportOptions) -> list[str]:
    rows_in = ordered(scored)
    columns = list(rows_in[0].score.values)
    official = rows_in[0].score.official
    best = {c: max((s.score.values[c] for s in rows_in if not is_nan(s.score.values[c])), default=float("nan")) for c in columns}
    found, tested = markers(scored, options)
    headers = ["#", "run"] + [md(f"{c} (official)" if c == official else c) for c in columns]
    rows = []
    for rank, item in enumerate(rows_in, start=1):
        name = md(f"{item.name} (baseline)" if item.name == options.baseline else item.name)
        cells = [str(rank), name]
        for c in columns:
            value = item.score.values[c]
            text = number(value)
            if not is_nan(value) and not is_nan(best[c]) and abs(value - best[c]) <= 1e-12:
                text = f"**{text}**"
            marker = found.get((item.name, c))
            cells.append(f"{text} {marker}" if marker else text)
        rows.append(cells)
    lines = ["## Leaderboard", "", markdown_table(headers, rows, [True, False] + [True] * len(columns)), ""]
    legend = "Best value per column in **bold**."
    if tested and len(scored) > 1:
        compare = options.compare
        if len(scored) == 2:
            family = "one comparison per column, so no correction"
        elif compare.correction != "none":
            family = f"{compare.correction.capitalize()} correction over the {len(scored) - 1} runs compared in each column"
        else:
            family = "no multiple-comparison correction"
        legend += (
            f" {BETTER} / {WORSE}: significantly higher / lower than the baseline **{md(options.baseline)}** "
            f"({md(test_description(options.test, compare))} on per-query values; {family}; alpha = {compare.alpha}); "
            "no marker: no significant difference."
        )
        untested = [col for col in columns if col not in tested]
        if untested:
            legend += f" Not tested (no per-query values): {md(', '.join(untested))}."
    lines.append(legend)
    return lines


def rank_section(scored: Sequence[ScoredRun], figure_name: str) -> tuple[list[str], bytes]:
    rows_in = ordered(scored)
    distributions = {s.name: analysis.rank_distribution(s.score.evaluation) for s in rows_in}
    headers = ["run"] + analysis.RANK_BUCKETS
    rows = [[md(name)] + [str(counts[b]) for b in analysis.RANK_BUCKETS] for name, counts in distributions.items()]
    n = len(rows_in[0].score.evaluation.query_ids)
    lines = [
        "## Where the first relevant document lands",
        "",
        f"Queries (of {n}) by the rank of their first relevant document; `11+`: found at rank 11 or later; "
        "`none`: not in the run.",
        "",
        markdown_table(headers, rows),
        "",
        f"![Rank of the first relevant document]({quote(figure_name)})",
    ]
    return lines, figures.rank_distribution_chart(distributions, analysis.RANK_BUCKETS)


def length_section(scored: Sequence[ScoredRun], qrels: Qrels, values: PairedValues, options: ReportOptions,
                   figure_name: str) -> tuple[list[str], bytes | None]:
    lines = ["## Effect of query length", ""]
    texts = qrels.texts or {}
    buckets = analysis.length_buckets(values.query_ids, texts, options.length_buckets)
    if not buckets:
        lines.append("The gold file carries no query text, so query length cannot be measured.")
        return lines, None
    means = analysis.bucket_means(values, buckets)
    order = [values.index(s.name) for s in ordered(scored)]
    headers = ["run"] + [md(f"{b.label} (n={len(b.query_ids)})") for b in buckets]
    rows = [[md(values.names[i])] + [number(v) for v in means[i]] for i in order]
    with_text = sum(len(b.query_ids) for b in buckets)
    lines += [
        f"Mean {md(values.metric)} per bucket of query length (whitespace tokens of the query text in the gold; "
        f"buckets at the quantiles; {with_text} of {len(values.query_ids)} queries have text).",
        "",
        markdown_table(headers, rows),
        "",
        f"![{md(values.metric)} by query length]({quote(figure_name)})",
    ]
    chart = figures.query_length_chart([b.label for b in buckets], {values.names[i]: list(means[i]) for i in order}, values.metric)
    return lines, chart


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= TEXT_LIMIT else text[: TEXT_LIMIT - 1] + "…"


def _rank_text(rank: float) -> str:
    return "-" if not np.isfinite(rank) else str(int(rank))


def default_pair(scored: Sequence[ScoredRun], baseline: str) -> tuple[str, str] | None:
    others = [s for s in ordered(scored) if s.name != baseline]
    return (baseline, others[0].name) if others else None


def wins_section(scored: Sequence[ScoredRun], qrels: Qrels, values: PairedValues, options: ReportOptions) -> list[str]:
    pair = options.pair or default_pair(scored, options.baseline)
    lines = ["## Largest wins and losses", ""]
    if pair is None:
        return lines + ["Only one run: nothing to compare."]
    a, b = pair
    wins, losses = analysis.largest_differences(values, a, b, options.top)
    texts = qrels.texts or {}
    relevant = qrels.relevant_docs()
    by_name = {s.name: s for s in scored}
    ranks = {}
    for name in (a, b):
        ev = by_name[name].score.evaluation
        ranks[name] = dict(zip(ev.query_ids.tolist(), analysis.first_relevant_ranks(ev).tolist()))
    headers = ["query", "text", "gold doc", f"{md(values.metric)} A", f"{md(values.metric)} B", "diff", "first rel. rank A / B"]

    def table(deltas) -> list[str]:
        if not deltas:
            return ["(none)"]
        rows = []
        for d in deltas:
            gold = relevant.get(d.query_id, [])
            gold_text = ", ".join(gold[:3]) + (f" (+{len(gold) - 3})" if len(gold) > 3 else "")
            rows.append([
                md(d.query_id), md(_shorten(texts.get(d.query_id, ""))), md(gold_text) or "-", number(d.value_a), number(d.value_b),
                signed(d.difference), f"{_rank_text(ranks[a].get(d.query_id, np.inf))} / {_rank_text(ranks[b].get(d.query_id, np.inf))}",
            ])
        return [markdown_table(headers, rows, [False, False, False, True, True, True, True])]

    lines += [
        f"A = **{md(a)}**, B = **{md(b)}**, on per-query {md(values.metric)}; the {options.top} largest differences each way "
        "(ties in gold order).",
        "",
        f"### B better than A ({len(wins)} shown)",
        "",
        *table(wins),
        "",
        f"### A better than B ({len(losses)} shown)",
        "",
        *table(losses),
    ]
    return lines


def build_report(
    task: str, qrels: Qrels, scored: Sequence[ScoredRun], options: ReportOptions, figure_stem: str,
    manifest: Mapping[str, Any], policy: Sequence[str] = (),
) -> Report:
    """The whole report; ``figure_stem`` prefixes the PNG file names (``STEM.first-relevant-rank.png``)."""
    from evalkit.io.manifest import manifest_markdown

    names = [s.name for s in scored]
    values = align([s.score.evaluation for s in scored], options.metric, names)
    n_queries = len(values.query_ids)
    gold_name = shown_path(qrels.source.path) if qrels.source else qrels.name
    title = options.title or f"evalkit report: {task}"
    lines = [
        f"# {md(title)}",
        "",
        f"Task {md(task)} · gold {md(gold_name)} ({n_queries} queries) · {len(scored)} runs · baseline **{md(options.baseline)}** · "
        f"per-query metric {md(values.metric)} · evalkit {md(manifest.get('evalkit_version', ''))} · {md(manifest.get('created', ''))}",
        "",
    ]
    lines += leaderboard_section(scored, options) + [""]
    rank_name = f"{figure_stem}.first-relevant-rank.png"
    length_name = f"{figure_stem}.query-length.png"
    rank_lines, rank_png = rank_section(scored, rank_name)
    lines += rank_lines + [""]
    length_lines, length_png = length_section(scored, qrels, values, options, length_name)
    lines += length_lines + [""]
    lines += wins_section(scored, qrels, values, options) + [""]
    if policy:
        lines += ["## Notes", ""] + [f"- {md(line)}" for line in policy] + [""]
    lines += ["## Manifest", "", manifest_markdown(manifest), ""]
    pngs = {rank_name: rank_png}
    if length_png is not None:
        pngs[length_name] = length_png
    return Report("\n".join(lines).rstrip("\n") + "\n", pngs)
