"""The input forms of the Python API: a path, a :class:`Run` / :class:`Qrels`, a DataFrame or a nested dict.

Runs and gold files may be given as a path (any format ``evalkit formats``
lists), a :class:`~evalkit.data.Run` / :class:`~evalkit.data.Qrels`, a pandas
DataFrame (``query_id, doc_id, score`` / ``query_id, doc_id, relevance``, or
the alias names of :mod:`evalkit.core.columns`) or a nested dict
``{query_id: {doc_id: score}}`` (a ``{query_id: [doc_id, ...]}`` dict is a
list run in list order). :mod:`evalkit.api` re-exports what users call.
"""
from __future__ import annotations

import hashlib
import os
from typing import TYPE_CHECKING, Any, Mapping, Union

from evalkit.data import Qrels, Run
from evalkit.core.errors import UsageError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

RunLike = Union[str, os.PathLike, Run, "pd.DataFrame", Mapping[str, Any]]
QrelsLike = Union[str, os.PathLike, Qrels, "pd.DataFrame", Mapping[str, Mapping[str, float]]]


# ----------------------------------------------------------------- inputs
def read_run(path: str | os.PathLike, format: str = "auto", *, column: str | None = None, name: str | None = None,
             against: Qrels | None = None) -> Run:
    """Read a run or submission file (TREC run, 4b list TSV/CSV, ClimateCheck CSV; plain, gzip or zip).

    ``against``: the gold the run will be scored on; a TREC run is then read against it (:mod:`evalkit.io.prejudged`:
    the same run, scored without ranking all its rows)."""
    from evalkit.io.formats import read_run as _read

    return _read(path, format, column=column, name=name, against=against)


def read_qrels(path: str | os.PathLike, format: str = "auto") -> Qrels:
    """Read a gold file (TREC or BEIR qrels, CheckThat! 4b or ClimateCheck gold)."""
    from evalkit.io.formats import read_qrels as _read

    return _read(path, format)


def _is_frame(obj: Any) -> bool:
    return type(obj).__name__ == "DataFrame" and hasattr(obj, "columns")


def as_run(obj: RunLike, *, name: str | None = None, format: str = "auto", column: str | None = None,
           against: Qrels | None = None) -> Run:
    """A :class:`Run` from a path, a Run, a DataFrame or a dict (see the module docstring); a path is read against the
    gold ``against`` (:func:`read_run`) when given."""
    if isinstance(obj, Run):
        if obj.source is None:  # built in code (Run.from_scores...): the same rules as a file's
            from evalkit.io.in_memory import check_built

            check_built(obj, f"run {obj.name!r}")
        return obj.with_name(name) if name else obj
    if isinstance(obj, (str, os.PathLike)):
        return read_run(obj, format, column=column, name=name, against=against)
    if _is_frame(obj):
        from evalkit.io.in_memory import run_from_frame

        return run_from_frame(obj, name or "run", column)
    if isinstance(obj, Mapping):
        from evalkit.io.in_memory import run_from_dict

        return run_from_dict(obj, name or "run")
    raise UsageError(f"cannot use a {type(obj).__name__} as a run (give a path, a Run, a DataFrame or a dict)")


def as_qrels(obj: QrelsLike, *, format: str = "auto") -> Qrels:
    """A :class:`Qrels` from a path, a Qrels, a DataFrame or a ``{query_id: {doc_id: grade}}`` dict."""
    if isinstance(obj, Qrels):
        if obj.source is None:
            from evalkit.io.in_memory import check_built

            check_built(obj, "gold Qrels")
        return obj
    if isinstance(obj, (str, os.PathLike)):
        return read_qrels(obj, format)
    if _is_frame(obj):
        from evalkit.io.in_memory import qrels_from_frame

        return qrels_from_frame(obj)
    if isinstance(obj, Mapping):
        from evalkit.io.in_memory import qrels_from_dict

        return qrels_from_dict(obj)
    raise UsageError(f"cannot use a {type(obj).__name__} as gold (give a path, a Qrels, a DataFrame or a dict)")


def input_entry(role: str, item: Run | Qrels) -> dict[str, Any]:
    """The manifest entry of one input: its file and hash, or (in memory) a hash of its content."""
    from evalkit.io.manifest import input_entry as file_entry

    if item.source is not None:
        return file_entry(role, item.source)
    digest = hashlib.sha256()
    for array in (item.query_ids, item.doc_ids):
        digest.update("\x00".join(map(str, array.tolist())).encode("utf-8"))
    for array in (item.qidx, item.didx, getattr(item, "scores", None), getattr(item, "grades", None)):
        if array is not None:
            digest.update(array.tobytes())
    return {"role": role, "path": None, "format": "in-memory", "sha256": digest.hexdigest()}
