"""``evalkit leaderboard RUNS... --gold GOLD``: rank every run file (folders walked), compare every pair, test adjacent ranks."""
from __future__ import annotations

import click

from evalkit.io.transactions import announce

from evalkit.cli.common import (
    ALPHA_OPTION,
    BINARY_OPTION,
    BOOTSTRAP_OPTION,
    CORRECTION_OPTION,
    FORCE_OPTION,
    PERMUTATIONS_OPTION,
    SEED_OPTION,
    ZERO_METHOD_OPTION,
    all_pairs_option,
    scoring_options,
)
from evalkit.cli.convention import out_format
from evalkit.cli.html_output import page_options
from evalkit.cli.paper_output import overview_options


@click.command()
@click.argument("folder", nargs=-1, required=True, type=click.Path(), metavar="FOLDER|RUN...")
@click.option("--gold", "-g", required=True, type=click.Path(dir_okay=False), help="The gold file every run is scored against.")
@scoring_options(without=("run_format",))
@click.option("--glob", "patterns", multiple=True, default=("*",), show_default=True, help="File-name pattern(s) to rank, e.g. '*_test*'.")
@click.option("--recursive/--no-recursive", default=True, show_default=True, help="Also rank files in sub-folders.")
@all_pairs_option("randomised-tukey")
@click.option("--test", "test_name", type=click.Choice(["wilcoxon", "ttest", "randomization"]), default="wilcoxon", show_default=True,
              help="Paired test between adjacent ranks (on the per-query official metric).")
@ZERO_METHOD_OPTION
@CORRECTION_OPTION
@ALPHA_OPTION
@PERMUTATIONS_OPTION
@BOOTSTRAP_OPTION
@SEED_OPTION
@BINARY_OPTION
@click.option("--output", "-o", type=click.Choice(["table", "markdown", "json"]), default=None,
              help="Output format (default: table; markdown / json when --out ends in .md / .json).")
@click.option("--out", "out_path", type=click.Path(dir_okay=False), default=None, help="Write the leaderboard here, e.g. reports/leaderboard.md.")
@FORCE_OPTION
@click.option("--baseline", "-b", default=None, help="Run the page marks significance against (file, name or rank; default: the first rank).")
@click.option("--previous", "previous_path", type=click.Path(dir_okay=False), default=None,
              help="An earlier leaderboard JSON (-o json): each run's rank and score before and after, moves, tau, flipped pairs.")
