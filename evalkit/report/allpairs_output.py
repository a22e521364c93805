"""Rendering an :class:`~evalkit.stats.allpairs.AllPairs` comparison: rank columns, the runs, every pair, the ANOVA (text and Markdown).

Shared by the leaderboard and compare outputs; the JSON is :meth:`AllPairs.as_dict`. Run names are shown,
never obeyed: ``visible`` in plain text, ``markdown_text`` in Markdown (:mod:`evalkit.core.safetext`).
"""
from __future__ import annotations

from evalkit.stats.allpairs import AllPairs, RunRanks
from evalkit.report.tables import interval, markdown_table, number, p_value, signed, text_table
from evalkit.core.safetext import markdown_text as md, visible

RANK_HEADERS = ["rank interval", "bootstrap", "letters", "tied with #1"]
SHORT_NAMES = {
    "tukey": "Tukey HSD", "randomised-tukey": "randomised Tukey HSD", "wilcoxon": "Wilcoxon", "ttest": "t-test",
    "randomization": "randomization", "mcnemar": "McNemar",
}


def title(result: AllPairs) -> str:
    o = result.options
    correction = "" if o.tukey else f" + {o.correction}"
    return f"{SHORT_NAMES[o.procedure]}{correction}, alpha {o.alpha}"


def rank_cells(ranks: RunRanks, markdown: bool = False) -> list[str]:
    """Rank interval, bootstrap rank interval, letters and the tied-with-#1 mark of one run."""
    tied = ("**yes**" if markdown else "yes") if ranks.tied_with_top else ""
    return [ranks.label, ranks.bootstrap_label, ranks.letters, tied]


def summary(result: AllPairs, single_ranks: dict[str, int] | None = None) -> list[str]:
    """What the procedure says about the ranking, in a few sentences."""
    k = len(result.runs)
    significant = sum(p.significant for p in result.pairs)
    top = result.top_group
    lines = [f"{len(top)} of {k} runs are tied with #1 ({', '.join(top)})" if len(top) > 1 else
             f"#1 ({top[0]}) is significantly better than every other run",
             f"{significant} of {len(result.pairs)} pairs differ significantly"]
    exact = [r.name for r in result.runs if r.rank_interval[0] == r.rank_interval[1]]
    if single_ranks is not None:
        lines.append(f"{len(exact)} of {k} single ranks are confirmed (a rank interval of one rank)"
                     + (f": {', '.join(f'#{single_ranks[n]} {n}' for n in exact)}" if exact else ""))
    widths = [r.rank_interval[1] - r.rank_interval[0] + 1 for r in result.runs]
    lines.append(f"rank intervals hold {min(widths)} to {max(widths)} ranks (mean {sum(widths) / k:.1f}); "
                 f"{len({r.letters for r in result.runs})} distinct letter groups")
    return lines


def runs_rows(result: AllPairs, markdown: bool = False) -> tuple[list[str], list[list[str]]]:
    name = md if markdown else visible
    heads = ["run", name(result.metric)] + RANK_HEADERS
    rows = [[name(r.name), number(r.mean)] + rank_cells(r, markdown) for r in result.runs]
    return heads, rows


def pairs_rows(result: AllPairs, markdown: bool = False) -> tuple[list[str], list[list[str]]]:
    name = md if markdown else visible
    heads = ["run A", "run B", "A - B", "interval", "p", "p adjusted", "ES_E", ""]
    rows = [[name(p.first), name(p.second), signed(p.difference), interval(p.low, p.high), p_value(p.p_value),
             p_value(p.p_adjusted), signed(p.es_e, 3), "\\*" if markdown and p.significant else "*" if p.significant else ""]
            for p in result.pairs]
    return heads, rows


def anova_rows(result: AllPairs) -> tuple[list[str], list[list[str]]]:
    heads = ["source", "SS", "df", "MS", "F", "p", "share of SS"]
    names = {"system": "runs", "topic": "queries", "residual": "residual", "total": "total"}
    rows = [[names[r.source], number(r.ss, 4), str(r.df), "" if r.ms is None else f"{r.ms:.6g}",
             "" if r.f is None else number(r.f, 2), "" if r.p is None else p_value(r.p), f"{r.share:.1%}"] for r in result.anova.rows]
    return heads, rows


def as_text(result: AllPairs, pairs: bool = True) -> list[str]:
    """The comparison as plain-text lines (runs, pairs when asked, ANOVA, then what was done as comments)."""
    lines = [f"all pairs: {title(result)}", ""]
    heads, rows = runs_rows(result)
    lines += [text_table(heads, rows, [False, True, True, True, False, False]), ""]
    if pairs:
        heads, rows = pairs_rows(result)
        lines += [text_table(heads, rows, [False, False] + [True] * 5 + [False]), ""]
    heads, rows = anova_rows(result)
    lines += [text_table(heads, rows, [False] + [True] * 6), ""]
    lines += [f"# {visible(line)}" for line in summary(result) + result.description()]
    return lines


def as_markdown(result: AllPairs, single_ranks: dict[str, int] | None = None, heading: str = "##", runs: bool = True) -> list[str]:
    """A Markdown section: summary, the runs (unless a ranking shows them), the ANOVA, every pair (folded), what was done."""
    parts = [f"{heading} All pairs: {title(result)}", ""]
    parts += [f"- {md(line)}" for line in summary(result, single_ranks)] + [""]
    if runs:
        heads, rows = runs_rows(result, markdown=True)
        parts += [markdown_table(heads, rows, [False, True, True, True, False, False]), ""]
    heads, rows = anova_rows(result)
    parts += [markdown_table(heads, rows, [False] + [True] * 6), ""]
    heads, rows = pairs_rows(result, markdown=True)
    parts += [f"<details><summary>Every pair ({len(result.pairs)}; * = significant)</summary>", "",
              markdown_table(heads, rows, [False, False] + [True] * 5 + [False]), "", "</details>", ""]
    parts += [f"- {md(line)}" for line in result.description()]
    return parts


def legend(result: AllPairs) -> str:
    """One line for a table whose rank columns come from ``result``."""
    return (f"rank interval, bootstrap, letters, tied with #1: from comparing every pair ({title(result)}, on per-query "
            f"{result.metric}; how, in the all-pairs lines)")
