"""Writing a run as a task's official submission, checked before anything is written.

Any run evalkit reads (TREC run, list TSV/CSV, ClimateCheck CSV, zipped or
gzipped) is ranked by the one ranking rule, cut to the task's depth, written
in the official layout, then validated in memory with the same check as
``evalkit validate``. Only a valid result is written, atomically (temporary
file + rename), next to a ``.manifest.json`` sidecar. ``--out`` ending in
``.zip`` gives a zip holding the official file name at its top level.
"""
from __future__ import annotations

import hashlib
import io
import os
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from evalkit.core.errors import EvalkitError, UsageError

if TYPE_CHECKING:  # pragma: no cover
    from evalkit.submission import Expectations, SubmissionFormat

ZIP_DATE = (2025, 1, 1, 0, 0, 0)  # fixed, so the same run gives byte-identical zips


class InvalidSubmissionError(EvalkitError):
    """The submission evalkit would write does not pass the official checks."""


def zip_single(member: str, payload: bytes) -> bytes:
    """A zip holding ``member`` at its top level (no folder), deflated, with a fixed date."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        info = zipfile.ZipInfo(member, date_time=ZIP_DATE)
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = 0o644 << 16
        archive.writestr(info, payload)
    return buffer.getvalue()


def _query_set(queries):
    """A :class:`Split` from a query/gold file or a sequence of ids; ``None`` for all run queries."""
    from evalkit.submission.references import Split, load_splits

    if queries is None:
        return None
    if isinstance(queries, (str, os.PathLike)):
        return load_splits([queries])[0]
    return Split("given", "queries", tuple(dict.fromkeys(str(q) for q in queries)))


def write_submission(
    run,
    fmt: "SubmissionFormat",
    expectations: "Expectations",
    out_path: str | os.PathLike,
    queries: "str | os.PathLike | Sequence[str] | None" = None,
    force: bool = False,
    *,
    dedupe: bool = False,
    command: str = "submit",
) -> Path:
    """Write ``run`` (a :class:`~evalkit.data.Run` or a path) in ``fmt``, checked against ``expectations``.

    ``queries`` (a query/gold file or a list of ids) fixes which queries are
    written, in that order; run queries outside it are left out. Raises
    :class:`InvalidSubmissionError` (nothing written) when the result would
    not pass ``evalkit validate``.
    """
    from dataclasses import replace

    from evalkit.io.reading import read_run
    from evalkit.io.manifest import build_manifest, input_entry, write_sidecar
    from evalkit.submission import Problems
    from evalkit.submission.container import SubmissionText
    from evalkit.io.transactions import atomic_write, check_outputs, committed_together, sidecar_of

    task_name = expectations.task
    out = Path(out_path)
    suffix = out.suffix.lower()
    if suffix != ".zip" and suffix not in fmt.plain_suffixes:
        allowed = ", ".join((".zip",) + fmt.plain_suffixes)
        raise UsageError(f"{out}: a {task_name} submission is written as {allowed}; choose --out accordingly")
    check_outputs([out, sidecar_of(out)], force, inputs=[run, queries])
    if isinstance(run, (str, os.PathLike)):
        run = read_run(run)
    query_set = _query_set(queries)
    ids = list(query_set.ids) if query_set is not None else None
    if query_set is not None:
        expectations = replace(expectations, splits=(query_set,))
    text = fmt.render(run, expectations, ids, dedupe)
    label = f"{out}/{fmt.member}" if suffix == ".zip" else str(out)
    problems = Problems(label)
    fmt.check(SubmissionText(path=label, text=text), expectations, problems)
    if not problems.valid:
        source = run.source.path if run.source else run.name
        hint = ""
        if problems.counts().get("repeated id") and not dedupe:
            deduped = Problems(label)
            fmt.check(SubmissionText(path=label, text=fmt.render(run, expectations, ids, True)), expectations, deduped)
            hint = " (--dedupe would drop the repeats and fix it)" if deduped.valid else " (--dedupe would not help: too few distinct ids)"
        raise InvalidSubmissionError(
            f"{source}: cannot make a valid {task_name} submission, nothing written: "
            f"{problems.summary()}{hint}; first: {problems.first(2)}"
        )
    payload = text.encode("utf-8")
    data = zip_single(fmt.member, payload) if suffix == ".zip" else payload
    inputs = [input_entry("run", run.source)] if run.source else []
    if query_set is not None and isinstance(queries, (str, os.PathLike)):
        inputs.append(input_entry("queries", queries))
    manifest = build_manifest(
        task_name,
        inputs,
        {
            "format": fmt.name,
            "member": fmt.member if suffix == ".zip" else None,
            "depth": expectations.depth,
            "queries": problems.facts.get("queries"),
            "dedupe": dedupe,
            "sha256_of_submission_text": hashlib.sha256(payload).hexdigest(),
        },
        command=command,
    )
    with committed_together([out, sidecar_of(out)], force, inputs=[run.source.path if run.source else None, queries]):
        atomic_write(out, data, force=force)
        write_sidecar(out, manifest)
    return out
