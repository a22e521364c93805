"""MkDocs hook: the reference pages generated from evalkit's registries at build time, so they cannot drift.

``docs/reference/metrics.md``, ``tasks.md``, ``formats.md`` and ``systems.md`` are not files in the repository:
:func:`on_files` adds them to the build from the same registries ``evalkit metrics``, ``evalkit tasks``,
``evalkit formats`` and ``evalkit systems`` print (metric classes, task plugins, format readers, system plugins).
"""
from __future__ import annotations

import inspect
import tomllib

NOTE = "*Generated at build time from evalkit's registries (`docs/hooks/reference.py`); {command} prints the same list.*\n"


def cell(text: object) -> str:
    """Text for one Markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ").strip()


def code(names) -> str:
    return ", ".join(f"`{name}`" for name in names) or "—"


def metric_names(cls) -> tuple[str, str, str]:
    """The measure as trec_eval, ir_measures and ranx spell it."""
    bare, prefix = cls.trec
    trec = [name for name in (bare, f"{prefix}k" if prefix else None) if name]
    return code(trec), code(cls.ir_measures), code(cls.ranx)


def metrics_page() -> str:
    from evalkit.metrics import registered

    cutoffs = {"optional": "`name` or `name@k`", "required": "`name@k`", "none": "no cutoff"}
    lines = ["# Metrics", "", NOTE.format(command="`evalkit metrics`"),
             "Names are case-insensitive: type a measure as evalkit, trec_eval, ir_measures or ranx spell it "
             "(`@k` is a rank cutoff, or a recall level in [0, 1] for `IPrec`). Grades follow trec_eval: relevant when "
             "`grade >= --relevance-level` (default 1), judged non-relevant when `0 <= grade < level`, negative grades "
             "unjudged. Where evalkit and the other tools differ: [Differences to other tools](../explanation/differences.md).",
             "", "| evalkit | cutoff | trec_eval | ir_measures | ranx | aliases |", "|---|---|---|---|---|---|"]
    sections = []
    for cls in registered():
        trec, irm, rx = metric_names(cls)
        cut = cutoffs[cls.cutoff].replace("@k", "@x") if cls.cutoff_kind == "level" else cutoffs[cls.cutoff]
        aliases = (*cls.aliases, *(f"{a}_k" for a in cls.cutoff_aliases), *cls.set_aliases)
        lines.append(f"| [`{cls.name}`](#{anchor(cls.name)}) | {cut} | {trec} | {irm} | {rx} | {cell(code(aliases))} |")
        doc = inspect.getdoc(cls) or ""
        params = ", ".join(f"`{p}=...`" for p in cls.params) if cls.params else "none"
        sections += [f"## {cls.name}", "", doc, "",
                     f"*Cutoff:* {cut}. *Parameters* (`name(param=value)`): {params}. "
                     f"*Aggregated as:* {cls.aggregation}. *Module:* `{cls.__module__}`.", ""]
    return "\n".join(lines + [""] + sections)


def anchor(name: str) -> str:
    """The id MkDocs' toc extension gives a heading ``name``."""
    import re

    text = re.sub(r"[^\w\s-]", "", name.lower()).strip()
    return re.sub(r"[-\s]+", "-", text)


def tasks_page() -> str:
    from evalkit.tasks import tasks

    lines = ["# Tasks", "", NOTE.format(command="`evalkit tasks`"),
             "The task comes from the gold (or `--task`), never from a run. A task is one class, registered under the "
             "`evalkit.tasks` entry-point group: [write one](../extending/task.md).", "",
             "| task | official score |", "|---|---|"]
    sections = []
    for task in tasks():
        lines.append(f"| [`{task.name}`](#{anchor(task.name)}) | {cell(task.official_definition)} |")
        sections += [f"## {task.name}", "", cell(task.description), "",
                     f"- **Official score:** {cell(task.official_definition)}",
                     f"- **Metrics reported:** {code(m.label for m in task.metrics())}",
                     f"- **Gold formats:** {code(task.gold_formats) if task.gold_formats else 'any'}; "
                     f"**run formats:** {code(task.run_formats) if task.run_formats else 'any'}"]
        submission = task.submission_format
        if submission:
            labels = ", labels required" if task.labels_required else ""
            sections.append(f"- **Submission:** {cell(submission.description)} ({task.submission_depth} per query{labels})")
        sections += [f"- **Class:** `{type(task).__module__}.{type(task).__name__}`", ""]
    return "\n".join(lines + [""] + sections)


def formats_page() -> str:
    from evalkit.io.formats import formats

    lines = ["# Formats", "", NOTE.format(command="`evalkit formats`"),
             "Runs and gold files are auto-detected; `--format` forces one. Collections and queries (`evalkit run`, "
             "`evalkit train`) are detected the same way; `--corpus-format` and `--queries-format` force one.", "",
             "## Runs and gold", "", "| format | kind | what | module |", "|---|---|---|---|"]
    for fmt in [f for f in formats() if f.kind != "collection"]:
        lines.append(f"| `{fmt.name}` | {fmt.kind} | {cell(fmt.description)} | `{module_of(fmt)}` |")
    lines += ["", "## Collections and queries", "", "| format | what | module |", "|---|---|---|"]
    for fmt in formats("collection"):
        lines.append(f"| `{fmt.name}` | {cell(fmt.description)} | `{module_of(fmt)}` |")
    return "\n".join(lines) + "\n"


