"""``evalkit.repro``: score an original and a reproduced baseline/advanced pair and measure the reproduction.

>>> r = evalkit.repro("qrels.txt", "bm25.trec", "rm3.trec", "bm25-again.trec", "rm3-again.trec")   # doctest: +SKIP
>>> r.result.measures["MAP"].er, r.as_json()                                                       # doctest: +SKIP

Every run is read and scored as ``evalkit score`` scores it (the task from
the gold or the user, never from a run; the task's missing-query policy);
the measures are :mod:`evalkit.stats.repro`'s. With ``repro_gold`` the
reproduced runs are scored against another collection: a replication.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from evalkit.core.errors import UsageError
from evalkit.io.reading import QrelsLike, RunLike
from evalkit.core.options import ScoringOptions
from evalkit.stats.repro import RBO_DEPTH, RBO_P, RUN_LENGTH, ReproResult, Side

ROLES = ("baseline", "advanced", "repro_baseline", "repro_advanced")


@dataclass(frozen=True, eq=False)
class Reproduction:
    """The measures, the runs' names and mean scores, the notes and the manifest of one reproduction study."""

    result: ReproResult
    names: dict[str, str]  # role -> run name
    means: dict[str, dict[str, float]]  # role -> metric -> mean
    notes: list[str]
    manifest: dict[str, Any] = field(repr=False)

    def as_dict(self, per_topic: bool = True) -> dict[str, Any]:
        from evalkit.stats.repro import _finite_map

        return {**self.result.as_dict(per_topic), "runs": self.names, "means": {r: _finite_map(m) for r, m in self.means.items()},
                "notes": self.notes, "manifest": self.manifest}

    def as_json(self, per_topic: bool = True) -> str:
        from evalkit.core import jsonout

        return jsonout.dumps(self.as_dict(per_topic), indent=2) + "\n"

    def as_markdown(self) -> str:
        from evalkit.io.manifest import manifest_markdown
        from evalkit.core.safetext import markdown_text

        r = self.result
        title = "Reproducibility (same collection)" if r.kind == "reproducibility" else "Replicability (another collection)"
        lines = [f"# {title}", ""]
        lines += [f"- {role.replace('_', ' ')}: {markdown_text(name)}" for role, name in self.names.items()]
        lines.append("")
        test = "paired" if r.kind == "reproducibility" else "unpaired"
        head = "| measure | ER | DRI | RMSE base | RMSE adv | p base | p adv |" if r.kind == "reproducibility" else \
            "| measure | ER | DRI | p base | p adv |"
        lines += [head, "|" + "---|" * (head.count("|") - 1)]
        for name, m in r.measures.items():
            cells = [markdown_text(name), _f(m.er), _f(m.dri)]
            if m.rmse is not None:
                cells += [_f(m.rmse["baseline"]), _f(m.rmse["advanced"])]
            cells += [_p(m.p_value["baseline"]), _p(m.p_value["advanced"])]
            lines.append("| " + " | ".join(cells) + " |")
        lines += ["", f"p: two-sided {test} t-test of the original against the reproduced per-topic scores."]
        if r.ktu and r.rbo:
            lines += ["", "| run | KTU | RBO | topics | only original | only reproduced | KTU undefined |", "|---|---|---|---|---|---|---|"]
            for side in ("baseline", "advanced"):
                k, b = r.ktu[side], r.rbo[side]
                lines.append(f"| {side} | {_f(k.mean)} | {_f(b.mean)} | {len(k.per_topic)} | {len(k.only_original)} | "
                             f"{len(k.only_reproduced)} | {len(k.undefined)} |")
            lines += ["", f"KTU over the top {r.options['depth']} documents; RBO p = {r.options['rbo_p']:g}, depth {r.options['rbo_depth']}."]
        if self.notes:
            lines += ["", *[f"- {markdown_text(n)}" for n in self.notes]]
        return "\n".join(lines + ["", manifest_markdown(self.manifest), ""])


def _f(value: float | None) -> str:
    import math

    return "-" if value is None or math.isnan(value) else f"{value:.4f}"


def _p(value: float | None) -> str:
    import math

    return "-" if value is None or math.isnan(value) else (f"{value:.3g}" if value < 0.001 else f"{value:.4f}")


def side_of(evaluation, run, metrics: Sequence[str]) -> Side:
    """A :class:`Side` from an :class:`~evalkit.metrics.evaluation.Evaluation` and its run (rankings by the one ranking rule)."""
    ids = [str(q) for q in evaluation.query_ids.tolist()]
    scores = {m: dict(zip(ids, evaluation.per_query[m].astype(float).tolist())) for m in metrics}
    return Side(run.to_lists(), scores)


