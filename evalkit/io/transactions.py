"""Every file a command writes: checked before any work, staged, committed together or not at all.

:func:`check_outputs` refuses, before any work, an output named twice, an
output that is one of the inputs (same real path or same file: a symlink or
a hard link to an input counts, ``--force`` or not), an existing output
(a dangling symlink included) without ``force``, and a folder that is missing
or not writable. Inside :func:`transaction` (the command line opens one
around every command; :func:`evalkit.write_report` and friends open their
own, which joins it) each :func:`atomic_write` of a checked output goes to a
temporary file beside its target; the command's outputs are renamed into
place together when it succeeds, and every temporary is removed when it
fails (a write error part-way through, a refused input, Ctrl-C), so a failure
leaves the folder as it was. An output replaced with ``force`` is kept
(hard-linked) until every rename has succeeded, so a failing commit puts
the old files back.

Where the file system allows it (Linux, ``O_TMPFILE``: ext4, xfs, btrfs,
tmpfs), a staged file is an unnamed temporary in the target's folder, linked
into place at the commit (``linkat`` of ``/proc/self/fd/N``; a file replaced
with ``force`` is linked to a named temporary that is renamed over it): a
process killed with ``kill -9`` while writing leaves nothing. Elsewhere the
temporaries are named ``.NAME.evalkit-HOST-PID-RANDOM.tmp`` (``.old`` for the
kept copies); a process killed with ``kill -9`` leaves them behind, and a later
write into the same folder removes those of a process of this host that is
gone, and any over a day old. Nothing else is ever removed.

The ``wrote ...`` lines of a command (:func:`announce`) are printed when its
outputs are committed, never for an output that was not written.

A full disk (``ENOSPC``, ``EFBIG``, ``EDQUOT``) or any other write error is
one line, exit code 2, and nothing is written.
"""
from __future__ import annotations

import contextlib
import contextvars
import errno
import os
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import AbstractSet, Callable, Iterable, Iterator

from evalkit.core.digest import sha256_of_file
from evalkit.core.errors import EvalkitError, UsageError
from evalkit.io.writing.temporaries import _HOST, STALE_SECONDS, clean_stale_temporaries  # noqa: F401  (re-exported)
from evalkit.io.writing.temporaries import keep as _keep
from evalkit.io.writing.temporaries import link_into_place as _link_into_place
from evalkit.io.writing.temporaries import remove_quietly as _remove
from evalkit.io.writing.temporaries import temporary_name as _temporary_name
from evalkit.io.writing.temporaries import unnamed_temporary as _unnamed_temporary

_DISK_FULL = {errno.ENOSPC, errno.EFBIG, errno.EDQUOT}


class OutputError(EvalkitError):
    """An output that cannot be written (disk full, permissions, ...): nothing was written."""


def write_error(path: str | os.PathLike, exc: OSError) -> OutputError:
    """One line for an ``OSError`` while writing ``path``."""
    reason = exc.strerror or str(exc)
    if exc.errno in _DISK_FULL:
        reason += " (disk full or file size limit reached)"
    return OutputError(f"{os.fspath(path)}: cannot write ({reason}); nothing was written")


def sidecar_of(path: str | os.PathLike) -> str:
    """The manifest sidecar written next to an output."""
    return f"{os.fspath(path)}.manifest.json"


_OPTION_OF: list[Callable[[str], str | None]] = []  # the command line's: the option (``--out``) that named a path


def name_options_with(option_of: Callable[[str], str | None]) -> None:
    """Let the errors about an output's folder name the option that gave the path (the command line registers this)."""
    _OPTION_OF[:] = [option_of]


def output_label(target: str | os.PathLike) -> str:
    """``--out nodir/x.md`` where an option gave the path (``--out's manifest nodir/x.md.manifest.json`` for its sidecar)."""
    path = os.fspath(target)
    option = _OPTION_OF[0](path) if _OPTION_OF else None
    return f"{option} {path}" if option else path


def check_writable(path: str | os.PathLike, force: bool = False) -> Path:
    """Fail early (before any work) if ``path`` cannot be written; a symlink (even dangling) is an existing file."""
    target = Path(path)
    exists = os.path.lexists(target)
    if exists and target.is_dir():
        raise UsageError(f"{output_label(target)}: is a folder")
    if exists and not force:
        kind = "exists as a symlink" if target.is_symlink() else "exists"
        raise UsageError(f"{target}: {kind}; pass --force to overwrite")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"{output_label(target)}: output folder {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise UsageError(f"{output_label(target)}: output folder {parent} is not writable")
    return target


