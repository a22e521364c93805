"""The competition's pages (Markdown), written from the task's own declaration and the bundle's settings.

Overview, evaluation and submission format say what the scoring program
does because they are generated from what it runs: the task's description
and official definition, its figures (the leaderboard columns) with each
metric's formula, the ranking rule, the missing-query policy and the
submission format evalkit checks. Nothing here is typed twice.
"""
from __future__ import annotations

from typing import Sequence

from evalkit._version import __version__
from evalkit.competition.columns import Column, definition_of

EVALKIT_URL = "https://pypi.org/project/evalkit-ir/"
DETAIL_TEXT = {
    "full": "the evalkit HTML page of your submission (per-query values and the gold documents of this phase's queries)",
    "summary": "a summary of your figures (nothing per query: this phase's gold stays hidden)",
}


def _when(phase) -> str:
    end = phase.end_text or "open-ended"
    return f"{phase.start_text} to {end} (UTC)"


def overview(settings, task, n_queries: dict[str, int]) -> str:
    lines = [f"# {settings.title}", ""]
    if settings.description:
        lines += [settings.description, ""]
    lines += [f"**Task:** {task.description}.", "", f"**Official score:** {task.official_definition}.", "",
              "## Phases", "", "| phase | dates | queries scored | submissions | detailed results |", "|---|---|---|---|---|"]
    for phase in settings.phases:
        limits = f"{phase.max_submissions_per_day} a day, {phase.max_submissions} in all"
        lines.append(f"| {phase.name} | {_when(phase)} | {n_queries[phase.name]:,} | {limits} | {phase.detailed_results} |")
    lines += ["", f"Leaderboard rule: `{settings.submission_rule}` (Codabench's submission rule).", "",
              f"Submissions are scored by [evalkit]({EVALKIT_URL}) {__version__}, the same code participants can run: "
              f"`evalkit score predictions.zip GOLD --task {task.name}` gives the figures of the leaderboard on any gold you hold "
              "(see the Evaluation page).", ""]
    return "\n".join(lines)


def evaluation(settings, task, columns: Sequence[Column], official_label: str, refuses_partial: bool) -> str:
    from evalkit.metrics.evaluation import MISSING_POLICIES, PARTIAL_THRESHOLD
    from evalkit.data.ranking import RANKING_RULE

    missing = settings.scoring.missing or task.default_missing
    lines = ["# Evaluation", "", f"**Official score ({columns[0].title}):** {task.official_definition}.", "",
             "## Leaderboard columns", "", "| column | key in scores.json | order | definition |", "|---|---|---|---|"]
    for column in columns:
        order = "higher is better" if column.sorting == "desc" else "lower is better"
        text = definition_of(task, column.label, official_label).replace("|", "\\|")
        lines.append(f"| {column.title} | `{column.key}` | {order} | {text} |")
    lines += ["", f"The first column ranks the leaderboard; values are shown to {columns[0].precision} decimals and stored exactly.", "",
              "## How a submission is scored", "",
              *_rules_line(settings, task),
              f"- **Ranking rule:** {RANKING_RULE}.",
              f"- **Missing queries:** {MISSING_POLICIES[missing]} (`--missing {missing}`).",
              "- **Wrong split:** " + (f"a submission missing more than {PARTIAL_THRESHOLD:.0%} of the phase's queries is refused "
                                        "as a probable wrong split (a file of another phase costs a submission, not a zero)."
                                        if refuses_partial else
                                        "a submission answering only some of the phase's queries is scored; the others count "
                                        "as the missing-query rule says."),
              "- **Queries not in this phase** are counted and ignored.",
              *([f"- **Depth:** only the top {settings.scoring.depth} documents of each ranking count (trec_eval -M)."]
                if settings.scoring.depth else []),
              *([f"- **Relevant:** a grade of at least {settings.scoring.relevance_level:g} counts as relevant."]
                if settings.scoring.relevance_level != 1 else []),
              "- **An undefined figure** (e.g. no label column where the score needs labels) fails the submission with "
              "a message; it never reaches the leaderboard as a number.",
              "- **Detailed results** (per phase): " + "; ".join(f"{p.name}: {DETAIL_TEXT[p.detailed_results]}" for p in settings.phases) + ".",
              "", "## Reproduce a score", "", "```bash", "pip install evalkit-ir",
              f"evalkit score predictions.zip GOLD --task {task.name}", "```", "",
              "The leaderboard figures are exactly what this command prints for the phase's gold (same code, same options).", ""]
    return "\n".join(lines)


def _rules_line(settings, task) -> list[str]:
    """The Evaluation page's line on the task's submission rules (:mod:`evalkit.competition.rules`), if it has any."""
    if task.submission_format is None:
        return []
    if settings.submission_rules == "warn":
        return ["- **Submission rules:** relaxed by the organisers: a file that `evalkit validate` calls INVALID is scored "
                "as it is, with a note in its log."]
    return ["- **Submission rules:** enforced: a file that `evalkit validate` calls INVALID (another depth, a query of the "
            "phase missing or listed twice, a query of no phase...) fails before it is scored, with one line naming the "
            "rule and its first offending line; the points below concern the files that keep the rules."]


def submission_format(settings, task) -> str:
    fmt = task.submission_format
    depth = task.submission_depth
    lines = ["# Submission format", ""]
    if fmt is not None:
        lines += [f"Upload a **zip** holding one file, `{fmt.member}` ({fmt.description}).", ""]
        if depth:
            lines += [f"- {depth} documents per query, best first: the official file's depth, which `evalkit validate` checks.",]
        if task.labels_required:
            lines += ["- Every row carries a label (`Supports`, `Refutes` or `Not Enough Information`)."]
        if settings.submission_rules == "warn":
            lines += ["- The organisers relaxed the format rules: a file that `evalkit validate` calls INVALID is scored "
                      "anyway, with a note in its log."]
        else:
            lines += ["- **The format rules are enforced:** a file that `evalkit validate` calls INVALID (another depth, a "
                      "query missing or listed twice, a wrong header...) fails with one line naming the rule and its first "
                      "offending line; it never reaches the leaderboard."]
        lines += [f"- Name the file `{fmt.member}`; a zip holding one folder with the file inside is found too.",
                  f"- Other files are ignored when one file is named `{fmt.member}`; otherwise a zip holding several files "
                  "fails with a message naming them.", "",
                  "Write and check the file with evalkit before you upload it:", "", "```bash",
                  f"evalkit submit run.trec --task {task.name} --out submission.zip   # from any run format evalkit reads",
                  f"evalkit validate submission.zip --task {task.name} --gold GOLD_OF_A_PUBLIC_SPLIT", "```", ""]
    else:
        lines += ["Upload a **zip** holding one run file in any format `evalkit formats` lists (a TREC run, for example).", ""]
    lines += ["A submission that cannot be read fails with one line naming the file and line; it does not reach the leaderboard.", ""]
    return "\n".join(lines)


def terms(settings) -> str:
    return "\n".join([
        f"# Terms of participation: {settings.title}", "",
        "- Submit predictions produced by your own system; do not label the test queries by hand.",
        "- The organisers may publish the leaderboard, team names and system descriptions.",
        "- Scores are computed by the scoring program of this competition (evalkit); its code is open source and the "
        "Evaluation page says exactly what it computes.",
        "- Use the data only for research on this task, under the licences stated by the data's providers.", "",
    ])
