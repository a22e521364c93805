"""Zip archives as Codabench sees them, read and extracted with bounds.

A bundle or a submission is a stranger's upload: its members are read in
bounded chunks (the declared sizes are not trusted), their number is capped,
and a member lands where ``zipfile.ZipFile.extractall`` (Codabench's own
extraction, in the unpacker and the worker) would put it, which never leaves
the target folder. As there, a symbolic link member becomes a small regular
file holding the link's target; nothing is ever linked.
"""
from __future__ import annotations

import io
import os
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path

from evalkit.competition.codabench import extracted_name
from evalkit.core.errors import InputError
from evalkit.io.textio import CHUNK, max_input_bytes, read_input_bytes, read_zip_member

MAX_MEMBERS = 10_000  # members of one archive (a zip of a million empty files is refused before any work)


@dataclass
class Archive:
    """A zip's members by the name extraction gives them (a later duplicate wins, as it overwrites on disk)."""

    label: str  # how messages name the archive
    zip: zipfile.ZipFile
    files: dict[str, zipfile.ZipInfo]
    folders: set[str]

    @classmethod
    def open(cls, path: str | os.PathLike, label: str | None = None) -> "Archive":
        raw = read_input_bytes(path)
        return cls.from_bytes(raw, label or str(path))

    @classmethod
    def from_bytes(cls, raw: bytes, label: str) -> "Archive":
        try:
            archive = zipfile.ZipFile(io.BytesIO(raw))
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            raise InputError(label, f"not a readable zip archive ({exc})") from None
        infos = archive.infolist()
        if len(infos) > MAX_MEMBERS:
            raise InputError(label, f"holds {len(infos):,} members; at most {MAX_MEMBERS:,} are read")
        files: dict[str, zipfile.ZipInfo] = {}
        folders: set[str] = set()
        for info in infos:
            name = extracted_name(info.filename)
            if name is None:
                continue
            parents = name.split("/")[:-1]
            folders.update("/".join(parents[: i + 1]) for i in range(len(parents)))
            if info.is_dir():
                folders.add(name)
            else:
                files[name] = info
        return cls(label, archive, files, folders)

    def is_file(self, name: str) -> bool:
        return name in self.files

    def is_folder(self, name: str) -> bool:
        return name == "" or name in self.folders

    def under(self, folder: str) -> dict[str, zipfile.ZipInfo]:
        """The files below ``folder`` (``""``: all), named relative to it."""
        if not folder:
            return dict(self.files)
        prefix = folder.rstrip("/") + "/"
        return {name[len(prefix):]: info for name, info in self.files.items() if name.startswith(prefix)}

    def read(self, name: str, limit: int | None = None) -> bytes:
        return read_zip_member(self.zip, self.files[name], self.label, limit, advice="a zip bomb?")

    def is_symlink(self, name: str) -> bool:
        return stat.S_ISLNK(self.files[name].external_attr >> 16)

    def close(self) -> None:
        self.zip.close()


def extract(archive: Archive, target: str | os.PathLike, limit: int | None = None) -> list[str]:
    """Extract every member under ``target`` as ``extractall`` names them, at most ``limit`` bytes in all
    (default: evalkit's input limit), counted while decompressing; the names written, in order."""
    limit = max_input_bytes() if limit is None else limit
    root = Path(target)
    total = 0
    written = []
    for folder in sorted(archive.folders):
        (root / folder).mkdir(parents=True, exist_ok=True)
    for name, info in archive.files.items():
        path = root / name
        if path.is_dir():
            raise InputError(archive.label, f"member {info.filename!r} is also a folder of the archive")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with archive.zip.open(info) as source, open(path, "wb") as sink:  # a fresh folder: nothing to follow
                while True:
                    piece = source.read(CHUNK)
                    if not piece:
                        break
                    total += len(piece)
                    if total > limit:
                        raise InputError(archive.label, f"expands beyond {limit:,} bytes (a zip bomb?)")
                    sink.write(piece)
        except (zipfile.BadZipFile, RuntimeError, OSError, EOFError, NotImplementedError, ValueError) as exc:
            raise InputError(archive.label, f"member {info.filename!r} cannot be extracted ({exc})") from None
        written.append(name)
    return written
