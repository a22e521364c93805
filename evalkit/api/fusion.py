"""Fusing runs as the command line does it, as a Python API: ``evalkit.fusion.fuse_runs(*runs, method=..., optimize_on=...)``.

Everything ``evalkit fuse`` does besides parsing its options and writing the
file: the method's parameters checked before any file is read, the runs read
(any format), the parameters optionally chosen on a dev gold (ranx
``optimize_fusion``), the fusion, and the manifest. :func:`evalkit.fuse` is
this function's run.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from evalkit.data import Run
from evalkit.core.errors import UsageError
from evalkit.fusion.alpha import DEFAULT_ALPHA
from evalkit.fusion.combine import fuse
from evalkit.fusion.methods import check_norm, get_method, resolve_params
from evalkit.fusion.queries import query_union

if TYPE_CHECKING:  # pragma: no cover
    from evalkit.io.reading import QrelsLike, RunLike


@dataclass(frozen=True, eq=False)
class FuseResult:
    """The fused run, the parameters it was fused with, what was chosen on a dev gold, notes and the manifest."""

    run: Run
    method: str
    parameters: dict[str, Any]
    chosen: dict[str, Any] | None = None  # parameters chosen on the dev gold (optimize_on)
    dev_score: tuple[str, float] | None = None  # the fused run's score on the dev gold
    warnings: list[str] = field(default_factory=list)  # the readers' warnings about the runs
    notes: list[str] = field(default_factory=list)  # how the runs were read (list submissions fused through their ranks)
    manifest: dict[str, Any] = field(default_factory=dict, repr=False)


def plain(value: Any) -> Any:
    """Numbers and tuples of numbers from ranx (numpy types) as plain Python values."""
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    try:
        return float(value)
    except (TypeError, ValueError):
        return str(value)


def fuse_runs(
    *runs: "RunLike",
    method: str = "rrf",
    norm: str | None = "min-max",
    weights: Sequence[float] | None = None,
    rrf_k: float | None = None,
    alpha: float | None = None,
    params: Mapping[str, Any] | None = None,
    depth: int | None = None,
    optimize_on: "QrelsLike | None" = None,
    metric: str | None = None,
    step: float = 0.1,
    name: str | None = None,
    run_format: str = "auto",
    allow_partial: bool = False,
) -> FuseResult:
    """Fuse ``runs`` (paths, Runs, DataFrames or dicts) with ``method`` under ``norm``.

    ``weights`` / ``rrf_k`` / ``alpha`` / ``params`` are the method's parameters
    (``evalkit fusion`` lists what each takes); with ``optimize_on`` (a dev gold)
    they are chosen there for ``metric`` (default: the gold task's official
    metric) on a grid of ``step``. Ties in the fused scores follow the ranking
    rule, whatever the order of the runs.
    """
    from evalkit.io.reading import as_qrels, as_run, input_entry
    from evalkit.scoring.runset import run_names as _run_names
    from evalkit.io.manifest import build_manifest

    chosen = get_method(method)
    norm = check_norm(norm)
    extra = dict(params or {})
    if alpha is not None:
        if chosen.name != "alpha":
            raise UsageError("--alpha applies to --method alpha")
        extra["alpha"] = alpha
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth <= 0):
        raise UsageError(f"--depth must be a positive whole number (got {depth!r})")
    if len(runs) < 2:
        raise UsageError("fusion needs at least two runs")
    if optimize_on is not None:  # every refusal before any run is read
        from evalkit.fusion.ranx_backend import check_optimizable

        check_optimizable(chosen.name)
        if not 0 < step <= 1:
            raise UsageError(f"--step must lie in (0, 1] (got {step})")
    elif chosen.supervised:
        raise UsageError(f"fusion method {chosen.name} is trained on a gold file: give --optimize-on GOLD")
    elif chosen.ranx_name is not None:
        resolve_params(chosen, len(runs), weights, rrf_k, extra)
    if metric is not None and optimize_on is None:
        raise UsageError("--metric applies to --optimize-on")
    loaded = [as_run(r, name=n, format=run_format) for r, n in zip(runs, _run_names(runs, None))]
    query_union(loaded, allow_partial)
    warnings = [message for run in loaded for message in run.warnings]
    notes = [f"{run.source.path if run.source else run.name} has no scores (a list submission): fused through its ranks, "
              "score = depth + 1 - rank" for run in loaded if not run.is_scored]
    inputs = [input_entry("run", run) for run in loaded]
    found, dev_score = None, None
    if optimize_on is not None:
        from evalkit.fusion.ranx_backend import optimize, ranx_metric
        from evalkit.tasks import detect_task

        qrels = as_qrels(optimize_on)
        task = detect_task(qrels.source.format if qrels.source else "")
        metric = metric or task.official_metrics()[0].label
        ranx_metric(metric)
        inputs.append(input_entry("optimize-on", qrels))
        found = optimize(loaded, qrels, chosen.name, norm, metric, step=step, depth=depth, allow_partial=allow_partial)
        extra.update(found)
        if "weights" in found:
            weights = None  # chosen on the gold
    fused = fuse(loaded, chosen.name, norm, weights=weights, rrf_k=rrf_k, params=extra, depth=depth, allow_partial=allow_partial,
                 name=name or chosen.name)
    if optimize_on is not None:
        from evalkit.metrics import parse_metric

        assert metric is not None  # set above (the task's official metric when none was given)
        label = parse_metric(metric).label
        score = task.score(fused, qrels, [metric], allow_partial=True)
        dev_score = (label, float(score.values.get(label, score.official_value)))
    if chosen.name == "alpha":
        effective = {"alpha": extra.get("alpha", DEFAULT_ALPHA)}
    elif chosen.supervised:
        effective = {k: "trained" for k in extra}
    else:
        effective = resolve_params(chosen, len(loaded), weights, rrf_k, extra)
    options = {
        "method": chosen.name, "norm": norm if chosen.ranx_name else None,
        "params": {k: plain(v) if k != "k" else v for k, v in effective.items()}, "depth": depth,
        "optimize_on": (qrels.source.path if qrels.source else "in-memory") if optimize_on is not None else None,
        "metric": metric, "allow_partial": allow_partial,
    }
    manifest = build_manifest(None, inputs, options, command="fuse")
    return FuseResult(run=fused, method=chosen.name, parameters=effective, chosen=found, dev_score=dev_score, warnings=warnings,
                      notes=notes, manifest=manifest)