def module_of(fmt) -> str:
    reader = getattr(fmt, "read", None)
    return getattr(reader, "__module__", "") or "evalkit.io.formats"


def systems_page() -> str:
    from evalkit.core.errors import UsageError
    from evalkit.pipelines.config import shipped_configs
    from evalkit.pipelines.registry import describe_options, distributed_work, get_system_class, system_names

    lines = ["# Systems", "", NOTE.format(command="`evalkit systems`"),
             "Systems are plugins registered under the `evalkit.systems` entry-point group; the built-in ones need "
             "`pip install -e \".[systems]\"` to run. Options are given as `--set KEY=VALUE` or in a TOML stage's "
             "`options`. Writing one: [a system plugin](../extending/system.md).", "",
             "| system | kind | what |", "|---|---|---|"]
    sections = []
    for name in system_names():
        try:
            cls = get_system_class(name)
        except UsageError as exc:
            lines.append(f"| `{name}` | unavailable | {cell(exc.one_line())} |")
            continue
        kind = cls.kind + (", trainable" if cls.learnable else "")
        lines.append(f"| [`{name}`](#{anchor(name)}) | {kind} | {cell(cls.description)} |")
        sections += [f"## {name}", "", f"*{kind}.* {cell(cls.description)}", "",
                     f"On `--engine ray`: {cell(distributed_work(cls))}.", "",
                     "| option | type | default | what |", "|---|---|---|---|"]
        for option, type_name, default, help_text in describe_options(cls):
            sections.append(f"| `{option}` | {cell(type_name)} | `{cell(repr(default))}` | {cell(help_text)} |")
        sections.append("")
    sections += ["## Shipped pipeline configs", "",
                 "`evalkit run NAME` runs one of these (`systems/configs/NAME.toml`).", "",
                 "| config | description | stages |", "|---|---|---|"]
    for name, path in shipped_configs().items():
        config = tomllib.loads(path.read_text(encoding="utf-8"))
        stages = " → ".join(stage.get("name", "?") for stage in config.get("stages", []))
        sections.append(f"| `{name}` | {cell(config.get('description', ''))} | {cell(stages)} |")
    return "\n".join(lines + [""] + sections) + "\n"


def where_defined(name: str, obj) -> tuple[str, str]:
    """The module that defines ``obj`` (re-exported as ``evalkit.NAME``) and its name there."""
    import inspect
    import sys

    if inspect.isclass(obj) or inspect.isfunction(obj):
        return obj.__module__, obj.__qualname__
    import re

    for module_name, module in sorted(sys.modules.items()):
        source = getattr(module, "__file__", None)
        if module_name.startswith("evalkit") and getattr(module, name, None) is obj and source and source.endswith(".py"):
            if re.search(rf"^{name}\s*[:=]", open(source, encoding="utf-8").read(), re.M):
                return module_name, name
    raise LookupError(f"evalkit.{name}: no module assigns it")


def api_page() -> str:
    """One mkdocstrings entry per name ``import evalkit`` re-exports (``evalkit.__all__``), from the module that holds it."""
    import evalkit

    holders = {**{name: "evalkit.api" for name in evalkit._API}, **{name: "evalkit.data" for name in evalkit._DATA},
               **evalkit._ELSEWHERE}
    lines = ["# Python API", "", "*Generated at build time from `evalkit.__all__` (`docs/hooks/reference.py`) and the "
             "docstrings.*", "",
             "The command line is a thin layer over this API. `import evalkit` loads it lazily: each name below is "
             "`evalkit.NAME`, defined in the module shown. Runs and gold are paths, `Run` / `Qrels` objects, pandas "
             "DataFrames or nested dicts, checked exactly as the file readers check files: each problem is one "
             "`UsageError` naming the row or key.", ""]
    by_module: dict[str, list[str]] = {}
    for name in evalkit.__all__:
        if name in holders:
            module, qualname = where_defined(name, getattr(evalkit, name))
            by_module.setdefault(module, []).append(qualname)
    for module, names in by_module.items():
        lines += [f"## `{module}`", ""]
        for name in names:
            lines += [f"::: {module}.{name}", "    options:", "      heading_level: 3", ""]
    lines += ["## `evalkit.competition`", "", "The organiser's tools behind `evalkit competition` ([guide](../guide/codabench.md)).", ""]
    for name in ("make_bundle", "check_bundle", "run_submission"):
        lines += [f"::: evalkit.competition.{name}", "    options:", "      heading_level: 3", ""]
    return "\n".join(lines)


PAGES = {"reference/metrics.md": metrics_page, "reference/tasks.md": tasks_page,
         "reference/formats.md": formats_page, "reference/systems.md": systems_page, "reference/api.md": api_page}


def on_files(files, config):
    from mkdocs.structure.files import File

    for path, build in PAGES.items():
        existing = files.get_file_from_path(path)
        if existing is not None:
            files.remove(existing)
        files.append(File.generated(config, path, content=build()))
    return files