def _identity(path: str) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISREG(info.st_mode) else None


def check_outputs(outputs: Iterable, force: bool = False, inputs: Iterable = ()) -> list[Path]:
    """Check every output before anything is written (``None`` and empty entries skipped).

    Refuses an output named twice (``--out X --per-query X``), an output that
    is also an input (by real path, or the same file through a hard link),
    with or without ``force``, and any existing one without ``force``: a
    refused command leaves the folder as it was. Inside a :func:`transaction`
    the outputs are registered, so their writes are committed together.
    """
    chosen = [o for o in outputs if o is not None and str(o) != ""]
    paths = [os.fspath(i) for i in inputs if isinstance(i, (str, os.PathLike)) and str(i) != ""]
    read = {os.path.realpath(p) for p in paths}
    read_files = {key for key in map(_identity, paths) if key is not None}
    seen: dict[str, str] = {}
    targets = []
    for output in chosen:
        key = os.path.realpath(os.fspath(output))
        if key in seen:
            raise UsageError(f"{output}: named twice as an output (also as {seen[key]}); give each output its own path")
        if key in read or _identity(os.fspath(output)) in read_files:
            raise UsageError(f"{output}: is also an input (the same file); write the output elsewhere")
        seen[key] = os.fspath(output)
        targets.append(check_writable(output, force))
    active = _ACTIVE.get()
    if active is not None:
        active.plan(targets, force, read, read_files)
    return targets


