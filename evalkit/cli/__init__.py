"""The ``evalkit`` command line.

Subcommands live in their own modules and are imported only when invoked, so
``evalkit --help`` never loads numpy-heavy code, ranx, torch or transformers.
Any :class:`~evalkit.core.errors.EvalkitError` becomes one line on stderr and exit
code 2. Every command runs inside one output transaction
(:func:`evalkit.io.transactions.transaction`): its checked outputs are written
together when it succeeds and not at all when it fails.
"""
from __future__ import annotations

import errno
import importlib
import os
import sys

# A command is a short process: numpy's huge pages for arrays of 4 MB and more cost it a compaction stall on the
# first touch of each 2 MB page where memory is fragmented (0.1-0.3 s of system time scoring a 177 MB run on this
# project's machines); small pages are predictable. Read by numpy at import: set before anything imports it.
os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")
# Scoring does no linear algebra: OpenBLAS's worker threads, started when numpy loads, only take a core from the command
# (10% of numpy's import on this project's 2-core machines). Commands that run models keep the default.
MODEL_COMMANDS = ("run", "train", "demo", "competition")
# Commands that only read inputs and write outputs: once done, the process ends without the interpreter freeing every
# object one by one (a 10,000-query score holds half a million ids; 9% of its time), and while they run the allocator
# keeps what they free for their next allocations (kernels.keep_freed_memory). Commands that may leave work to exit
# handlers (Ray, model libraries, subprocesses) end as Python ends, under the allocator's defaults.
FAST_EXIT_COMMANDS = ("score", "compare", "validate", "submit", "fuse", "leaderboard", "check")


def _command(argv: list[str]) -> str | None:
    """The subcommand named in ``argv`` (the first argument that is not a group option or its value)."""
    args = iter(argv)
    for arg in args:
        if arg == "--max-input-size":
            next(args, None)
        elif not arg.startswith("-"):
            return arg
    return None


# Commands whose arguments name the input files they read first: started as a command (not imported by a test or a
# notebook), those files are read and hashed on a second thread while the command imports what it needs.
READ_AHEAD_COMMANDS = ("score", "compare", "report", "validate", "submit", "fuse")
# Which of those files is the gold the others are scored on: the runs are read against it ahead (evalkit.io.prejudged).
GOLD_ARGUMENT = {"score": 1, "compare": 0, "report": 0}


# The outputs of `evalkit score` and `compare` that show no manifest: a command line that asks for nothing else (no
# --out, no --per-query) leaves its large inputs' sha256 untaken (0.12 s of a core for a 177 MB run); anything else, or
# anything this reading of the arguments is unsure of, has them hashed ahead as before. Only a speed: a manifest waits.
NO_MANIFEST_OUTPUTS = {"score": ("table", "tsv", "trec_eval"), "compare": ("table",)}


def _shows_manifest(command: str, args: list[str]) -> bool:
    """Whether ``command`` with ``args`` may show or write a manifest (``True`` whenever unsure)."""
    if command not in NO_MANIFEST_OUTPUTS:
        return True
    for position, arg in enumerate(args):
        if arg in ("-o", "--output"):
            value = args[position + 1] if position + 1 < len(args) else ""
        elif arg.startswith("--output="):
            value = arg[len("--output="):]
        elif arg.startswith("-o"):
            value = arg[2:]
        elif arg.startswith(("--out", "--per-query")) or arg == "--":
            return True  # --out, --per-query, or files after "--" (one may look like an option)
        else:
            continue
        if value not in NO_MANIFEST_OUTPUTS[command]:
            return True
    return False


def _read_ahead(argv: list[str]) -> None:
    command = _command(argv)
    if command not in READ_AHEAD_COMMANDS or "--max-input-size" in argv:
        return
    from evalkit.io import readahead
    from evalkit.core.errors import EvalkitError
    from evalkit.io.textio import max_input_bytes

    try:
        limit = max_input_bytes()
    except EvalkitError:
        return  # a bad EVALKIT_MAX_INPUT_SIZE: the command says so
    args = argv[argv.index(command) + 1:]
    paths, gold = [arg for arg in args if not arg.startswith("-")], GOLD_ARGUMENT.get(command)
    given = _gold_option(args)
    if given is not None:  # runs positional, the gold in --gold (evalkit.cli.convention): the gold read first
        paths, gold = [given, *(path for path in paths if path != given)], 0
    readahead.start(paths, limit, gold=gold, hash_large=_shows_manifest(command, args))


