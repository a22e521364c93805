"""The one door to read a run or a gold: a file (any format ``evalkit formats`` lists) or an input held in memory.

Files: :func:`read_run` and :func:`read_qrels`. A run file is read in the
first of :data:`RUN_WAYS` that takes it; the ways differ in what they hold,
never in what the run scores (``tests/io/test_reading_door.py`` holds them
to one result):

- ``judged-from-file``: a TREC run of 1 MiB or more, plain ASCII with LF line
  ends, read against the gold it is scored on, is judged from its open file
  1 MiB at a time (:mod:`evalkit.io.streamed`); its bytes are read whole only
  if something asks for its rows.
- ``judged-from-bytes``: a run whose format reads against a gold (TREC) is
  loaded and judged in one pass (:mod:`evalkit.io.prejudged`): its judged rows
  ranked, its other rows only counted, its rows read when asked for.
- ``read-whole``: every other run, and any run the judged ways decline, is
  loaded and read by its format.

Loading (:func:`evalkit.io.textio.load`) takes the bytes the read-ahead thread
of a command (:mod:`evalkit.io.readahead`) already holds. A gold is loaded
from its file, or from an ``irds:<id>`` dataset's judgments
(:mod:`evalkit.io.datasets`), and read by its format.

In memory: :func:`as_run` and :func:`as_qrels` take a path (read here) or a
:class:`~evalkit.data.Run` / :class:`~evalkit.data.Qrels`, a pandas DataFrame
(``query_id, doc_id, score`` / ``query_id, doc_id, relevance``, or the alias
names of :mod:`evalkit.core.columns`) or a nested dict ``{query_id: {doc_id:
score}}`` (``{query_id: [doc_id, ...]}``: a list run in list order), which go
to :mod:`evalkit.io.in_memory`, read under the rules a file's rows meet.
:mod:`evalkit.api` re-exports what users call.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Collection, Mapping, Union

from evalkit.core.errors import UsageError, shown
from evalkit.data import Qrels, Run, Source

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from evalkit.io.prejudged import DeferredRun
    from evalkit.io.textio import LoadedFile

RunLike = Union[str, os.PathLike, Run, "pd.DataFrame", Mapping[str, Any]]
QrelsLike = Union[str, os.PathLike, Qrels, "pd.DataFrame", Mapping[str, Mapping[str, float]]]

JUDGED_FROM_FILE, JUDGED_FROM_BYTES, READ_WHOLE = "judged-from-file", "judged-from-bytes", "read-whole"
RUN_WAYS = (JUDGED_FROM_FILE, JUDGED_FROM_BYTES, READ_WHOLE)  # tried in this order; read-whole takes every run


# ----------------------------------------------------------------- files
def read_run(path: str | os.PathLike, format: str = "auto", *, column: str | None = None, name: str | None = None,
             against: Qrels | None = None, option: str = "--format", ways: Collection[str] = RUN_WAYS) -> Run:
    """Read a run or submission file (TREC run, list TSV/CSV, a task's own run format; plain, gzip or zip).

    ``against``: the gold the run will be scored on, which the judged ways read it against. ``option``: the
    command-line option that forces a format, named when detection fails. ``ways``: the ways allowed (the module
    docstring; tests and benchmarks narrow them, read-whole is always allowed)."""
    from evalkit.io.formats import display_name, resolve
    from evalkit.io.textio import load

    ways = (ways,) if isinstance(ways, str) else tuple(ways)  # one way named alone is that way, not its letters
    unknown = set(ways) - set(RUN_WAYS)
    if unknown:
        raise UsageError(f"unknown way to read a run: {', '.join(sorted(unknown))} (known: {', '.join(RUN_WAYS)})")
    judged, from_file = against is not None, None
    if against is not None and JUDGED_FROM_FILE in ways and format in ("auto", "trec-run"):
        from_file, judged = _judged_from_file(str(path), against)
    loaded = from_file if from_file is not None else load(path)
    chosen = resolve(loaded, "run", format, option)
    name = name or display_name(str(path))
    source = Source(path=str(path), format=chosen.name, sha256=loaded.digest, member=loaded.member)  # the hash: when asked for
    if judged and chosen.read_against is not None and (JUDGED_FROM_BYTES in ways or from_file is not None):
        run: DeferredRun | None = chosen.read_against(loaded, against)  # a DeferredRun, or None where read must read it
        if run is not None:
            return run.named(name, source)
    return replace(chosen.read(loaded, column=column), name=name, source=source)


def _judged_from_file(path: str, against: Qrels) -> tuple[LoadedFile | None, bool]:
    """The run at ``path`` judged from its file (a :class:`~evalkit.io.prejudged.StreamedFile`) where that way takes it,
    else ``None``; and whether a judged way may still read it (not where this one declined it: the general reader
    reads it, with its messages)."""
    from evalkit.io.prejudged import DECLINED, StreamedFile, read_streamed

    streamed = read_streamed(path, against)
    if streamed is DECLINED:
        return None, False
    return (streamed if isinstance(streamed, StreamedFile) else None), True


def read_qrels(path: str | os.PathLike, format: str = "auto") -> Qrels:
    """Read a gold file (TREC or BEIR qrels, a task's own gold format); ``irds:<id>`` reads the judgments of an
    ir_datasets dataset (:mod:`evalkit.io.datasets`) as TREC qrels."""
    from evalkit.io.datasets import dataset_name, is_dataset_id
    from evalkit.io.formats import display_name, resolve
    from evalkit.io.textio import load

    if is_dataset_id(path):
        name = dataset_name(str(path))
        loaded, format = _dataset_judgments(name, format), "trec-qrels"
    else:
        loaded, name = load(path), display_name(str(path))
    chosen = resolve(loaded, "qrels", format, "--gold-format")
    source = Source(path=str(path), format=chosen.name, sha256=loaded.digest, member=loaded.member)
    return replace(chosen.read(loaded), name=name, source=source)


def _dataset_judgments(name: str, format: str) -> LoadedFile:
    """The judgments of ir_datasets' ``name`` as the TREC qrels lines a file would hold (read by the TREC qrels reader)."""
    from evalkit.io.datasets import PREFIX, irds
    from evalkit.io.textio import LoadedFile

    label = PREFIX + name
    if format not in ("auto", "trec-qrels"):
        raise UsageError(f"{shown(label)}: the judgments of a dataset are read as trec-qrels, not {shown(format)} (drop --gold-format)")
    raw = irds.qrels_lines(name)
    return LoadedFile(label, raw, hashlib.sha256(raw).hexdigest())


# ----------------------------------------------------------------- any input
def as_run(obj: RunLike, *, name: str | None = None, format: str = "auto", column: str | None = None,
           against: Qrels | None = None) -> Run:
    """A :class:`Run` from a path (:func:`read_run`, against the gold ``against`` when given) or an input held in memory
    (:func:`evalkit.io.in_memory.run_from`)."""
    if isinstance(obj, (str, os.PathLike)):
        return read_run(obj, format, column=column, name=name, against=against)
    from evalkit.io.in_memory import run_from

    return run_from(obj, name=name, column=column)


def as_qrels(obj: QrelsLike, *, format: str = "auto") -> Qrels:
    """A :class:`Qrels` from a path (:func:`read_qrels`) or an input held in memory (:func:`evalkit.io.in_memory.qrels_from`)."""
    if isinstance(obj, (str, os.PathLike)):
        return read_qrels(obj, format)
    from evalkit.io.in_memory import qrels_from

    return qrels_from(obj)


def input_entry(role: str, item: Run | Qrels) -> dict[str, Any]:
    """The manifest entry of one input: its file and hash, or (in memory) a hash of its content."""
    from evalkit.io.manifest import input_entry as file_entry

    if item.source is not None:
        return file_entry(role, item.source)
    digest = hashlib.sha256()
    for array in (item.query_ids, item.doc_ids):
        digest.update("\x00".join(map(str, array.tolist())).encode("utf-8"))
    for values in (item.qidx, item.didx, getattr(item, "scores", None), getattr(item, "grades", None)):
        if values is not None:
            digest.update(values.tobytes())
    return {"role": role, "path": None, "format": "in-memory", "sha256": digest.hexdigest()}
