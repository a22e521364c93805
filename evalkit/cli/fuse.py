"""``evalkit fuse RUN RUN... --method M --out FILE``: one fused TREC run (and its manifest)."""
from __future__ import annotations

import click

from evalkit.cli.common import (
    ALLOW_PARTIAL_OPTION,
    FINITE,
    FORCE_OPTION,
    RUN_FORMAT_OPTION,
    warn,
)


def parse_weights(text: str | None) -> list[float] | None:
    from evalkit.errors import UsageError

    if text is None:
        return None
    import math

    try:
        weights = [float(w) for w in text.replace(",", " ").split()]
    except ValueError:
        raise UsageError(f"--weights {text!r}: write numbers separated by commas, e.g. 0.3,0.7") from None
    if not all(math.isfinite(w) for w in weights):
        raise UsageError(f"--weights {text!r}: every weight must be a finite number")
    return weights


def parse_params(pairs: tuple[str, ...]) -> dict[str, float]:
    import math

    from evalkit.errors import UsageError

    params = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        try:
            params[key.strip()] = float(value)
        except ValueError:
            sep = ""
        if sep and not math.isfinite(params[key.strip()]):
            raise UsageError(f"--param {pair!r}: the value must be a finite number")
        if not sep or not key.strip():
            raise UsageError(f"--param {pair!r}: write name=number, e.g. phi=0.8")
    return params


