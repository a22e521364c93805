"""``evalkit competition bundle``: a Codabench v2 competition whose scoring program is evalkit.

From a task and one gold file per phase, one zip::

    competition.yaml            version 2: pages, tasks (one per phase), phases, one leaderboard
    logo.png  terms.md  pages/overview.md  pages/evaluation.md  pages/submission_format.md
    scoring_program.zip         evalkit, vendored (see evalkit.competition.program)
    reference_data_<i>_<phase>.zip   the phase's gold + evalkit-reference.json (gold name, detailed results mode)
    evalkit-manifest.json       what built it: evalkit version, inputs and their sha256, settings, columns, files

The leaderboard has one column per figure the task reports (found by
scoring a perfect run built from the first phase's gold: the official
figure first). Before it is written the bundle is linted with the rules of
``evalkit competition check`` and, unless told not to, each phase's
scoring is run end to end by the local worker on a submission rebuilt from
that phase's gold (filled up to the task's submission depth: it keeps the
submission rules), which must score as evalkit scores it in process.
Written atomically, never over a file without ``force``, with
``BUNDLE.zip.manifest.json`` beside it.
"""
from __future__ import annotations

import hashlib
import io
import re
import tempfile
import zipfile
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from evalkit.competition import codabench, pages
from evalkit.competition.columns import Column, columns_for
from evalkit.competition.settings import BundleSettings
from evalkit.core.errors import EvalkitError, UsageError
from evalkit.core.jsonout import strict

ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # fixed member dates: the same inputs give the same bytes


@dataclass(frozen=True)
class BundleResult:
    """What :func:`write_bundle` wrote."""

    path: Path
    columns: list[Column]
    manifest: dict
    self_test: dict[str, dict[str, float]]  # phase -> the scores of the submission rebuilt from its gold


def zip_bytes(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, files[name])
    return buffer.getvalue()


FILLER = "evalkit-filler-"  # ids a self-test submission is filled up with (judged by no gold; numbers where the gold's are)


def gold_run(qrels, labels: bool, fill: int = 0):
    """A perfect run from the gold: each query's judged documents, highest grade first (with their labels); with
    ``fill``, each query's list filled up to ``fill`` ids with ids the gold never judges, ranked after its own
    (labelled Not Enough Information), so that it keeps a task's submission depth."""
    from evalkit.data import Run
    from evalkit.data.labels import NEI

    order = np.lexsort((-qrels.grades, qrels.qidx))
    qids = [str(q) for q in qrels.query_ids[qrels.qidx[order]].tolist()]
    docs = [str(d) for d in qrels.doc_ids[qrels.didx[order]].tolist()]
    scores = qrels.grades[order].astype(np.float64).tolist()
    rows = [str(x) for x in qrels.labels[order].tolist()] if labels and qrels.labels is not None else None
    if fill:
        judged = set(docs)
        numeric = bool(judged) and all(d.isascii() and d.isdigit() for d in judged)  # ids read as numbers stay numbers
        start = max(map(int, judged)) + 1 if numeric else 0
        fillers = [name for name in (str(start + k) if numeric else f"{FILLER}{k}" for k in range(fill + len(judged)))
                   if name not in judged][:fill]
        lowest = min(scores, default=0.0)
        counts = np.bincount(qrels.qidx, minlength=len(qrels.query_ids))
        for q, query in enumerate(qrels.query_ids.tolist()):
            for k in range(fill - int(counts[q])):
                qids.append(str(query))
                docs.append(fillers[k])
                scores.append(lowest - 1.0 - k)
                if rows is not None:
                    rows.append(NEI)
    return Run.from_rows(qids, docs, np.asarray(scores, dtype=np.float64), labels=rows, name="gold")


def submission_text(task, run) -> tuple[str, str]:
    """(member name, text) of ``run`` written as the task's submission file (a TREC run for a task without one)."""
    fmt = task.submission_format
    if fmt is None:
        from evalkit.io.formats.trec_run import format_trec_run

        return "run.trec", format_trec_run(run, tag="gold")
    from evalkit.submission import Expectations

    depth = task.submission_depth or 10
    expectations = Expectations(task=task.name, format=fmt.name, depth=depth, labels_required=task.labels_required)
    return fmt.member, fmt.render(run, expectations, None, False)


def read_gold(task, path: str):
    from evalkit.io.reading import as_qrels

    qrels = as_qrels(path)
    found = qrels.source.format if qrels.source else ""
    if task.gold_formats and found not in task.gold_formats:
        raise UsageError(f"{path}: a {found} file; task {task.name} reads gold files of format {', '.join(task.gold_formats)}")
    return qrels


