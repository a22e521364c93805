"""Rendering a :class:`~evalkit.stats.comparison.Comparison` as a text table, Markdown, JSON or per-query TSV."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from evalkit.stats.allpairs import AllPairs
from evalkit.stats.comparison import TEST_NAMES, Comparison, PairComparison
from evalkit.report import allpairs_output
from evalkit.report.tables import interval, markdown_table, number, p_value, percent, signed, text_table
from evalkit.core.safetext import markdown_text as md, visible
from evalkit.stats.paired import PairedValues

SHORT = {
    "wilcoxon": "Wilcoxon",
    "ttest": "t-test",
    "randomization": "randomization",
    "mcnemar_exact": "McNemar exact",
    "mcnemar_chi2": "McNemar chi2",
}


def header(comparison: Comparison, task: str) -> str:
    return (
        f"compare · task {task} · metric {comparison.metric} · {comparison.n_queries} queries · "
        f"baseline {visible(comparison.baseline)}"
    )


def p_cell(pair: PairComparison, test: str, alpha: float, corrected: bool) -> str:
    raw = pair.tests[test].p_value
    adjusted = pair.adjusted.get(test, raw)
    star = "*" if adjusted < alpha else ""
    return f"{p_value(raw)} / {p_value(adjusted)}{star}" if corrected else f"{p_value(raw)}{star}"


def discordant(pair: PairComparison) -> str:
    if "mcnemar_exact" not in pair.tests:
        return "n/a"
    details = pair.tests["mcnemar_exact"].details
    return f"{details['only_baseline']} / {details['only_run']}"


def summary_rows(comparison: Comparison, name=str) -> list[list[str]]:
    """``name`` renders run names (``markdown_text`` for Markdown)."""
    base_mean = comparison.pairs[0].mean_baseline if comparison.pairs else float("nan")
    rows = [[name(f"{comparison.baseline} (baseline)"), number(base_mean), "", "", "", "", "", ""]]
    for pair in comparison.pairs:
        rows.append(
            [
                name(pair.run),
                number(pair.mean_run),
                signed(pair.difference),
                percent(pair.relative),
                interval(*pair.ci),
                f"{pair.wins}/{pair.ties}/{pair.losses}",
                signed(pair.rank_biserial, 3),
                signed(pair.es_e, 3),
            ]
        )
    return rows


def summary_headers(comparison: Comparison) -> list[str]:
    ci = f"{comparison.options.confidence:.0%} CI"
    return ["run", comparison.metric, "diff", "rel.", ci, "W/T/L", "r_rb", "ES_E"]


def test_headers(comparison: Comparison, corrected: bool, suffixed: bool = True) -> list[str]:
    suffix = f" (raw / {comparison.options.correction})" if corrected and suffixed else ""
    heads = ["run"] + [SHORT[t] + suffix for t in comparison.test_names]
    if comparison.binary:
        heads.append(f"{comparison.binary}: only base / only run")
    return heads


def test_rows(comparison: Comparison, corrected: bool, name=str) -> list[list[str]]:
    alpha = comparison.options.alpha
    rows = []
    for pair in comparison.pairs:
        row = [name(pair.run)] + [p_cell(pair, t, alpha, corrected) for t in comparison.test_names]
        if comparison.binary:
            row.append(discordant(pair))
        rows.append(row)
    return rows


def legend(comparison: Comparison) -> list[str]:
    corrected = comparison.options.correction != "none" and len(comparison.pairs) > 1
    alpha = comparison.options.alpha
    star = f"* {'adjusted ' if corrected else ''}p < {alpha}"
    lines = [
        f"diff = mean({comparison.metric}) of the run minus the baseline's over {comparison.pairs[0].n if comparison.pairs else 0} paired queries; "
        "rel. = diff / baseline mean; W/T/L = queries the run wins / ties / loses; "
        "r_rb = matched-pairs rank-biserial correlation (Kerby 2014), positive when the run is better; "
        "ES_E = diff / sqrt(V_E), V_E the residual variance of the two-way ANOVA of the compared runs (Sakai 2014)",
        star,
    ]
    return lines + comparison.options.description(comparison.binary, len(comparison.pairs)) + comparison.notes


def as_table(comparison: Comparison, task: str, policy: Sequence[str] = (), all_pairs: AllPairs | None = None) -> str:
    corrected = comparison.options.correction != "none" and len(comparison.pairs) > 1
    parts = [
        header(comparison, task),
        "",
        text_table(summary_headers(comparison), summary_rows(comparison), [False] + [True] * 7),
        "",
        "p-values" + (f" (raw / {comparison.options.correction}-adjusted over {len(comparison.pairs)} comparisons)" if corrected else ""),
        text_table(test_headers(comparison, corrected, suffixed=False), test_rows(comparison, corrected)),
        "",
    ]
    parts += [f"# {visible(line)}" for line in legend(comparison) + list(policy)]
    if all_pairs is not None:
        parts += [""] + allpairs_output.as_text(all_pairs)
    return "\n".join(parts)


def as_markdown(comparison: Comparison, task: str, policy: Sequence[str] = (), manifest: Mapping[str, Any] | None = None,
                all_pairs: AllPairs | None = None) -> str:
    from evalkit.io.manifest import manifest_markdown

    corrected = comparison.options.correction != "none" and len(comparison.pairs) > 1
    headers = [md(h) for h in summary_headers(comparison) + test_headers(comparison, corrected)[1:]]
    rows = []
    tests = test_rows(comparison, corrected, md)
    summary = summary_rows(comparison, md)
    rows.append(summary[0] + [""] * (len(headers) - len(summary[0])))
    for s, t in zip(summary[1:], tests):
        rows.append(s + t[1:])
    parts = [f"**{md(header(comparison, task))}**", "", markdown_table(headers, rows, [False] + [True] * (len(headers) - 1)), ""]
    parts += [f"- {md(line)}" for line in legend(comparison) + list(policy)]
    if all_pairs is not None:
        parts += [""] + allpairs_output.as_markdown(all_pairs, heading="###")
    if manifest:
        parts += ["", manifest_markdown(manifest)]
    return "\n".join(parts)


def as_dict(comparison: Comparison, task: str, policy: Sequence[str] = (), manifest: Mapping[str, Any] | None = None,
            all_pairs: AllPairs | None = None) -> dict:
    options = comparison.options
    return {
        "task": task,
        "metric": comparison.metric,
        "binary_outcome": comparison.binary,
        "baseline": comparison.baseline,
        "queries": comparison.n_queries,
        "options": {
            "zero_method": options.zero_method,
            "permutations": options.permutations,
            "bootstrap_resamples": options.bootstrap,
            "ci_method": options.ci_method,
            "confidence": options.confidence,
            "seed": options.seed,
            "correction": options.correction,
            "alpha": options.alpha,
            "alternative": "two-sided",
        },
        "tests": {name: TEST_NAMES[name] for name in comparison.test_names},
        "comparisons": [pair.as_dict() for pair in comparison.pairs],
        "all_pairs": all_pairs.as_dict() if all_pairs is not None else None,
        "notes": legend(comparison) + list(policy),
        "manifest": dict(manifest or {}),
    }


def as_json(comparison: Comparison, task: str, policy: Sequence[str] = (), manifest: Mapping[str, Any] | None = None,
            all_pairs: AllPairs | None = None) -> str:
    from evalkit.core import jsonout

    return jsonout.dumps(as_dict(comparison, task, policy, manifest, all_pairs), indent=2)


def per_query_tsv(values: PairedValues, binary: PairedValues | None, baseline: str, digits: int = 6) -> str:
    """One row per query: the metric of every run, the binary outcome, and run - baseline."""
    base = values.index(baseline)
    others = [i for i in range(len(values.names)) if i != base]
    heads = ["query_id"] + [f"{n}:{values.metric}" for n in values.names]
    if binary is not None:
        heads += [f"{n}:{binary.metric}" for n in binary.names]
    heads += [f"diff:{values.names[i]}" for i in others]
    lines = ["\t".join(heads)]
    for j, query in enumerate(values.query_ids):
        cells = [query] + [number(float(values.matrix[i, j]), digits) for i in range(len(values.names))]
        if binary is not None:
            cells += [number(float(binary.matrix[i, j]), 0) for i in range(len(binary.names))]
        cells += [signed(float(values.matrix[i, j] - values.matrix[base, j]), digits) for i in others]
        lines.append("\t".join(cells))
    return "\n".join(lines) + "\n"