def _plain(value):
    """Numbers and tuples of numbers from ranx (numpy types) as plain Python values."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    try:
        return float(value)
    except (TypeError, ValueError):
        return str(value)


@click.command()
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False), help="The fused TREC run.")
@click.option("--method", default="rrf", show_default=True,
              help="rrf, combsum, combmnz, combmax, combmin, combmed, combanz, combgmnz, wsum, wmnz, mixed, isr, log_isr, logn_isr, "
                   "bordafuse, w_bordafuse, condorcet, w_condorcet, rbc, bayesfuse, mapfuse, posfuse, probfuse, segfuse, slidefuse, alpha.")
@click.option("--norm", default="min-max", show_default=True,
              help="Score normalisation before fusing: min-max, min-max-inverted, max, sum, zmuv, rank, borda, none.")
@click.option("--weights", default=None, help="One weight per run for weighted methods, e.g. 0.3,0.7 (default: equal).")
@click.option("--rrf-k", "rrf_k", type=FINITE, default=None, help="RRF constant k in 1/(k + rank) (default 60).")
@click.option("--alpha", type=FINITE, default=None, help="alpha fusion: weight of the first (cross-encoder) run; the second is the LLM ranking (default 0.4).")
@click.option("--param", "params", multiple=True, help="Other method parameters as name=value (gamma, sigma, phi); repeatable.")
@click.option("--depth", type=int, default=None, help="Use only the first N documents of each run.")
@click.option("--optimize-on", "optimize_on", default=None, type=click.Path(dir_okay=False),
              help="Dev gold to choose the weights / parameters on (ranx optimize_fusion); prints the choice.")
@click.option("--metric", default=None, help="Metric to optimise (default: the gold task's official metric, e.g. mrr@5).")
@click.option("--step", type=FINITE, default=0.1, show_default=True, help="Grid step of the weight search.")
@click.option("--tag", default=None, help="Run tag written in the last TREC column (default: the method).")
@RUN_FORMAT_OPTION
@ALLOW_PARTIAL_OPTION
@FORCE_OPTION
def fuse(runs, out_path, method, norm, weights, rrf_k, alpha, params, depth, optimize_on, metric, step, tag, run_format, allow_partial, force):
    """Fuse RUNS (any formats evalkit reads) into one TREC run.

    Methods and normalisations are ranx's, by name, plus RRF with k
    configurable and alpha fusion (alpha * CE_norm + (1 - alpha) * LLM_norm,
    LLM_norm = 1 - (rank - 1)/(N - 1)). List submissions have no scores:
    they are fused through their ranks (score = depth + 1 - rank).
    """
    from evalkit import fusion
    from evalkit.errors import UsageError
    from evalkit.formats import read_qrels, read_run
    from evalkit.formats.trec_run import format_trec_run
    from evalkit.manifest import build_manifest, input_entry, write_sidecar
    from evalkit.metrics import parse_metric
    from evalkit.textio import atomic_write, check_outputs, sidecar_of

    chosen = fusion.get_method(method)
    norm = fusion.check_norm(norm)
    the_weights = parse_weights(weights)
    extra = parse_params(params)
    if alpha is not None:
        if chosen.name != "alpha":
            raise UsageError("--alpha applies to --method alpha")
        extra["alpha"] = alpha
    if depth is not None and depth <= 0:
        raise UsageError(f"--depth must be positive (got {depth})")
    if len(runs) < 2:
        raise UsageError("fusion needs at least two runs")
    # fail before reading anything
    if optimize_on:
        fusion.check_optimizable(chosen.name)
    elif chosen.supervised:
        raise UsageError(f"fusion method {chosen.name} is trained on a gold file: give --optimize-on GOLD")
    elif chosen.ranx_name is not None:
        fusion.resolve_params(chosen, len(runs), the_weights, rrf_k, extra)
    if metric is not None and not optimize_on:
        raise UsageError("--metric applies to --optimize-on")
    if optimize_on:
        from evalkit.tasks import detect_task

        qrels = read_qrels(optimize_on)
        task = detect_task(qrels.source.format)
        metric = metric or task.official_metrics()[0].label
        fusion.ranx_metric(metric)
        if not 0 < step <= 1:
            raise UsageError(f"--step must lie in (0, 1] (got {step})")
    check_outputs([out_path, sidecar_of(out_path)], force, inputs=[*runs, optimize_on])
    loaded = [read_run(path, run_format) for path in runs]
    fusion.query_union(loaded, allow_partial)
    for run in loaded:
        for message in run.warnings:
            warn(message)
        if not run.is_scored:
            click.echo(f"note: {run.source.path} has no scores (a list submission): fused through its ranks, score = depth + 1 - rank", err=True)
    inputs = [input_entry("run", run.source) for run in loaded]
    if optimize_on:
        inputs.append(input_entry("optimize-on", qrels.source))
        best = fusion.optimize(loaded, qrels, chosen.name, norm, metric, step=step, depth=depth, allow_partial=allow_partial)
        extra.update(best)
        shown = {k: _plain(v) for k, v in best.items()}
        readable = ", ".join(f"{k} = {v}" for k, v in shown.items() if not isinstance(v, list) or len(v) <= len(loaded))
        click.echo(f"chosen on {optimize_on} for {metric}: {readable or 'trained parameters'}")
    if "weights" in extra:
        the_weights = None  # chosen on the gold
    fused = fusion.fuse(
        loaded, chosen.name, norm, weights=the_weights, rrf_k=rrf_k, params=extra, depth=depth, allow_partial=allow_partial, name=tag or chosen.name
    )
    if optimize_on:
        label = parse_metric(metric).label
        score = task.score(fused, qrels, [metric], allow_partial=True)
        click.echo(f"fused run on {optimize_on}: {label} {score.values.get(label, score.official_value):.4f}")
    text = format_trec_run(fused, tag=tag or chosen.name)
    if chosen.name == "alpha":
        effective = {"alpha": extra.get("alpha", fusion.DEFAULT_ALPHA)}
    elif chosen.supervised:
        effective = {k: "trained" for k in extra}
    else:
        effective = fusion.resolve_params(chosen, len(loaded), the_weights, rrf_k, extra)
    options = {
        "method": chosen.name,
        "norm": norm if chosen.ranx_name else None,
        "params": {k: _plain(v) if k != "k" else v for k, v in effective.items()},
        "depth": depth,
        "optimize_on": optimize_on,
        "metric": metric,
        "allow_partial": allow_partial,
    }
    atomic_write(out_path, text, force=force)
    write_sidecar(out_path, build_manifest(None, inputs, options, command="fuse"))
    click.echo(f"wrote {out_path} ({len(fused.query_ids)} queries, {fused.n_rows} rows, {chosen.name}) and {out_path}.manifest.json", err=True)