def _gold_option(args: list[str]) -> str | None:
    """The value of ``--gold``/``-g`` in a command's arguments, if given."""
    for position, arg in enumerate(args):
        if arg in ("-g", "--gold") and position + 1 < len(args):
            return args[position + 1]
        if arg.startswith("--gold="):
            return arg[len("--gold="):]
    return None


if _command(sys.argv[1:]) not in MODEL_COMMANDS:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
if sys.argv and os.path.basename(sys.argv[0]) in ("evalkit", "__main__.py"):
    if _command(sys.argv[1:]) in FAST_EXIT_COMMANDS:
        from evalkit.native.kernels import keep_freed_memory

        keep_freed_memory()
    _read_ahead(sys.argv[1:])

import click  # noqa: E402

from evalkit._version import __version__  # noqa: E402

# name -> (module, attribute, help): every subcommand, imported only when invoked
COMMANDS = {
    "score": ("evalkit.cli.score", "score", "Score a run against a gold file (official score first)."),
    "tasks": ("evalkit.cli.info", "tasks", "List tasks and their official score definitions."),
    "profiles": ("evalkit.cli.info", "profiles", "List evaluation profiles of standard benchmarks, with their sources."),
    "metrics": ("evalkit.cli.info", "metrics", "List metrics, their aliases and definitions."),
    "formats": ("evalkit.cli.info", "formats_command", "List the file formats evalkit reads."),
    "compare": ("evalkit.cli.compare", "compare", "Paired significance tests of runs against a baseline."),
    "report": ("evalkit.cli.report", "report", "Write a Markdown report (leaderboard, figures, wins/losses) on runs."),
    "leaderboard": ("evalkit.cli.leaderboard", "leaderboard", "Rank every run file in a folder; test adjacent ranks."),
    "validate": ("evalkit.cli.validate", "validate", "Check a submission file and report every problem (exit 1 if invalid)."),
    "submit": ("evalkit.cli.submit", "submit", "Write a run as the task's official submission (validated, atomic)."),
    "fuse": ("evalkit.cli.fuse", "fuse", "Fuse runs (ranx methods, RRF, alpha fusion) into a TREC run."),
    "check": ("evalkit.cli.check", "check", "CI regression check of scores against a baseline JSON."),
    "run": ("evalkit.cli.run", "run_command", "Run a pipeline config or one system: run, submission, report."),
    "train": ("evalkit.cli.run", "train", "Fit a trainable system on training queries and qrels; save it."),
    "systems": ("evalkit.cli.run", "systems", "List registered systems, their options and the shipped configs."),
    "pool": ("evalkit.cli.pool", "pool", "Pool the top K documents of runs as a judging sheet for assessors; unique contributions."),
    "reuse": ("evalkit.cli.reuse", "reuse", "Leave-one-group-out test: would the judgments score a new run fairly?"),
    "repro": ("evalkit.cli.repro", "repro", "Reproducibility measures (KTU, RBO, RMSE, ER, DRI, t-tests) of a reproduced run pair."),
    "topics-needed": ("evalkit.cli.topics_needed", "topics_needed", "Topic set size design: topics needed for a power, alpha and difference."),
    "judge": ("evalkit.cli.judge", "judge", "Grade a judging sheet with an LLM (UMBRELA prompt), resumably, with provenance."),
    "agreement": ("evalkit.cli.agreement", "agreement", "Agreement of two golds (kappa, alpha) and what it changes on the leaderboard."),
    "demo": ("evalkit.cli.demo", "demo", "BM25 on the shipped example: run, submission, validation, score, report."),
    "competition": ("evalkit.cli.competition", "competition", "Organise a shared task on Codabench: bundle, check, run a submission."),
}


