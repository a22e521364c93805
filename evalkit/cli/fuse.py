"""``evalkit fuse RUN RUN... --method M --out FILE``: one fused TREC run (and its manifest)."""
from __future__ import annotations

import click

from evalkit.io.transactions import announce

from evalkit.cli.common import (
    ALLOW_PARTIAL_OPTION,
    DEPTH,
    FINITE,
    FORCE_OPTION,
    RUN_FORMAT_OPTION,
    warn,
)


def parse_weights(text: str | None) -> list[float] | None:
    from evalkit.core.errors import UsageError

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

    from evalkit.core.errors import UsageError

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
@click.option("--depth", type=DEPTH, default=None, help="Use only the first N documents of each run.")
@click.option("--optimize-on", "optimize_on", default=None, type=click.Path(dir_okay=False),
              help="Dev gold to choose the weights / parameters on (ranx optimize_fusion); prints the choice.")
@click.option("--metric", "--metrics", "metric", default=None, help="Metric to optimise (default: the gold task's official metric, e.g. mrr@5).")
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
    from evalkit.io.formats.trec_run import format_trec_run
    from evalkit.api.fusion import fuse_runs, plain
    from evalkit.io.manifest import write_sidecar
    from evalkit.io.transactions import atomic_write, check_outputs, sidecar_of

    check_outputs([out_path, sidecar_of(out_path)], force, inputs=[*runs, optimize_on])
    result = fuse_runs(
        *runs, method=method, norm=norm, weights=parse_weights(weights), rrf_k=rrf_k, alpha=alpha, params=parse_params(params), depth=depth,
        optimize_on=optimize_on, metric=metric, step=step, name=tag, run_format=run_format, allow_partial=allow_partial,
    )
    for message in result.warnings:
        warn(message)
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    if result.chosen is not None:
        shown = {k: plain(v) for k, v in result.chosen.items()}
        readable = ", ".join(f"{k} = {v}" for k, v in shown.items() if not isinstance(v, list) or len(v) <= len(runs))
        click.echo(f"chosen on {optimize_on} for {result.manifest['options']['metric']}: {readable or 'trained parameters'}")
        label, value = result.dev_score
        click.echo(f"fused run on {optimize_on}: {label} {value:.4f}")
    fused = result.run
    atomic_write(out_path, format_trec_run(fused, tag=tag or result.method), force=force)
    write_sidecar(out_path, result.manifest)
    announce(f"wrote {out_path} ({len(fused.query_ids)} queries, {fused.n_rows} rows, {result.method}) and {out_path}.manifest.json")