def gold_file(gold: str, read) -> tuple[str, bytes]:
    """(member name, bytes) of a phase's gold in its reference data: the file, or an ``irds:`` dataset's judgments as the
    TREC qrels lines evalkit read (the worker has no ir_datasets and no network)."""
    from evalkit.io.datasets import dataset_name, is_dataset_id

    if is_dataset_id(gold):
        from evalkit.io.datasets.irds import qrels_lines

        name = dataset_name(gold)
        return f"{_slug(name.replace('/', '_'))}.qrels", qrels_lines(name)
    return Path(gold).name, read(gold)


def _gold_label(gold: str) -> str:
    from evalkit.io.datasets import is_dataset_id

    return gold if is_dataset_id(gold) else Path(gold).name


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_")[:40] or "phase"


def competition_yaml(settings: BundleSettings, task, columns: list[Column], references: list[str], n_queries: dict) -> dict:
    y: dict = {
        "version": 2, "title": settings.title, "description": settings.description or task.description, "image": "logo.png",
        "terms": "terms.md", "docker_image": settings.docker_image, "enable_detailed_results": True,
        "show_detailed_results_in_submission_panel": True, "show_detailed_results_in_leaderboard": False,
        "make_programs_available": False, "make_input_data_available": False, "registration_auto_approve": False,
    }
    if settings.contact_email:
        y["contact_email"] = settings.contact_email
    y["pages"] = [{"title": "Overview", "file": "pages/overview.md"}, {"title": "Evaluation", "file": "pages/evaluation.md"},
                  {"title": "Submission format", "file": "pages/submission_format.md"}]
    y["tasks"] = [{"index": i, "name": f"{p.name} ({task.name})"[: codabench.TASK_NAME_MAX],
                   "description": f"{p.name} phase: {n_queries[p.name]:,} queries of {_gold_label(p.gold)}, scored by evalkit",
                   "scoring_program": "scoring_program.zip", "reference_data": references[i]} for i, p in enumerate(settings.phases)]
    y["phases"] = []
    for i, p in enumerate(settings.phases):
        phase = {"index": i, "name": p.name, "description": p.description, "start": p.start_text}
        if p.end is not None:
            phase["end"] = p.end_text
        phase.update({"max_submissions_per_day": p.max_submissions_per_day, "max_submissions": p.max_submissions,
                      "execution_time_limit": p.execution_time_limit, "tasks": [i]})
        y["phases"].append(phase)
    y["leaderboards"] = [{"title": "Leaderboard", "key": "main", "submission_rule": settings.submission_rule, "primary_index": 0,
                          "columns": [c.as_yaml(i) for i, c in enumerate(columns)]}]
    return y


def bundle_files(settings: BundleSettings, task, qrels_by_phase: dict, columns: list[Column], figures: Figures) -> dict[str, bytes]:
    import yaml

    from evalkit._version import __version__
    from evalkit.competition.logo import draw_logo
    from evalkit.competition.program import program_files
    from evalkit.competition.scoring import REFERENCE_CONFIG
    from evalkit.io.textio import read_input_bytes

    files: dict[str, bytes] = {}
    references = []
    for i, phase in enumerate(settings.phases):
        name = f"reference_data_{i}_{_slug(phase.name)}.zip"
        gold_name, gold_bytes = gold_file(phase.gold, read_input_bytes)
        config = {"schema": "evalkit-reference/1", "phase": phase.name, "gold": gold_name, "detailed_results": phase.detailed_results}
        files[name] = zip_bytes({gold_name: gold_bytes, REFERENCE_CONFIG: (strict(config, REFERENCE_CONFIG, indent=2) + "\n").encode()})
        references.append(name)
    n_queries = {p.name: len(qrels_by_phase[p.name].query_ids) for p in settings.phases}
    program = program_files(task, columns, settings.scoring_options(), settings.title, settings.max_submission_size,
                            settings.submission_rules)
    files["scoring_program.zip"] = zip_bytes(program)
    document = competition_yaml(settings, task, columns, references, n_queries)
    header = f"# Codabench v2 competition bundle written by evalkit {__version__} (evalkit competition bundle {task.name})\n"
    files[codabench.YAML_NAME] = (header + yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=120)).encode()
    files["logo.png"] = draw_logo(settings.title)
    files["terms.md"] = (settings.terms or pages.terms(settings)).encode()
    files["pages/overview.md"] = pages.overview(settings, task, n_queries).encode()
    files["pages/evaluation.md"] = pages.evaluation(settings, task, columns, figures.official, figures.refuses_partial).encode()
    files["pages/submission_format.md"] = pages.submission_format(settings, task).encode()
    return files


@dataclass(frozen=True)
class Figures:
    """What the task reports, found by scoring runs built from the gold: labels (official first), whether a run
    missing most queries is refused as a wrong split."""

    labels: list[str]
    official: str
    refuses_partial: bool