def option_of(path: str) -> str | None:
    """The option of the running command whose value is ``path`` (``--out``; ``--out's manifest`` for its sidecar), if any."""
    ctx = click.get_current_context(silent=True)
    sidecar = path[:-len(".manifest.json")] if path.endswith(".manifest.json") else None
    while ctx is not None:
        for param in ctx.command.params:
            if not isinstance(param, click.Option):
                continue
            value = ctx.params.get(param.name or "")
            values = value if isinstance(value, (tuple, list)) else (value,)
            flag = max(param.opts, key=len)
            for given in values:
                if isinstance(given, (str, os.PathLike)) and str(given):
                    if os.fspath(given) == path:
                        return flag
                    if sidecar is not None and os.fspath(given) == sidecar:
                        return f"{flag}'s manifest"
        ctx = ctx.parent
    return None


# errors of a write that can happen to any command: disk full, file too large, quota, read-only file system
WRITE_ERRNOS = {errno.ENOSPC, errno.EFBIG, errno.EDQUOT, errno.EROFS}


class LazyGroup(click.Group):
    def list_commands(self, ctx):
        return sorted(COMMANDS)

    def get_command(self, ctx, name):
        entry = COMMANDS.get(name)
        if entry is None:
            return None
        from evalkit.io.transactions import name_options_with

        name_options_with(option_of)
        module, attribute, _ = entry
        return getattr(importlib.import_module(module), attribute)

    def resolve_command(self, ctx, args):
        """An unknown command: one line with the closest commands (``evalkit scor``: did you mean score?)."""
        name = click.utils.make_str(args[0]) if args else ""
        if args and name not in COMMANDS and not name.startswith("-"):
            import difflib

            close = difflib.get_close_matches(name, list(COMMANDS), n=3, cutoff=0.6)
            hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            ctx.fail(f"No such command {name!r}.{hint}")
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx, formatter):
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="evalkit", message="%(prog)s %(version)s")
@click.option("--max-input-size", default=None, metavar="SIZE",
              help="Largest input read or decompressed, e.g. 4G (default 1G, or $EVALKIT_MAX_INPUT_SIZE).")
def cli(max_input_size: str | None) -> None:
    """evalkit: exact scoring, significance tests and submissions for retrieval shared tasks."""
    if max_input_size is not None:
        import os

        from evalkit.io.textio import MAX_INPUT_ENV, parse_size

        os.environ[MAX_INPUT_ENV] = str(parse_size(max_input_size))


def main(argv: list[str] | None = None) -> int:
    from evalkit.core.errors import EvalkitError
    from evalkit.io.transactions import transaction, write_error

    try:
        with transaction():  # every output of the command, or none
            # without standalone mode click returns (not raises) the code of ctx.exit(n) / Exit(n)
            returned = cli.main(args=argv, prog_name="evalkit", standalone_mode=False)
        if isinstance(returned, int) and not isinstance(returned, bool):
            return returned
    except EvalkitError as exc:
        click.echo(exc.one_line(), err=True)
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        return 130
    except click.exceptions.UsageError as exc:  # a bad option or argument: one line too
        where = exc.ctx.command_path if exc.ctx is not None else "evalkit"
        hint = f" (see {where} --help)" if exc.ctx is not None else ""
        click.echo(f"{where}: {' '.join(exc.format_message().split())}{hint}", err=True)
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except BrokenPipeError:
        return 0
    except ModuleNotFoundError as exc:  # an optional library (a system's model code) missing on a light install
        if (exc.name or "").split(".")[0] == "evalkit":
            raise  # evalkit's own module missing: a bug, shown as one
        from evalkit.core.errors import missing_module_message

        click.echo(missing_module_message(exc), err=True)
        return 2
    except MemoryError:
        click.echo("evalkit: out of memory (an input too large for this machine? see evalkit --max-input-size)", err=True)
        return 2
    except RecursionError:
        click.echo("evalkit: input nested too deeply to read", err=True)
        return 2
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        return 130
    except OSError as exc:  # a write outside the transaction's files (a model folder, a cache) on a full disk
        if exc.errno not in WRITE_ERRNOS:
            raise
        click.echo(write_error(exc.filename or "output", exc).one_line(), err=True)
        return 2
    return 0


def entry_point() -> None:
    code = main()
    if _command(sys.argv[1:]) in FAST_EXIT_COMMANDS:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (BrokenPipeError, ValueError):  # a reader that went away (| head), a closed stream
                pass
        os._exit(code)
    sys.exit(code)