def repro(
    gold: QrelsLike,
    baseline: RunLike,
    advanced: RunLike,
    repro_baseline: RunLike,
    repro_advanced: RunLike,
    repro_gold: QrelsLike | None = None,
    *,
    metrics: str | Sequence[str] | None = None,
    scoring: ScoringOptions | None = None,
    depth: int = RUN_LENGTH,
    rbo_p: float = RBO_P,
    rbo_depth: int = RBO_DEPTH,
) -> Reproduction:
    """Score the four runs and measure the reproduction (``repro_gold``: a replication on another collection).

    ``metrics``: the measures (besides the task's official score, always
    included), e.g. ``"map ndcg p@10"``; every metric with per-topic values is measured.
    """
    from evalkit.io.reading import as_qrels, as_run, input_entry
    from evalkit.scoring.runset import resolve_task
    from evalkit.io.manifest import build_manifest, input_entry as file_entry
    from evalkit.scoring.runset import score_one, unique_names
    from evalkit.stats.repro import reproduction

    chosen = scoring or ScoringOptions()
    if metrics is not None:
        from dataclasses import replace

        chosen = replace(chosen, metrics=tuple(metrics.split()) if isinstance(metrics, str) else tuple(metrics))
    golds = {"original": as_qrels(gold, format=chosen.gold_format)}
    if repro_gold is not None:
        golds["reproduced"] = as_qrels(repro_gold, format=chosen.gold_format)
    tasks = {which: resolve_task(chosen.task, q) for which, q in golds.items()}
    given = dict(zip(ROLES, (baseline, advanced, repro_baseline, repro_advanced)))
    paths = [str(r) if isinstance(r, (str, bytes)) or hasattr(r, "__fspath__") else role for role, r in given.items()]
    names = dict(zip(ROLES, unique_names(paths)))
    scored = {}
    for role, item in given.items():
        which = "reproduced" if role.startswith("repro_") and repro_gold is not None else "original"
        qrels, (task, note) = golds[which], tasks[which]
        run = as_run(item, name=names[role], format=chosen.run_format, column=chosen.column, against=qrels)
        scored[role] = score_one(task, qrels, run, names[role], chosen.metrics, chosen, task_note=note)
    labels = _measured(scored)
    sides = {role: side_of(s.score.evaluation, s.run, labels) for role, s in scored.items()}
    result = reproduction({"baseline": sides["baseline"], "advanced": sides["advanced"]},
                          {"baseline": sides["repro_baseline"], "advanced": sides["repro_advanced"]},
                          labels, same_collection=repro_gold is None, depth=depth, rbo_p=rbo_p, rbo_depth=rbo_depth)
    notes = [n for s in scored.values() for n in s.notes]
    for side, figures in ((result.ktu or {}).items()):
        if figures.only_original or figures.only_reproduced:
            notes.append(f"{side}: KTU and RBO over the {len(figures.per_topic)} topics both rankings hold "
                         f"({len(figures.only_original)} only in the original, {len(figures.only_reproduced)} only in the reproduction)")
        if figures.undefined:
            notes.append(f"{side}: {len(figures.undefined)} topics have no KTU (fewer than two documents on a side); left out of its mean")
    entries = [file_entry(role, s.run.source) if s.run.source is not None else input_entry(role, s.run) for role, s in scored.items()]
    entries += [file_entry(f"gold:{w}", q.source) if q.source is not None else input_entry(f"gold:{w}", q) for w, q in golds.items()]
    task_names = sorted({t.name for t, _ in tasks.values()})
    manifest = build_manifest(
        task_names[0] if len(task_names) == 1 else " / ".join(task_names), entries,
        {"kind": result.kind, "metrics": labels, "missing": scored["baseline"].score.missing, **result.options},
        command="repro",
    )
    means = {role: {m: s.score.evaluation.mean(m) for m in labels} for role, s in scored.items()}
    return Reproduction(result, names, means, notes, manifest)


def _measured(scored) -> list[str]:
    """The metric labels every run has per-topic values of (text and summed counts left out), official first."""
    first = scored["baseline"].score.evaluation
    labels = [m.label for m in first.metrics if not m.text and m.label in first.per_query and not m.label.startswith("Num")]
    for s in scored.values():
        missing = [m for m in labels if m not in s.score.evaluation.per_query]
        if missing:
            raise UsageError(f"{s.name}: no per-topic {', '.join(missing)} (score every run with the same task and metrics)")
    if not labels:
        raise UsageError("no metric with per-topic values to measure; name some with -m, e.g. -m 'map ndcg'")
    return labels
