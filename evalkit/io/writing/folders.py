"""A folder written whole or not at all (a trained system, an exported model): staged beside its target, then renamed.

:func:`staged_folder` checks the target before any work (a file there, a
folder with content without ``force``, a folder holding one of the inputs
even with it), yields an empty hidden folder beside it
(``.NAME.evalkit-HOST-PID-RANDOM.tmp``, :mod:`evalkit.io.writing.temporaries`),
and on success renames it into place; a replaced folder is moved aside first
(``.old``) and removed after. An error or a kill while the folder is written
leaves the target as it was (the stale temporary is removed by a later write
into the same parent).
"""
from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path
from typing import Iterable, Iterator

from evalkit.core.errors import UsageError
from evalkit.io.writing.temporaries import clean_stale_temporaries, temporary_name


def check_folder(target: str | os.PathLike, force: bool = False, inputs: Iterable = ()) -> Path:
    """Refuse, before any work, a target that is a file, a folder with content (without ``force``), or a folder that
    is or holds one of ``inputs`` (with or without ``force``: replacing it would remove the input)."""
    folder = Path(target)
    if os.path.lexists(folder) and not folder.is_dir():
        raise UsageError(f"{folder}: exists and is not a folder")
    real = os.path.realpath(folder)
    for item in inputs:
        if not isinstance(item, (str, os.PathLike)) or str(item) == "":
            continue
        path = os.path.realpath(os.fspath(item))
        if path == real or path.startswith(real.rstrip(os.sep) + os.sep):
            raise UsageError(f"{folder}: holds the input {os.fspath(item)}; write the output to another folder")
    if folder.is_dir() and any(folder.iterdir()) and not force:
        raise UsageError(f"{folder}: exists and is not empty; pass --force to overwrite")
    return folder


@contextlib.contextmanager
def staged_folder(target: str | os.PathLike, force: bool = False, inputs: Iterable = ()) -> Iterator[Path]:
    """An empty folder to write ``target``'s content into; it becomes ``target`` when the block ends without an error
    (see the module docstring), and is removed when it raises."""
    folder = check_folder(target, force, inputs)
    folder.parent.mkdir(parents=True, exist_ok=True)
    clean_stale_temporaries(folder.parent)
    staging = temporary_name(folder, "tmp")
    staging.mkdir()
    try:
        yield staging
        check_folder(folder, force, inputs)  # again: the target may have changed while the folder was written
        aside = None
        if folder.is_dir():
            aside = temporary_name(folder, "old")
            os.rename(folder, aside)
        try:
            os.rename(staging, folder)
        except OSError:
            if aside is not None:
                os.rename(aside, folder)
            raise
        if aside is not None:
            shutil.rmtree(aside, ignore_errors=True)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
