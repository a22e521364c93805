"""Options and helpers shared by several subcommands."""
from __future__ import annotations

import functools

import click

from evalkit.core.options import MAX_DEPTH, MAX_SEED, ScoringOptions

MISSING_OPTION = click.option(
    "--missing",
    type=click.Choice(["zero", "skip", "error"]),
    default=None,
    help="Gold queries absent from the run: score 0 (default), leave out, or refuse.",
)
TASK_OPTION = click.option("--task", default="auto", show_default=True, help="Task name (see `evalkit tasks`) or auto (from the gold format).")
ALLOW_PARTIAL_OPTION = click.option(
    "--allow-partial", is_flag=True, help="Score even when the run misses more than 10% of the gold queries (wrong split?)."
)
FORCE_OPTION = click.option("--force", is_flag=True, help="Overwrite existing output files.")
RUN_FORMAT_OPTION = click.option("--format", "run_format", default="auto", show_default=True, help="Run format (see `evalkit formats`).")
GOLD_FORMAT_OPTION = click.option("--gold-format", default="auto", show_default=True, help="Gold format (see `evalkit formats`).")
COLUMN_OPTION = click.option("--column", default=None, help="Name of the list column in list submissions (default: preds, or the one column holding lists).")


def task_depths() -> str:
    """Each task's ids per query in its official submission, from the task registry (``name N, ...``), for help texts."""
    from evalkit.tasks import tasks

    return ", ".join(f"{task.name} {task.submission_depth}" for task in tasks() if task.submission_depth)


def warn(message: str) -> None:
    """One warning line; control characters of file names and ids shown escaped; cut and counted past 1,000 characters."""
    from evalkit.core.errors import bounded
    from evalkit.core.safetext import visible

    click.echo(bounded(f"warning: {visible(message)}"), err=True)


class WholeNumber(click.ParamType):
    """An integer option under the rule the Python API applies (:func:`evalkit.core.options.whole_number`): one message."""

    name = "integer"

    def __init__(self, what: str, low: int, high: int):
        self.what, self.low, self.high = what, low, high

    def convert(self, value, param, ctx):
        from evalkit.core.errors import UsageError, shown
        from evalkit.core.options import whole_number

        import re

        text = str(value).strip()
        if not isinstance(value, int) and not re.fullmatch(r"[+-]?[0-9]+", text):  # not int(): it takes 1_0 and Arabic digits
            self.fail(f"{shown(text)} is not a whole number", param, ctx)
        if not isinstance(value, int) and len(text.lstrip("+-").lstrip("0")) > 30:  # int() refuses 4,300 digits
            self.fail(f"{self.what} must be from {self.low:,} to {self.high:,} (got {shown(text)})", param, ctx)
        number = value if isinstance(value, int) else int(text)
        try:
            return whole_number(number, self.what, self.low, self.high)
        except UsageError as exc:
            self.fail(str(exc), param, ctx)


DEPTH = WholeNumber("depth", 1, MAX_DEPTH)  # every --depth: beyond any ranking is a typing error, not a traceback
SEED = WholeNumber("seed", 0, MAX_SEED)  # every --seed: the range of a TOML seed and of the Python API
DEPTH_OPTION = click.option(
    "--depth",
    type=DEPTH,
    default=None,
    help="Only the top N documents of each ranking count (after the ranking rule), as trec_eval -M N.",
)
class FiniteFloat(click.ParamType):
    """A float option that must be finite (and at least ``minimum``): NaN makes every comparison false, infinity every bound void."""

    name = "number"

    def __init__(self, minimum: float | None = None) -> None:
        self.minimum = minimum

    def convert(self, value, param, ctx):
        from evalkit.core.input_rules import ValueProblem, number, number_text

        try:  # the one number rule of every input: ASCII decimals, finite (float() would take 1_0 and Arabic digits)
            result = number_text(value, "") if isinstance(value, str) else number(value, "")
        except ValueProblem as problem:
            self.fail(str(problem).strip(), param, ctx)
        if self.minimum is not None and result < self.minimum:
            self.fail(f"{value!r} is below {self.minimum:g}", param, ctx)
        return result


FINITE = FiniteFloat()
RELEVANCE_LEVEL_OPTION = click.option(
    "--relevance-level", type=FINITE, default=1, show_default=True, help="Minimum grade that counts as relevant."
)
METRICS_OPTION = click.option("--metrics", "--metric", "-m", "metrics", multiple=True,
                              help='Metrics besides the official one, e.g. "mrr@10 recall@5 ndcg@10" (--metric works too).')
# the metrics of a command whose own --metric names one metric (report): --metrics only
METRICS_ONLY_OPTION = click.option("--metrics", "-m", "metrics", multiple=True,
                                   help='Metrics besides the official one, e.g. "mrr@10 recall@5 ndcg@10".')
JUDGED_ONLY_OPTION = click.option("--judged-only", "-J", "judged_only", is_flag=True,
                                  help="Score the condensed lists: unjudged documents removed before any metric (trec_eval -J).")
NUM_DOCS_OPTION = click.option("--num-docs", "-N", "num_docs", type=click.IntRange(0, 2**62), default=0,
                               help="Documents in the collection, for utility's fourth coefficient (trec_eval -N).")
ZSCORES_OPTION = click.option("--zscores", "-Z", "zscores", type=click.Path(dir_okay=False), default=None,
                              help="Standardise: per-query z-scores against a file of 'query measure mean stddev' lines (trec_eval -Z).")
