"""Opening a submission leniently: the container (zip, gzip), encoding, line ends.

Unlike :func:`evalkit.io.textio.load`, which refuses anything unusual, this
reports what an upload site would trip over as problems and still hands back
the text so the content can be checked too. Only files that cannot be read
at all (missing, not a zip although named one, a member escaping the
archive) raise :class:`~evalkit.core.errors.InputError` (exit code 2). Both read
through the same :mod:`evalkit.io.textio` layer (bounded reading, gzip, zip
member names, BOM / line ends / UTF-8); only the policy differs.
"""
from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Iterator

from evalkit.core.errors import listed, shown, unquoted
from evalkit.submission.problems import Problems
from evalkit.io.textio import container_of, gunzip_bounded, normalise, open_zip, read_input_bytes, read_zip_member, utf8_errors, zip_entries

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


def _unzip(raw: bytes, path: str, member_name: str, problems: Problems) -> tuple[bytes, str] | None:
    with open_zip(raw, path) as archive:
        entries = zip_entries(archive, path)
        data = entries.data
        if entries.extras:
            problems.warning("zip layout", f"zip holds extra entries ({listed(entries.extras, 3, unquoted)}); upload sites may read them")
        if not data:
            problems.error("zip layout", "zip holds no file")
            return None
        if len(data) > 1:
            names = listed((i.filename for i in data), 5, unquoted, total=len(data))
            problems.error("zip layout", f"zip holds {len(data):,} files ({names}); it must hold exactly one")
            preferred = [i for i in data if PurePosixPath(i.filename).name == member_name]
            if len(preferred) != 1:
                return None
            data = preferred
        info = data[0]
        if entries.folders or "/" in info.filename.replace("\\", "/"):
            problems.error("zip layout", f"zip holds a folder ({shown(info.filename)}); put {member_name} at the top level of the zip")
        elif info.filename != member_name:
            problems.warning("zip layout", f"zip member is {shown(info.filename)}; the official name is {member_name!r}")
        return read_zip_member(archive, info, path), info.filename


def decode_leniently(data: bytes, problems: Problems) -> str:
    """UTF-8 text with LF line ends; BOM, CRLF and bad bytes become problems."""
    normalised = normalise(data)
    if normalised.had_bom:
        problems.warning("encoding", "starts with a UTF-8 byte order mark (BOM)", 1)
    if normalised.first_cr_line is not None:
        problems.warning("encoding", "Windows (CRLF) or old Mac (CR) line ends", normalised.first_cr_line)
    data = normalised.data
    bad = False
    for line, byte in utf8_errors(normalised):
        problems.error("encoding", f"not UTF-8 text (byte 0x{byte:02x})", line)
        bad = True
    return data.decode("utf-8", errors="replace") if bad else data.decode("utf-8")


def open_submission(path: str | os.PathLike, member_name: str, problems: Problems) -> SubmissionText | None:
    """Read ``path`` (plain, gzip or zip) leniently; ``None`` when no content can be checked."""
    path = str(path)
    raw = read_input_bytes(path)
    member = None
    container = container_of(raw)
    if container == "gzip":
        problems.warning("container", "gzip-compressed; upload sites expect a plain file or a zip")
        raw = gunzip_bounded(raw, path)
    elif container == "zip":
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
