"""``detailed_results.html`` of one scored submission: evalkit's HTML page, or a summary for a hidden gold.

``full``: the page of ``evalkit report --html`` for this one submission
(figures, per-query explorer with the gold documents of every query, its
figures). It shows the gold, so it suits a phase whose gold is public (a
dev phase). ``summary``: the figures, the policy notes and warnings, and
the manifest, with nothing per query, for a phase whose gold stays hidden
(per-query values and judged documents would give the test gold away).
"""
from __future__ import annotations

import html
from typing import Any, Mapping, Sequence

from evalkit.core.jsonout import strict

DETAIL_MODES = ("full", "summary")


def full_page(title: str, task, qrels, scored, manifest: Mapping[str, Any]) -> str:
    """evalkit's HTML page (:mod:`evalkit.report.html_page`) for one scored run (a :class:`~evalkit.scoring.runset.ScoredRun`)."""
    from evalkit.stats.comparison import CompareOptions
    from evalkit.report.html_page import render_page
    from evalkit.report.page_data import PageInputs, board_of_runs, build_page_data
    from evalkit.scoring.runset import comparison_metric

    score = scored.score
    metric = comparison_metric(task, score)
    board = board_of_runs(task.name, qrels.source.path if qrels.source else "gold", [scored], metric, "wilcoxon", CompareOptions())
    components = [] if score.official in score.evaluation.per_query else [m.label for m in task.official_metrics()]
    inputs = PageInputs(kind="report", title=title, board=board, qrels=qrels, baseline=scored.name, manifest=manifest,
                        policy=score.policy_lines(), official_components=components)
    return render_page(build_page_data(inputs), title)


def summary_page(title: str, task, columns: Sequence[Mapping[str, Any]], score, submission: str, manifest: Mapping[str, Any]) -> str:
    """A small self-contained page: the leaderboard figures, what they mean, the notes; nothing per query (``score``:
    the task's :class:`~evalkit.tasks.base.TaskScore`)."""
    from evalkit.competition.columns import definition_of

    esc = html.escape
    rows = []
    for column in columns:
        value = score.values[column["label"]]
        rows.append(f"<tr><td>{esc(column['label'])}</td><td><code>{esc(column['key'])}</code></td>"
                    f"<td class=num>{value:.{int(column.get('precision', 4))}f}</td><td class=num>{value!r}</td>"
                    f"<td>{esc(definition_of(task, column['label'], score.official))}</td></tr>")
    notes = [*score.policy_lines(), *score.evaluation.warnings]
    items = "".join(f"<li>{esc(note)}</li>" for note in notes)
    body = (
        f"<h1>{esc(title)}</h1>"
        f"<p>Submission <code>{esc(submission)}</code>, scored by evalkit {esc(str(manifest.get('evalkit_version', '')))} "
        f"for task <code>{esc(task.name)}</code> ({esc(task.description)}).</p>"
        f"<p><b>Official score:</b> {esc(task.official_definition)}.</p>"
        "<table><thead><tr><th>figure</th><th>leaderboard key</th><th>shown</th><th>exact</th><th>definition</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
        f"<h2>How it was scored</h2><ul>{items}</ul>"
        "<p>Per-query results are not shown in this phase: they would reveal the hidden gold. Score a run of a public split "
        "yourself with <code>evalkit score</code>, or validate a file with <code>evalkit validate</code>.</p>"
        f"<details><summary>Manifest</summary><pre>{esc(strict(manifest, 'the results page manifest', indent=2))}</pre></details>"
    )
    style = ("body{font:15px/1.45 system-ui,sans-serif;margin:2em auto;max-width:60em;padding:0 1em;color:#222}"
             "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}"
             "td.num{text-align:right;font-variant-numeric:tabular-nums}pre{overflow:auto;background:#f6f6f6;padding:1em}")
    return (f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>{esc(title)}</title>"
            f"<style>{style}</style></head><body>{body}</body></html>\n")