def figures_of(task, qrels, settings: BundleSettings) -> Figures:
    from evalkit.competition.scoring import score_run
    from evalkit.core.errors import PartialRunError

    perfect = gold_run(qrels, task.labels_required)
    scored, _ = score_run(task, qrels, perfect, settings.options_for(task.name, allow_partial=True))
    half = [str(q) for q in qrels.query_ids[: len(qrels.query_ids) // 2].tolist()]
    refuses = False
    if half:
        try:
            score_run(task, qrels, perfect.restrict(half), settings.options_for(task.name))
        except PartialRunError:
            refuses = True
    return Figures(list(scored.score.values), scored.score.official, refuses)


def self_test(path: Path, settings: BundleSettings, task, qrels_by_phase: dict, columns: list[Column]) -> dict[str, dict[str, float]]:
    """Each phase scored end to end by the local worker on a submission rebuilt from its gold: its scores.json must
    hold, under each column's key, exactly the figure evalkit gives in process for the same file."""
    from evalkit.competition.scoring import score_run
    from evalkit.competition.worker import run_submission
    from evalkit.io.reading import as_run

    results = {}
    with tempfile.TemporaryDirectory(prefix="evalkit-bundle-test-") as folder:
        for phase in settings.phases:
            qrels = qrels_by_phase[phase.name]
            member, text = submission_text(task, gold_run(qrels, task.labels_required, task.submission_depth or 0))
            plain = Path(folder) / member
            plain.write_text(text, encoding="utf-8")
            upload = Path(folder) / f"{_slug(phase.name)}.zip"
            upload.write_bytes(zip_bytes({member: text.encode("utf-8")}))
            try:
                scoring = settings.options_for(task.name)
                run = as_run(str(plain), format=scoring.run_format, column=scoring.column)
                expected = score_run(task, qrels, run, scoring)[0].score.values
            except EvalkitError as exc:
                raise UsageError(f"self-test of phase {phase.name}: evalkit cannot score the {task.name} submission file it "
                                 f"writes ({exc.one_line()}); the scoring program reads what `evalkit score` reads") from None
            done = run_submission(str(path), str(upload), phase=phase.name)
            if done.failure:
                raise UsageError(f"self-test of phase {phase.name}: a submission rebuilt from its gold failed: {done.failure} "
                                 f"{' '.join(done.stderr.split())[-300:]}")
            wanted = {c.key: expected.get(c.label) for c in columns}
            if done.scores != wanted or done.unmatched:
                raise UsageError(f"self-test of phase {phase.name}: the scoring program wrote {done.scores}, evalkit gives {wanted}")
            results[phase.name] = dict(done.scores)
    return results


def write_bundle(settings: BundleSettings, out: str | Path, *, force: bool = False, test: bool = True) -> BundleResult:
    """Write the bundle for ``settings`` to ``out`` (see the module docstring); its result and manifest."""
    from evalkit.io.reading import input_entry
    from evalkit.competition.lint import lint_bundle
    from evalkit.io.manifest import build_manifest, write_sidecar
    from evalkit.tasks import get_task
    from evalkit.io.transactions import atomic_write, check_outputs, sidecar_of, transaction

    target = Path(out)
    if target.suffix.lower() != ".zip":
        raise UsageError(f"{target}: a Codabench bundle is a zip; name it NAME.zip")
    check_outputs([target, sidecar_of(target)], force, inputs=[p.gold for p in settings.phases])
    task = get_task(settings.task)
    qrels_by_phase = {p.name: read_gold(task, p.gold) for p in settings.phases}
    figures = figures_of(task, qrels_by_phase[settings.phases[0].name], settings)
    columns = columns_for(task, figures.labels, settings.precision)
    files = bundle_files(settings, task, qrels_by_phase, columns, figures)
    options = {k: v for k, v in asdict(settings).items() if k not in ("phases", "terms", "scoring")}
    options["scoring"] = settings.scoring_options()
    options["phases"] = [{**asdict(p), "start": p.start_text, "end": p.end_text} for p in settings.phases]
    manifest = build_manifest(task.name, [input_entry(f"gold:{p.name}", qrels_by_phase[p.name]) for p in settings.phases], options,
                              command="competition bundle")
    manifest["columns"] = [{"label": c.label, "key": c.key} for c in columns]
    manifest["files"] = {name: hashlib.sha256(data).hexdigest() for name, data in sorted(files.items())}
    files["evalkit-manifest.json"] = (strict(manifest, "the bundle's evalkit-manifest.json", indent=2) + "\n").encode()
    payload = zip_bytes(files)
    with tempfile.TemporaryDirectory(prefix="evalkit-bundle-") as folder:
        staged = Path(folder) / target.name
        staged.write_bytes(payload)
        problems = [p for p in lint_bundle(str(staged)) if p.severity == "error"]
        if problems:  # the settings are checked before: the writer and the checker disagree
            raise UsageError(f"the bundle fails its own check: {problems[0].line()}")
        tested = self_test(staged, settings, task, qrels_by_phase, columns) if test else {}
    with transaction():  # the bundle and its manifest, or neither
        atomic_write(target, payload, force=force)
        write_sidecar(target, manifest)
    return BundleResult(target, columns, manifest, tested)
