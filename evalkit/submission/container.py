"""Opening a submission leniently: the container (zip, gzip), encoding, line ends.

Unlike :func:`evalkit.textio.load`, which refuses anything unusual, this
reports what an upload site would trip over as problems and still hands back
the text so the content can be checked too. Only files that cannot be read at
all (missing, not a zip although named one, a member escaping the archive)
raise :class:`~evalkit.errors.InputError` (exit code 2).
"""
from __future__ import annotations

import csv
import io
import os
import zipfile
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Iterator

from evalkit.errors import InputError
from evalkit.submission.problems import Problems
from evalkit.textio import BOM, EMPTY_ZIP_MAGIC, GZIP_MAGIC, ZIP_MAGIC, gunzip_bounded, read_input_bytes, read_zip_member

csv.field_size_limit(1 << 30)


@dataclass(frozen=True)
class SubmissionText:
    """The decoded text of a submission and where it came from."""

    path: str
    text: str
    member: str | None = None  # zip member name

    @property
    def label(self) -> str:
        return f"{self.path}/{self.member}" if self.member else self.path


def read_bytes(path: str | os.PathLike) -> bytes:
    """A regular file's bytes, bounded (:func:`evalkit.textio.read_input_bytes`)."""
    return read_input_bytes(path)


def _unzip(raw: bytes, path: str, member_name: str, problems: Problems) -> tuple[bytes, str] | None:
    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
    except zipfile.BadZipFile as exc:
        raise InputError(path, f"not a readable zip archive ({exc})") from None
    with archive:
        data, extras, folders = [], [], []
        for info in archive.infolist():
            pure = PurePosixPath(info.filename.replace("\\", "/"))
            if pure.is_absolute() or ".." in pure.parts:
                raise InputError(path, f"zip member {info.filename!r} has a path outside the archive")
            if pure.parts and pure.parts[0] == "__MACOSX" or pure.name.startswith("."):
                extras.append(info.filename)
            elif info.is_dir():
                folders.append(info.filename)
            else:
                data.append(info)
        if extras:
            problems.warning("zip layout", f"zip holds extra entries ({', '.join(extras[:3])}); upload sites may read them")
        if not data:
            problems.error("zip layout", "zip holds no file")
            return None
        if len(data) > 1:
            names = ", ".join(i.filename for i in data)
            problems.error("zip layout", f"zip holds {len(data)} files ({names}); it must hold exactly one")
            preferred = [i for i in data if PurePosixPath(i.filename).name == member_name]
            if len(preferred) != 1:
                return None
            data = preferred
        info = data[0]
        if folders or "/" in info.filename.replace("\\", "/"):
            problems.error("zip layout", f"zip holds a folder ({info.filename!r}); put {member_name} at the top level of the zip")
        elif info.filename != member_name:
            problems.warning("zip layout", f"zip member is {info.filename!r}; the official name is {member_name!r}")
        return read_zip_member(archive, info, path), info.filename


def decode_leniently(data: bytes, problems: Problems) -> str:
    """UTF-8 text with LF line ends; BOM, CRLF and bad bytes become problems."""
    if data.startswith(BOM):
        problems.warning("encoding", "starts with a UTF-8 byte order mark (BOM)", 1)
        data = data[len(BOM):]
    if b"\r" in data:
        problems.warning("encoding", "Windows (CRLF) or old Mac (CR) line ends", data.count(b"\n", 0, data.index(b"\r")) + 1)
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    for number, line in enumerate(data.split(b"\n"), start=1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.error("encoding", f"not UTF-8 text (byte 0x{line[exc.start]:02x})", number)
    return data.decode("utf-8", errors="replace")


def open_submission(path: str | os.PathLike, member_name: str, problems: Problems) -> SubmissionText | None:
    """Read ``path`` (plain, gzip or zip) leniently; ``None`` when no content can be checked."""
    path = str(path)
    raw = read_bytes(path)
    member = None
    if raw.startswith(GZIP_MAGIC):
        problems.warning("container", "gzip-compressed; upload sites expect a plain file or a zip")
        raw = gunzip_bounded(raw, path)
    elif raw.startswith(ZIP_MAGIC) or raw.startswith(EMPTY_ZIP_MAGIC):
        unzipped = _unzip(raw, path, member_name, problems)
        if unzipped is None:
            return None
        raw, member = unzipped
        problems.label = f"{path}/{member}"
    elif path.lower().endswith(".zip"):
        problems.error("container", "named .zip but is not a zip archive")
    text = decode_leniently(raw, problems)
    if not text.strip():
        problems.error("content", "empty file")
        return None
    return SubmissionText(path=path, text=text, member=member)


def delimited_records(text: str, delimiter: str, problems: Problems) -> Iterator[tuple[int, list[str]]]:
    """``(line, fields)`` for every non-blank record, header included; quoting errors become problems."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    last = 0
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            problems.error("quoting", f"malformed quoting ({exc})", last + 1)
            last = reader.line_num
            continue
        start, last = last + 1, reader.line_num
        if fields and any(f.strip() for f in fields):
            yield start, fields


def header_and_records(
    text: str, official: str, other: str, problems: Problems, complaint: str
) -> tuple[str, int, list[str], Iterator[tuple[int, list[str]]]] | None:
    """``(delimiter, header line, header, records)`` of a delimited submission, or None without a header.

    The delimiter is ``official`` unless the first non-blank line has only
    ``other``; that is read anyway and reported as ``complaint`` on line 1.
    """
    first = next(line for line in text.split("\n") if line.strip())
    delimiter = official
    if official not in first and other in first:
        delimiter = other
        problems.error("delimiter", complaint, 1)
    records = delimited_records(text, delimiter, problems)
    head = next(records, None)
    if head is None:
        problems.error("content", "no header line", 1)
        return None
    return delimiter, head[0], head[1], records