@dataclass
class _Staged:
    target: Path
    temporary: Path | None  # None: an unnamed temporary (``fd``)
    force: bool
    fd: int | None = None  # the open unnamed temporary (O_TMPFILE), linked into place at the commit
    kept: Path | None = None  # the replaced file, hard-linked, until the commit is through
    existed: bool = False

    def close(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None

    def remove(self) -> None:
        """The temporary gone: an unnamed one closed, a named one unlinked."""
        self.close()
        if self.temporary is not None:
            _remove(self.temporary)
        if self.kept is not None:
            _remove(self.kept)


@dataclass
class Transaction:
    """The outputs of one command: planned (checked), staged as temporaries, then committed together."""

    planned: dict[str, bool] = field(default_factory=dict)  # real path -> force
    inputs: set[str] = field(default_factory=set)
    input_files: set[tuple[int, int]] = field(default_factory=set)
    staged: dict[str, _Staged] = field(default_factory=dict)
    cleaned: set[str] = field(default_factory=set)
    announcements: list[str] = field(default_factory=list)  # printed to stderr once the outputs are committed

    def plan(
        self, targets: Iterable[Path], force: bool, inputs: AbstractSet[str] = frozenset(), input_files: AbstractSet[tuple[int, int]] = frozenset()
    ) -> None:
        for target in targets:
            self.planned[os.path.realpath(target)] = force
        self.inputs |= set(inputs)
        self.input_files |= set(input_files)

    def holds(self, path: str | os.PathLike) -> bool:
        return os.path.realpath(path) in self.planned

    def stage(self, path: str | os.PathLike, payload: bytes, force: bool = False) -> Path:
        """Write ``payload`` to a temporary beside ``path``; it becomes ``path`` at :meth:`commit`."""
        key = os.path.realpath(path)
        force = force or self.planned.get(key, False)
        if key in self.inputs or _identity(os.fspath(path)) in self.input_files:
            raise UsageError(f"{path}: is also an input (the same file); write the output elsewhere")
        target = check_writable(path, force)
        folder = str(target.parent) or "."
        if folder not in self.cleaned:
            self.cleaned.add(folder)
            clean_stale_temporaries(folder)
        previous = self.staged.pop(key, None)
        if previous is not None:
            previous.remove()
        try:
            unnamed = _unnamed_temporary(folder)
            if unnamed is not None:
                item = self.staged[key] = _Staged(target, None, force, fd=unnamed)
                fd = os.dup(unnamed)  # the handle closes its own; the unnamed file stays open until the commit
            else:
                temporary = _temporary_name(target, "tmp")
                item = self.staged[key] = _Staged(target, temporary, force)
                fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            with os.fdopen(fd, "wb") as handle:
                handle.write(payload)
                handle.flush()
                os.fsync(handle.fileno())
            if item.fd is not None:
                os.fchmod(item.fd, 0o644)
            else:
                assert item.temporary is not None  # a staged file without an fd is a named temporary
                os.chmod(item.temporary, 0o644)
        except OSError as exc:
            raise write_error(target, exc) from None
        return target

    def digests(self) -> dict[Path, str]:
        """The sha256 of every file staged so far (what the commit will write), by target."""
        out = {}
        for item in self.staged.values():
            if item.fd is not None:
                with open(f"/proc/self/fd/{item.fd}", "rb") as handle:
                    out[item.target] = sha256_of_file(handle)[0]
            else:
                assert item.temporary is not None  # a staged file without an fd is a named temporary
                with open(item.temporary, "rb") as handle:
                    out[item.target] = sha256_of_file(handle)[0]
        return out

    def _place(self, item: _Staged) -> None:
        """Put ``item``'s temporary at its target: a rename, or a link of the unnamed file (to a named one first when it replaces)."""
        if item.fd is None:
            assert item.temporary is not None  # a staged file without an fd is a named temporary
            os.replace(item.temporary, item.target)
            return
        if not item.existed:
            try:
                _link_into_place(item.fd, item.target)
            except FileExistsError:  # created meanwhile by someone else: refuse, as check_writable does
                raise UsageError(f"{item.target}: exists; pass --force to overwrite") from None
        else:
            named = _temporary_name(item.target, "tmp")
            _link_into_place(item.fd, named)
            try:
                os.replace(named, item.target)
            except BaseException:
                _remove(named)
                raise
        item.close()

    def commit(self) -> list[Path]:
        """Rename every staged file into place; on any failure put back what was there and remove the rest."""
        done: list[_Staged] = []
        try:
            for item in self.staged.values():
                check_writable(item.target, item.force)  # created meanwhile by someone else: refuse
                item.existed = item.force and os.path.lexists(item.target)  # without force: never replaced (a link refuses)
                if item.existed and not item.target.is_symlink():
                    item.kept = _keep(item.target)
                self._place(item)
                done.append(item)
        except BaseException as exc:
            for item in reversed(done):
                with contextlib.suppress(OSError):
                    if item.kept is not None:
                        os.replace(item.kept, item.target)
                    elif not item.existed:
                        os.unlink(item.target)
            self.discard()
            if isinstance(exc, OSError):
                raise write_error(getattr(exc, "filename", None) or "output", exc) from None
            raise
        for item in done:
            if item.kept is not None:
                _remove(item.kept)
            self.planned[os.path.realpath(item.target)] = True  # written by this transaction: it may write it again
        written = [item.target for item in done]
        self.staged.clear()
        return written

    def discard(self) -> None:
        """Remove every temporary: nothing staged reaches its target."""
        for item in self.staged.values():
            item.remove()
        self.staged.clear()
        self.announcements.clear()


_ACTIVE: contextvars.ContextVar[Transaction | None] = contextvars.ContextVar("evalkit_outputs", default=None)


@contextlib.contextmanager
def transaction() -> Iterator[Transaction]:
    """Commit the outputs written inside together when the block succeeds; write none when it raises.

    Nested blocks join the outermost one (a command calling an API function
    that writes several files commits them all at the command's end).
    """
    outer = _ACTIVE.get()
    if outer is not None:
        yield outer
        return
    current = Transaction()
    token = _ACTIVE.set(current)
    try:
        yield current
    except BaseException:
        current.discard()
        raise
    else:
        current.commit()
        lines, current.announcements = current.announcements, []
        for line in lines:
            print(line, file=sys.stderr, flush=True)
    finally:
        _ACTIVE.reset(token)


def announce(line: str) -> None:
    """Print ``line`` (``wrote ...``) to stderr when the outputs of the open transaction are committed (at once outside one)."""
    active = _ACTIVE.get()
    if active is None:
        print(line, file=sys.stderr, flush=True)
    else:
        active.announcements.append(line)


@contextlib.contextmanager
def committed_together(outputs: Iterable, force: bool = False, inputs: Iterable = ()) -> Iterator[Transaction]:
    """:func:`check_outputs` then :func:`transaction`: the files written inside are committed together, or none."""
    with transaction() as current:
        check_outputs(outputs, force, inputs)
        yield current


def atomic_write(path: str | os.PathLike, data: bytes | str, force: bool = False) -> Path:
    """Write ``data`` to ``path`` atomically (a temporary beside it, then a rename).

    Inside a :func:`transaction` an output it planned is staged and committed
    with the others; any other path (a cache entry) is written at once.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    active = _ACTIVE.get()
    if active is not None and active.holds(path):
        return active.stage(path, payload, force)
    single = Transaction()
    try:
        target = single.stage(path, payload, force)
        single.commit()
    finally:
        single.discard()
    return target
