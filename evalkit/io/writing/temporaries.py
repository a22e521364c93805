"""The temporaries an output is staged in (see :mod:`evalkit.io.transactions`): unnamed where the system allows, named elsewhere.

An unnamed temporary is ``open(folder, O_TMPFILE)`` (Linux: ext4, xfs, btrfs,
tmpfs), given its name by ``linkat`` of ``/proc/self/fd/N``: a process killed
while it writes leaves nothing. A named one is ``.NAME.evalkit-HOST-PID-RANDOM.tmp``
(``.old``: a replaced file kept until the commit is through); the leftovers of
a dead process of this host, or over a day old, are removed by the next write
into their folder (:func:`clean_stale_temporaries`).
"""
from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import time
import zlib
from pathlib import Path

STALE_SECONDS = 24 * 3600
NAME_ROOM = 120  # characters of the target's name kept in a temporary's name (NAME_MAX is 255 bytes)
_HOST = f"{zlib.crc32((os.uname().nodename if hasattr(os, 'uname') else os.environ.get('COMPUTERNAME', '')).encode()):08x}"
_TEMPORARY = re.compile(r"\A\..*\.evalkit-(?P<host>[0-9a-f]{8})-(?P<pid>[0-9]+)-[0-9a-f]{8}\.(?:tmp|old)\Z", re.DOTALL)


def temporary_name(target: Path, kind: str) -> Path:
    """A fresh hidden name beside ``target``: ``.NAME.evalkit-HOST-PID-RANDOM.KIND``."""
    return target.with_name(f".{target.name[:NAME_ROOM]}.evalkit-{_HOST}-{os.getpid()}-{os.urandom(4).hex()}.{kind}")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: someone else's live process
        return True
    return True


def clean_stale_temporaries(folder: str | os.PathLike) -> list[str]:
    """Remove evalkit's own leftovers in ``folder``: temporaries of a dead process of this host, or over a day old."""
    removed: list[str] = []
    now = time.time()
    try:
        entries = list(os.scandir(os.fspath(folder)))
    except OSError:
        return removed
    for entry in entries:
        match = _TEMPORARY.match(str(entry.name))
        folder_left = entry.is_dir(follow_symlinks=False)  # a staged folder (evalkit.io.writing.folders)
        if not match or not (folder_left or entry.is_file(follow_symlinks=False)):
            continue
        try:
            age = now - entry.stat(follow_symlinks=False).st_mtime
            mine = match["host"] == _HOST
            if age > STALE_SECONDS or (mine and int(match["pid"]) != os.getpid() and not _alive(int(match["pid"]))):
                if folder_left:
                    shutil.rmtree(entry.path)
                else:
                    os.unlink(entry.path)
                removed.append(str(entry.path))
        except OSError:
            continue
    return removed


_NO_UNNAMED = {errno.EOPNOTSUPP, errno.ENOTSUP, errno.EISDIR, errno.EINVAL, errno.ENOENT, errno.EPERM, errno.EACCES}


def unnamed_temporary(folder: str) -> int | None:
    """An unnamed file in ``folder`` (``O_TMPFILE``), or None where the system or the file system has none."""
    flag = getattr(os, "O_TMPFILE", 0)
    if not flag or not os.path.isdir("/proc/self/fd"):
        return None
    try:
        return os.open(folder, flag | os.O_RDWR | getattr(os, "O_CLOEXEC", 0), 0o644)
    except OSError as exc:
        if exc.errno in _NO_UNNAMED:
            return None
        raise


def link_into_place(fd: int, target: Path) -> None:
    """Give the unnamed file ``fd`` the name ``target``; fails with ``EEXIST`` if it exists (never clobbers).

    ``linkat(AT_FDCWD, "/proc/self/fd/N", dirfd, name, AT_SYMLINK_FOLLOW)``: os.link calls linkat with
    the flag when a directory fd is given (plain link(2) would link the /proc symlink itself).
    """
    folder = os.open(str(target.parent) or ".", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.link(f"/proc/self/fd/{fd}", target.name, dst_dir_fd=folder, follow_symlinks=True)
    except OSError as exc:  # blamed on the target, not on /proc
        raise type(exc)(exc.errno, exc.strerror, os.fspath(target)) from None
    finally:
        os.close(folder)


def keep(target: Path) -> Path:
    """A hard link to (or, where the file system has none, a copy of) ``target``, to put back if the commit fails."""
    kept = temporary_name(target, "old")
    try:
        os.link(target, kept)
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.EXDEV):
            raise
        import shutil

        shutil.copy2(target, kept)
    return kept


def remove_quietly(path: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def replace_with(target: Path, payload: bytes) -> None:
    """Write ``payload`` to ``target`` at once, replacing it atomically (a cache entry, not a command's output).

    Through an unnamed temporary where the system has one (a process killed while writing leaves nothing),
    a named one beside ``target`` elsewhere; the reader sees the old file or the new one, never a torn one.
    """
    target = Path(target)
    fd = unnamed_temporary(str(target.parent) or ".")
    named = temporary_name(target, "tmp")
    try:
        if fd is None:
            fd = os.open(named, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            with os.fdopen(fd, "wb") as handle:
                handle.write(payload)
            fd = None
        else:
            with os.fdopen(os.dup(fd), "wb") as handle:
                handle.write(payload)
            os.fchmod(fd, 0o644)
            link_into_place(fd, named)
        os.replace(named, target)
    except BaseException:
        remove_quietly(named)
        raise
    finally:
        if fd is not None:
            os.close(fd)
