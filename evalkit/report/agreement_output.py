"""``evalkit agreement`` as JSON, a text table and a Markdown report, with the figure of the ranks under A vs B."""
from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Protocol

from evalkit.judging.agreement import GoldAgreement, RankingAgreement
from evalkit.report.tables import markdown_table, number, printable, text_table


class AgreementResult(Protocol):
    """What the outputs read of :class:`evalkit.api.agreement.AgreementResult`."""

    @property
    def gold(self) -> GoldAgreement: ...
    @property
    def ranking(self) -> RankingAgreement | None: ...
    @property
    def labels(self) -> tuple[str, str]: ...
    @property
    def notes(self) -> list[str]: ...
    @property
    def manifest(self) -> dict[str, Any]: ...
    @property
    def files(self) -> list[str | None]: ...


METHOD = (
    "Agreement on the pairs both golds judge (a grade >= 0 in both): Cohen's kappa on relevance (grade >= the relevance "
    "level; Cohen 1960), Cohen's weighted kappa on the grades ({weights} weights on the grade positions, as scikit-learn; "
    "Cohen 1968), Krippendorff's alpha with the ordinal metric (Krippendorff 2011). With runs: each gold ranks the runs on "
    "{metric} (equal scores by run name); Kendall's tau-b between the scores, tau_AP of B's ranking with A's as the truth "
    "(Yilmaz, Aslam and Robertson 2008), rank-biased overlap of the two orders (extrapolated, p = {p}; Webber, Moffat and "
    "Zobel 2010), and every pair of runs whose order flips, with whether the all-pairs procedure ({procedure}) finds its "
    "difference significant under A and under B."
)


def figure_path(out: str | os.PathLike) -> Path:
    """The figure beside a report ``NAME.md`` / ``NAME.json``: ``NAME.agreement.png``."""
    from evalkit.report.figures import figure_beside

    return figure_beside(out, "agreement")


def _finite(value: Any) -> Any:
    return None if isinstance(value, float) and math.isnan(value) else value


def as_dict(result: AgreementResult) -> dict[str, Any]:
    g = result.gold
    out: dict[str, Any] = {
        "gold_a": result.labels[0], "gold_b": result.labels[1], "pairs": g.pairs, "only_a": g.only_a, "only_b": g.only_b,
        "complete": g.complete, "relevance_level": g.relevance_level,
        "cohen_kappa": _finite(g.cohen_kappa), "kappa_grades": _finite(g.kappa_grades), "weighted_kappa": _finite(g.weighted_kappa),
        "weights": g.weights, "krippendorff_alpha": _finite(g.krippendorff_alpha), "observed_agreement": g.observed_agreement,
        "confusion_matrix": {"grades": g.categories, "rows": "gold_a", "columns": "gold_b", "counts": g.confusion},
        "per_query": g.per_query,
    }
    r = result.ranking
    if r is not None:
        out.update({
            "metric": r.metric, "runs": r.runs, "kendall_tau": _finite(r.kendall_tau), "tau_ap": _finite(r.tau_ap),
            "tau_ap_variant": r.tau_ap_variant, "rbo": _finite(r.rbo), "rbo_p": r.rbo_p, "all_pairs": r.procedure,
            "judged_k": r.judged_k,
            "flipped_pairs": [[f["above_under_a"], f["above_under_b"]] for f in r.flipped_pairs],  # (above under A, above under B)
            "flips": r.flipped_pairs,  # each flipped pair's scores and significance under A and B
        })
    out["notes"] = result.notes + (r.notes if r is not None else [])
    out["manifest"] = result.manifest
    return out


def as_json(result: AgreementResult) -> str:
    from evalkit.core import jsonout

    return jsonout.dumps(as_dict(result), indent=2) + "\n"


def _yes(flag: bool | None) -> str:
    return "-" if flag is None else "yes" if flag else "no"