JUDGMENT_GROUPS_OPTION = click.option(
    "--rel-format", "-R", "judgment_groups", type=click.Choice(["qrels", "qrels_jg"]), default="qrels", show_default=True,
    callback=lambda ctx, param, value: value == "qrels_jg",
    help="qrels_jg: the gold's second column names a judgment group; each query's value is averaged over its groups (trec_eval -R).",
)
# the command-line names of ScoringOptions' fields, in the order --help shows them
_SCORING_OPTIONS = {
    "task": TASK_OPTION, "metrics": METRICS_OPTION, "missing": MISSING_OPTION, "relevance_level": RELEVANCE_LEVEL_OPTION,
    "depth": DEPTH_OPTION, "run_format": RUN_FORMAT_OPTION, "gold_format": GOLD_FORMAT_OPTION, "column": COLUMN_OPTION,
    "allow_partial": ALLOW_PARTIAL_OPTION, "judged_only": JUDGED_ONLY_OPTION, "num_docs": NUM_DOCS_OPTION,
    "zscores": ZSCORES_OPTION, "judgment_groups": JUDGMENT_GROUPS_OPTION,
}


def scoring_options(*, without: tuple[str, ...] = (), own_metric: bool = False):
    """The one set of scoring options (:class:`~evalkit.core.options.ScoringOptions`), handed to the command as ``scoring``.

    ``without`` leaves out fields a command takes otherwise (``metrics`` where
    ``--metric`` names one metric; ``run_format`` where every file is read in
    its own format). ``--metrics`` is also spelled ``--metric``, unless the
    command has a ``--metric`` of its own (``own_metric``).
    """
    chosen = {name: option for name, option in _SCORING_OPTIONS.items() if name not in without}
    if own_metric and "metrics" in chosen:
        chosen["metrics"] = METRICS_ONLY_OPTION

    def decorate(command):
        @functools.wraps(command)
        def with_scoring(*args, **kwargs):
            given = {name: kwargs.pop(name) for name in chosen}
            given["metrics"] = tuple(given.get("metrics") or ()) or None
            return command(*args, scoring=ScoringOptions(**given), **kwargs)

        for option in reversed(chosen.values()):
            with_scoring = option(with_scoring)
        return with_scoring

    return decorate


SEED_OPTION = click.option("--seed", type=SEED, default=42, show_default=True,
                           help="Seed of the randomization test and the bootstrap.")
ALPHA_OPTION = click.option("--alpha", type=FINITE, default=0.05, show_default=True, help="Significance level.")
CORRECTION_OPTION = click.option(
    "--correction",
    type=click.Choice(["holm", "bonferroni", "bh", "by", "none"]),
    default="holm",
    show_default=True,
    help="Multiple-comparison correction over the comparisons: Holm, Bonferroni (family-wise), Benjamini-Hochberg, "
         "Benjamini-Yekutieli (false discovery rate), as R's p.adjust.",
)
PERMUTATIONS_OPTION = click.option("--permutations", type=int, default=10_000, show_default=True,
                                   help="Random draws of the randomization test and of the randomised Tukey HSD test.")
BOOTSTRAP_OPTION = click.option("--bootstrap", "bootstrap_resamples", type=int, default=10_000, show_default=True,
                                help="Bootstrap resamples of the queries (CIs, bootstrap rank intervals).")
BINARY_OPTION = click.option("--binary", default="success@1", show_default=True,
                             help="Binary per-query outcome for McNemar (success@k: a relevant document in the top k).")


def all_pairs_option(default: str):
    """``--all-pairs PROCEDURE``: compare every pair of runs (rank intervals, tied with #1, letters); ``none`` skips it."""
    from evalkit.stats import ALL_PAIRS_PROCEDURES

    extra = ["auto"] if default == "auto" else []
    return click.option(
        "--all-pairs", "all_pairs", type=click.Choice([*ALL_PAIRS_PROCEDURES, "none", *extra]), default=default, show_default=True,
        help="Compare every pair of runs: paired Tukey HSD, Sakai's randomised Tukey HSD, or a paired test on every pair "
             "corrected by --correction; gives each run a rank interval, the runs tied with #1 and letters"
             + ("; auto: randomised-tukey with three or more runs" if extra else "") + ".",
    )
ZERO_METHOD_OPTION = click.option(
    "--zero-method",
    type=click.Choice(["wilcox", "pratt", "zsplit"]),
    default="wilcox",
    show_default=True,
    help="Wilcoxon: how zero differences (tied queries) are treated (scipy.stats.wilcoxon).",
)


def echo_result(text: str) -> None:
    """A result on stdout: exactly as written when piped to a file; on a terminal, control characters shown escaped."""
    import sys

    if sys.stdout.isatty():
        from evalkit.core.safetext import visible

        text = visible(text, keep="\n\t")
    click.echo(text)


def write_or_echo(text: str, out_path: str | None, force: bool) -> None:
    """A command's one output: to ``--out`` (atomically; "wrote" once it is committed), or on stdout."""
    if out_path:
        from evalkit.io.transactions import announce, atomic_write

        atomic_write(out_path, text, force=force)
        announce(f"wrote {out_path}")
    else:
        click.echo(text.rstrip("\n"))


def print_notes(notes) -> None:
    for note in notes:
        warn(note)
