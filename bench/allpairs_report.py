"""Which ranks of a leaderboard are real, under every all-pairs procedure: a Markdown report for reports/.

Scores every run file of FOLDER against GOLD once (as `evalkit leaderboard`), then compares every pair by each
procedure of evalkit.stats.allpairs (Tukey HSD, randomised Tukey HSD, Wilcoxon with Holm and with Benjamini-Hochberg,
t-test, randomization test, McNemar on Success@1) and writes, per run: the single rank, the rank interval and
letters under each procedure (bold: tied with #1), the bootstrap rank interval; per procedure: how many runs are
tied with #1, how many pairs differ, how many single ranks hold; the old adjacent-rank chains beside them; and the
`evalkit leaderboard` command that prints each column.

    python bench/allpairs_report.py ../shared/data/checkthat2025-4b/runs \\
        --gold ../shared/data/checkthat2025-4b/queries/subtask4b_query_tweets_test_gold.tsv --glob '*_test*' \\
        --title "CheckThat! 2025 Task 4b, test" --out reports/allpairs-4b.md
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

PROCEDURES = [  # (procedure, correction): the default first
    ("randomised-tukey", "holm"), ("tukey", "holm"), ("wilcoxon", "holm"), ("wilcoxon", "bh"), ("ttest", "holm"),
    ("randomization", "holm"), ("mcnemar", "holm"),
]
LABELS = {"randomised-tukey": "rand. Tukey HSD", "tukey": "Tukey HSD", "wilcoxon": "Wilcoxon", "ttest": "t-test",
          "randomization": "randomization", "mcnemar": "McNemar (S@1)"}


def label(procedure: str, correction: str) -> str:
    return LABELS[procedure] + ("" if procedure in ("tukey", "randomised-tukey") else f" + {correction}")


def command(args: argparse.Namespace, procedure: str, correction: str) -> str:
    glob = "".join(f" --glob '{g}'" for g in args.glob)
    extra = "" if procedure in ("tukey", "randomised-tukey") else f" --correction {correction}"
    return f"evalkit leaderboard {args.folder} --gold {args.gold}{glob} --all-pairs {procedure}{extra} -o markdown"


def chains(board) -> list[int]:
    """The old tied groups: consecutive ranks none of whose adjacent differences is significant."""
    groups = [0]
    for test in board.adjacent:
        groups.append(groups[-1] + (1 if test.significant else 0))
    return groups


def findings(board, results, chain) -> list[str]:
    """Facts read off the tables, in sentences."""
    names = [e.name for e in board.entries]
    k = len(names)
    lines = []
    tops = {p: results[p].top_group for p in results}
    sizes = sorted({len(t) for t in tops.values()})
    always = [n for n in names if all(n in t for t in tops.values())]
    if sizes[-1] == 1:
        lines.append(f"#1 ({names[0]}) is significantly better than every other run under every procedure.")
    elif len(sizes) == 1:
        lines.append(f"the same {sizes[0]} runs are tied with #1 under every procedure: {', '.join(always)}.")
    else:
        lines.append(f"{sizes[0]} to {sizes[-1]} runs are tied with #1 ({names[0]}) depending on the procedure; tied with it "
                     f"under every procedure: {', '.join(always)}.")
    held = {p: [r.name for r in results[p].runs if r.rank_interval[0] == r.rank_interval[1]] for p in results}
    ever = sorted({n for v in held.values() for n in v}, key=names.index)
    lines.append(f"single ranks that hold (an interval of one rank) under some procedure: {', '.join(ever) or 'none'}; "
                 f"under the default randomised Tukey HSD: {len(held[PROCEDURES[0]])} of {k}.")
    default = results[PROCEDURES[0]]
    widest = max(default.runs, key=lambda r: r.rank_interval[1] - r.rank_interval[0])
    lines.append(f"under randomised Tukey HSD the widest interval is {widest.name}'s {widest.label} (single rank "
                 f"{names.index(widest.name) + 1}): it may really be anywhere in that range.")
    inside = sum(p.significant for p in default.pairs if chain[names.index(p.first)] == chain[names.index(p.second)])
    lines.append(f"the adjacent-rank chain splits the ranking into {max(chain) + 1} blocks; a chain links neighbours only, so a "
                 f"block can hold runs that differ significantly (randomised Tukey HSD finds {inside} such pairs inside blocks).")
    fdr, fwer = results[("wilcoxon", "bh")], results[("wilcoxon", "holm")]
    lines.append(f"Benjamini-Hochberg (false discovery rate; Otero, Parapar and Barreiro 2025) declares {sum(p.significant for p in fdr.pairs)} "
                 f"pairs apart where Holm (family-wise) declares {sum(p.significant for p in fwer.pairs)}: more resolution, "
                 "with rank intervals that no longer hold jointly.")
    mc = results[("mcnemar", "holm")]
    width = {p: sum(r.rank_interval[1] - r.rank_interval[0] + 1 for r in results[p].runs) / k for p in results}
    lines.append(f"McNemar on Success@1 (a relevant document at rank 1) compares a 0/1 outcome, not {board.metric}: its #1 is "
                 f"{mc.top_group[0]}, {len(mc.top_group)} runs are tied with it, and its intervals hold "
                 f"{width[('mcnemar', 'holm')]:.1f} ranks on average against {width[PROCEDURES[0]]:.1f} for randomised Tukey HSD.")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("--gold", required=True)
    parser.add_argument("--glob", action="append", default=None)
    parser.add_argument("--title", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--note", action="append", default=[], help="a line for the report's notes (e.g. how the runs were made)")
    parser.add_argument("--shown-folder", default=None, help="FOLDER as the report's commands show it (default: as given)")
    args = parser.parse_args()
    args.glob = args.glob or ["*"]
    folder = args.folder
    from evalkit import __version__
    from evalkit.stats.allpairs import AllPairsOptions, all_pairs
    from evalkit.metrics.judgments import with_metric
    from evalkit.scoring.leaderboard import build_leaderboard
    from evalkit.metrics import parse_metric
    from evalkit.report.allpairs_output import anova_rows
    from evalkit.report.tables import markdown_table, number
    from evalkit.core.safetext import markdown_text as md
    from evalkit.stats.paired import align

    board = build_leaderboard(folder, args.gold, patterns=args.glob, pairs=None, progress=False)
    if len(board.entries) < 3:
        sys.exit(f"{folder}: fewer than 3 runs ranked")
    names = [e.name for e in board.entries]
    evaluations = [e.scored.score.evaluation for e in board.entries]
    values = align(evaluations, board.metric, names)
    success = parse_metric("success@1")
    binary = align([with_metric(ev, success) for ev in evaluations], success.label, names)
    results, seconds = {}, {}
    for procedure, correction in PROCEDURES:
        start = time.perf_counter()
        results[(procedure, correction)] = all_pairs(values, AllPairsOptions(procedure, correction), binary)
        seconds[(procedure, correction)] = time.perf_counter() - start
    default = results[PROCEDURES[0]]
    chain = chains(board)
    k = len(names)

    args.folder = args.shown_folder or folder  # what the printed commands name
    heads = ["#", "run", board.metric, "bootstrap", "adjacent chain"] + [label(*p) for p in PROCEDURES]
    rows = []
    for i, entry in enumerate(board.entries):
        cells = [str(entry.rank), md(entry.name), number(entry.scored.score.official_value), default.runs[i].bootstrap_label,
                 chr(ord("A") + chain[i])]
        for p in PROCEDURES:
            ranks = results[p].runs[i]
            text = f"{ranks.label} {ranks.letters}"
            cells.append(f"**{text}**" if ranks.tied_with_top else text)
        rows.append(cells)
    summary_heads = ["procedure", "tied with #1", "pairs apart", "single ranks held", "mean interval width", "letter groups", "time"]
    summary = []
    for p in PROCEDURES:
        result = results[p]
        widths = [r.rank_interval[1] - r.rank_interval[0] + 1 for r in result.runs]
        summary.append([label(*p), f"{len(result.top_group)} of {k}", f"{sum(x.significant for x in result.pairs)} of {len(result.pairs)}",
                        str(sum(w == 1 for w in widths)), f"{sum(widths) / k:.1f}", str(len({r.letters for r in result.runs})),
                        f"{seconds[p]:.2f} s"])

    parts = [
        f"# Which ranks are real: {md(args.title)}", "",
        f"{k} runs ranked by {board.metric} on {board.n_gold:,} queries (task `{board.task}`); every pair compared by each "
        f"all-pairs procedure of evalkit {__version__} (alpha 0.05; B = 10,000 permutations and bootstrap resamples, seed 42).",
        "",
        "Each procedure column gives the run's **rank interval** (the ranks not ruled out: [1 + runs significantly better, "
        "k - runs significantly worse]) and its **letters** (runs sharing a letter are not significantly different); "
        "**bold**: tied with #1 (not significantly different from the best run). *bootstrap*: the run's 95% bootstrap "
        "rank interval (10,000 resamples of the queries). *adjacent chain*: the older marks: consecutive ranks whose "
        "adjacent Wilcoxon tests (Holm over the adjacent pairs) are not significant share a block letter.",
        "",
        markdown_table(heads, rows, [True, False, True, True, False] + [False] * len(PROCEDURES)), "",
        "## Per procedure", "",
        markdown_table(summary_heads, summary, [False] + [True] * 6), "",
        f"The adjacent-rank chain (the old marks) puts {sum(c == 0 for c in chain)} runs in the first block. *time*: the "
        "all-pairs comparison alone (scoring excluded), on this project's shared 2-core machine.", "",
        "## What the intervals change against the single ranks", "",
    ]
    parts += [f"- {md(line)}" for line in findings(board, results, chain)]
    parts += ["", "## Two-way ANOVA (score ~ run + query)", ""]
    heads_a, rows_a = anova_rows(default)
    parts += [markdown_table(heads_a, rows_a, [False] + [True] * 6), ""]
    parts += ["## Commands", "", "Each procedure column, as `evalkit leaderboard` prints it (table, Markdown, JSON, HTML):", "", "```bash"]
    parts += [command(args, *p) for p in PROCEDURES]
    parts += ["```", "", "This report:", "", "```bash",
              f"python bench/allpairs_report.py {args.folder} --gold {args.gold}" + "".join(f" --glob '{g}'" for g in args.glob)
              + f" --title \"{args.title}\" --out {args.out}" + (" --note ..." if args.note else ""), "```"]
    if args.note:
        parts += ["", "## Notes", ""] + [f"- {line}" for line in args.note]
    Path(args.out).write_text("\n".join(parts) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