@page_options
@overview_options
def leaderboard(folder, gold, scoring, patterns, recursive, all_pairs, test_name, zero_method, correction, alpha, permutations,
                bootstrap_resamples, seed, binary, output, out_path, force, baseline, previous_path, html_path, json_path, queries_path,
                corpus_path, trust_pickle, top_docs, exports):
    """Rank every run or submission file in FOLDER (zips included), or the RUN files given, against GOLD.

    Official score first, then the task's other metrics. Every pair of runs
    is compared on the per-query official metric (--all-pairs: randomised
    Tukey HSD by default, seeded), which gives each run a rank interval (the
    ranks it may really hold, e.g. 1-3), a bootstrap rank interval, letters
    (runs sharing one are not significantly different) and says which runs
    are tied with #1. Each pair of adjacent ranks is also tested (Wilcoxon,
    corrected over the adjacent pairs). Unreadable files and runs for another
    split are listed apart with the reason; they never stop the ranking.

    --html writes a self-contained HTML page (leaderboard sortable by any
    column with marks against --baseline, tied groups, the files set apart,
    and a per-query explorer with figures); --json writes its data.
    --latex, --csv and --figures write the overview paper's table (one row
    per team with --group-by) and per-topic figures.
    """
    from evalkit.stats.allpairs import AllPairsOptions
    from evalkit.cli.html_output import page_targets, read_texts
    from evalkit.stats.comparison import CompareOptions
    from evalkit.scoring.leaderboard import build_leaderboard, collect_runs
    from evalkit.io.manifest import build_manifest, input_entry, write_sidecar
    from evalkit.report import leaderboard_output
    from evalkit.judging.provenance import judges_of
    from evalkit.report.leaderboard_judged import judged_columns
    from evalkit.io.transactions import atomic_write, check_outputs, sidecar_of

    output = out_format(out_path, output, ("table", "markdown", "json"))
    folder = folder[0] if len(folder) == 1 else list(folder)  # one folder: the board as before
    pages = page_targets(html_path, json_path)
    if out_path or pages or exports:
        ranked, _, _ = collect_runs(folder, patterns, recursive, gold)  # the files ranked are inputs too
        check_outputs([out_path, sidecar_of(out_path) if out_path and output == "table" else None, *pages, *exports.targets()], force,
                      inputs=[gold, queries_path, corpus_path, previous_path, *ranked])
    options = CompareOptions(zero_method=zero_method, permutations=permutations, bootstrap=bootstrap_resamples, seed=seed,
                             correction=correction, alpha=alpha)
    pairs = None if all_pairs == "none" else AllPairsOptions(all_pairs, correction, alpha, permutations, bootstrap_resamples, seed, zero_method)
    options.check()
    if pairs is not None:
        pairs.check()
    from evalkit.report import leaderboard_previous as before

    earlier = before.read_previous(previous_path) if previous_path else None
    texts, corpus = read_texts(queries_path, corpus_path, trust_pickle)
    board = build_leaderboard(
        folder, gold, scoring=scoring, patterns=patterns, recursive=recursive, test=test_name, options=options, pairs=pairs,
        binary=binary,
    )
    policy = board.entries[0].scored.score.policy_lines()[:1] if board.entries else []
    policy += [board.task_note] if board.task_note else []
    if board.entries:
        from evalkit.metrics.evaluation import MISSING_POLICIES

        policy_name = board.entries[0].scored.score.missing
        policy.append(f"missing queries: {policy_name} ({MISSING_POLICIES[policy_name]})")
        policy += [line for line in board.entries[0].scored.score.policy_lines() if line.startswith(("depth:", "judged only:"))]
    gold_source = board.qrels.source if board.qrels is not None and board.qrels.source else gold  # an irds: id: what was read
    judges, judges_path = judges_of(gold) if board.entries else (None, None)
    inputs = [input_entry("gold", gold_source)] + [input_entry(f"run:{e.name}", e.scored.run.source) for e in board.entries]
    inputs += [input_entry("judges", judges_path)] if judges_path else []
    inputs += [input_entry(role, path) for role, path in (("queries", queries_path), ("corpus", corpus_path), ("previous", previous_path))
               if path]
    manifest = build_manifest(
        board.task or None, inputs,
        {
            "folder": folder if isinstance(folder, list) else str(folder), "glob": list(patterns), "recursive": recursive, "metric_tested": board.metric,
            "test": test_name, "zero_method": zero_method, "correction": correction, "alpha": alpha, "all_pairs": all_pairs,
            "permutations": permutations, "bootstrap": bootstrap_resamples,
            **({"binary": binary} if all_pairs == "mcnemar" else {}),
            **scoring.manifest(policy_name if board.entries else None), "not_ranked": [r.path for r in board.rejected],
            "judged_k": top_docs, **({"baseline": baseline, "top_docs": top_docs} if pages else {}),
        },
        seed=seed if test_name == "randomization" or pairs is not None else None,
        command="leaderboard",
    )
    judged = judged_columns(board, board.qrels, top_docs, judges) if board.entries else None
    if output == "json":
        text = leaderboard_output.as_json(board, policy, manifest, judged)
    elif output == "markdown":
        text = leaderboard_output.as_markdown(board, policy, manifest, judged)
    else:
        text = leaderboard_output.as_table(board, policy, judged)
    changes = earlier and before.compare_previous([(e.name, e.rank, e.scored.score.official_value) for e in board.entries], earlier)
    if changes:
        text = before.with_previous_json(text, changes) if output == "json" else \
            text.rstrip("\n") + "\n\n" + (before.as_markdown(changes) if output == "markdown" else before.as_text(changes))
    payloads = page_data(board, gold, scoring.gold_format, baseline, texts, corpus, manifest, policy, top_docs, html_path, json_path,
                         before.as_html(changes) if changes else "") if pages else []
    if out_path:
        atomic_write(out_path, text if text.endswith("\n") else text + "\n", force=force)
        if output == "table":
            write_sidecar(out_path, manifest)
        announce(f"wrote {out_path}")
    else:
        click.echo(text.rstrip("\n"))
    for path, content in payloads:
        atomic_write(path, content, force=force)
        announce(f"wrote {path}")
    exports.write(board, manifest, force)


def page_data(board, gold, gold_format, baseline, texts, corpus, manifest, policy, top_docs, html_path, json_path,
              extra_html: str = "") -> list[tuple[str, str]]:
    """The HTML page and/or its JSON for a leaderboard (the gold read again for its documents and labels)."""
    from evalkit.cli.html_output import official_components, page_payloads
    from evalkit.io.reading import read_qrels
    from evalkit.report.page_data import PageInputs
    from evalkit.scoring.runset import pick_run
    from evalkit.tasks import get_task

    names = [e.name for e in board.entries]
    base = pick_run(baseline, names, [e.file for e in board.entries], "--baseline") if names else ""
    components = official_components(get_task(board.task), board.entries[0].scored.score) if names else []
    inputs = PageInputs(
        kind="leaderboard", title=f"Leaderboard: {board.task or '?'}", board=board, qrels=read_qrels(gold, gold_format), baseline=base,
        k=top_docs, texts=texts, corpus=corpus, manifest=manifest, policy=policy, official_components=components,
    )
    return page_payloads(inputs, html_path, json_path, extra_html)