def _sections(result: AgreementResult) -> list[tuple[str, list[str], list[list[str]], list[bool]]]:
    """(title, headers, rows, right-aligned) of each table."""
    g, (a, b) = result.gold, result.labels
    summary = [["pairs judged by both", f"{g.pairs:,}"], [f"judged by {a} only", f"{g.only_a:,}"], [f"judged by {b} only", f"{g.only_b:,}"],
               [f"Cohen's kappa (relevance >= {g.relevance_level:g})", number(g.cohen_kappa)],
               ["Cohen's kappa (grades, unweighted)", number(g.kappa_grades)],
               [f"Cohen's weighted kappa ({g.weights})", number(g.weighted_kappa)],
               ["Krippendorff's alpha (ordinal)", number(g.krippendorff_alpha)], ["relevance decisions equal", number(g.observed_agreement)]]
    tables = [("Agreement", ["measure", "value"], summary, [False, True])]
    grades = [f"{c:g}" for c in g.categories]
    confusion = [[f"{a} {grades[i]}", *map(str, row)] for i, row in enumerate(g.confusion)]
    tables.append((f"Confusion matrix (rows: {a}, columns: {b})", ["", *(f"{b} {c}" for c in grades)], confusion,
                   [False] + [True] * len(grades)))
    per_query = [[printable(q["query"]), str(q["pairs"]), str(q["relevant_a"]), str(q["relevant_b"]), number(q["relevance_agreement"]),
                  number(q["grade_agreement"])] for q in g.per_query]
    tables.append(("Per query", ["query", "pairs", f"relevant ({a})", f"relevant ({b})", "relevance equal", "grade equal"], per_query,
                   [False] + [True] * 5))
    r = result.ranking
    if r is not None:
        shares = [(side, label) for side, label in (("a", a), ("b", b)) if r.runs and f"llm_share_{side}" in r.runs[0]]
        runs = [[printable(x["run"]), number(x["score_a"]), str(x["rank_a"]), number(x["score_b"]), str(x["rank_b"]),
                 f"{x['move']:+d}" if x["move"] else "=", *(number(x[f"llm_share_{side}"], 3) for side, _ in shares)] for x in r.runs]
        tables.append((f"Leaderboards side by side ({r.metric})",
                       ["run", f"{a}", "rank", f"{b}", "rank", "move", *(f"LLM@{r.judged_k} ({label})" for _, label in shares)], runs,
                       [False, True, True, True, True, True] + [True] * len(shares)))
        rank = [["Kendall's tau", number(r.kendall_tau)], [r.tau_ap_variant.replace("tau_ap", "tau_AP").replace("_b", ",b")
                 + f" ({b} against {a})", number(r.tau_ap)], [f"RBO (extrapolated, p = {r.rbo_p:g})", number(r.rbo)],
                ["flipped pairs", str(len(r.flipped_pairs))]]
        tables.append(("Rankings", ["measure", "value"], rank, [False, True]))
        flips = [[printable(f["above_under_a"]), printable(f["above_under_b"]), _yes(f["significant_a"]), _yes(f["significant_b"])]
                 for f in r.flipped_pairs]
        tables.append(("Flipped pairs", [f"above under {a}", f"above under {b}", f"significant ({a})", f"significant ({b})"], flips,
                       [False, False, True, True]))
    return tables


def as_table(result: AgreementResult) -> str:
    parts = [f"agreement · {result.labels[0]} vs {result.labels[1]}", ""]
    for title, headers, rows, right in _sections(result):
        parts += [f"{title}:", text_table(headers, rows, right) if rows else "(none)", ""]
    parts += [f"# {printable(line)}" for line in result.notes + (result.ranking.notes if result.ranking else [])]
    return "\n".join(parts).rstrip("\n")


def as_markdown(result: AgreementResult, figure: str | None = None) -> str:
    from evalkit.io.manifest import manifest_markdown

    parts = [f"# Agreement of two sets of judgments: {printable(result.labels[0])} vs {printable(result.labels[1])}", ""]
    for title, headers, rows, right in _sections(result):
        parts += [f"## {title}", "", markdown_table(headers, rows, right) if rows else "(none)", ""]
    r = result.ranking
    if figure and r is not None:
        parts += [f"![rank of each run under {printable(result.labels[0])} and under {printable(result.labels[1])}]({figure})", ""]
    parts += ["## Method", "", METHOD.format(weights=result.gold.weights, metric=r.metric if r else "-", p=r.rbo_p if r else 0.9,
                                             procedure=(r.procedure if r else None) or "-"), ""]
    notes = result.notes + (r.notes if r else [])
    if notes:
        parts += ["## Notes", ""] + [f"- {printable(line)}" for line in notes] + [""]
    parts += ["## Manifest", "", manifest_markdown(result.manifest)]
    return "\n".join(parts) + "\n"


def figure_png(result: AgreementResult) -> bytes:
    from evalkit.report.figures import rank_scatter

    r = result.ranking
    assert r is not None
    a, b = (printable(x) for x in result.labels)
    return rank_scatter([printable(x["run"]) for x in r.runs], [x["rank_a"] for x in r.runs], [x["rank_b"] for x in r.runs], a, b,
                        f"Ranks on {r.metric}: {a} vs {b} (tau {number(r.kendall_tau, 3)})")


def write_agreement(result: AgreementResult, out: str | os.PathLike, *, output: str | None = None, force: bool = False) -> list[Path]:
    """Write the report (Markdown, JSON or table, by ``output`` or ``out``'s suffix) and, with runs, its figure, atomically."""
    from evalkit.report.reuse_output import output_of
    from evalkit.io.manifest import write_sidecar
    from evalkit.io.transactions import atomic_write, check_outputs, sidecar_of

    kind = output_of(out, output)
    picture = figure_path(out) if result.ranking is not None else None
    check_outputs([out, picture, sidecar_of(out) if kind == "table" else None], force, inputs=[f for f in result.files if f])
    text = {"json": as_json, "table": lambda r: as_table(r) + "\n"}.get(kind, lambda r: as_markdown(r, picture.name if picture else None))(result)
    written = []
    if picture is not None:
        written.append(atomic_write(picture, figure_png(result), force=force))
    written.insert(0, atomic_write(out, text, force=force))
    if kind == "table":
        written.append(Path(write_sidecar(out, result.manifest)))
    return written
