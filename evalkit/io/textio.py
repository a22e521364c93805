"""Reading input files safely and writing outputs atomically.

Inputs may be plain, gzip-compressed or a Codalab zip holding exactly one
file; they must be UTF-8 (a BOM is dropped, CRLF becomes LF). Only regular
files are read (a FIFO, ``/dev/zero`` or a socket is refused, never waited
on), and no input, read or decompressed, may exceed :func:`max_input_bytes`
(1 GiB by default; ``evalkit --max-input-size 4G ...`` or the environment
variable ``EVALKIT_MAX_INPUT_SIZE`` raise it), so a zip or gzip bomb is
refused with one line instead of exhausting memory. Outputs are written by
:mod:`evalkit.io.transactions`.
"""
from __future__ import annotations

import hashlib
import io
import os
import re
import stat
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Iterator

from evalkit.io import readahead
from evalkit.core.digest import BACKGROUND_DIGEST_BYTES, Digest, PendingDigest, taken
from evalkit.core.errors import InputError
from evalkit.io.signatures import BOM, EMPTY_ZIP_MAGIC, GZIP_MAGIC, ZIP_MAGIC

if TYPE_CHECKING:  # pragma: no cover - zipfile is imported where a zip is read
    import zipfile

DEFAULT_MAX_INPUT_BYTES = 1 << 30
MAX_INPUT_ENV = "EVALKIT_MAX_INPUT_SIZE"
CHUNK = 1 << 20
_SIZE = re.compile(r"([0-9]+(?:\.[0-9]+)?)\s*([kmgt]?)i?b?\Z", re.IGNORECASE)  # on stripped text: linear


def parse_size(text: str) -> int:
    """Bytes in ``"1073741824"``, ``"512M"``, ``"4G"``, ``"2GiB"`` (binary units)."""
    from evalkit.core.errors import UsageError

    from evalkit.core.errors import shown

    match = _SIZE.match(str(text).strip())
    if not match or float(match.group(1)) <= 0:
        raise UsageError(f"input size limit {shown(text)}: write a positive size such as 512M, 4G or 2147483648")
    unit = {"": 0, "k": 10, "m": 20, "g": 30, "t": 40}[match.group(2).lower()]
    size = float(match.group(1)) * (1 << unit)
    if not size < 1 << 62:  # also infinity: float('9' * 400)
        raise UsageError(f"input size limit {shown(text)} is beyond any file (at most 4E)")
    return int(size)


def max_input_bytes() -> int:
    """The largest input evalkit reads or decompresses (``EVALKIT_MAX_INPUT_SIZE``, default 1 GiB)."""
    configured = os.environ.get(MAX_INPUT_ENV)
    return parse_size(configured) if configured else DEFAULT_MAX_INPUT_BYTES


RAISE_LIMIT = "raise it with evalkit --max-input-size SIZE or EVALKIT_MAX_INPUT_SIZE"


def _too_large(path: str, what: str, limit: int, advice: str = RAISE_LIMIT) -> InputError:
    return InputError(path, f"{what} is larger than the input limit of {limit:,} bytes ({advice})")


def check_regular(path: str | os.PathLike) -> os.stat_result:
    """``os.stat`` of an input that must be a regular file (one line for a folder, FIFO, device or socket)."""
    path = str(path)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except OSError as exc:
        raise InputError(path, f"cannot read ({exc.strerror or exc})") from None
    if stat.S_ISDIR(info.st_mode):
        raise InputError(path, "is a folder, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise InputError(path, "is not a regular file (a FIFO, device or socket); evalkit reads only regular files")
    return info


def read_input_bytes(path: str | os.PathLike, limit: int | None = None) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (default :func:`max_input_bytes`)."""
    path = str(path)
    limit = max_input_bytes() if limit is None else limit
    info = check_regular(path)
    if info.st_size > limit:
        raise _too_large(path, f"the file ({info.st_size:,} bytes)", limit)
    try:
        with open(path, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):  # replaced between stat and open
                raise InputError(path, "is not a regular file")
            data = handle.read(limit + 1)
    except IsADirectoryError:
        raise InputError(path, "is a folder, not a file") from None
    except MemoryError:
        raise InputError(path, "not enough memory to read it") from None
    except OSError as exc:
        raise InputError(path, f"cannot read ({exc.strerror or exc})") from None
    if len(data) > limit:
        raise _too_large(path, "the file", limit)
    return data


def gunzip_bounded(raw: bytes, path: str, limit: int | None = None) -> bytes:
    """Decompress gzip data (several members too), refusing more than ``limit`` bytes of output."""
    import zlib

    limit = max_input_bytes() if limit is None else limit
    out = bytearray()
    data = raw
    try:
        while data:
            engine = zlib.decompressobj(wbits=31)
            pending = data
            while pending:
                out += engine.decompress(pending, CHUNK)
                if len(out) > limit:
                    raise _too_large(path, "the decompressed gzip data", limit)
                pending = engine.unconsumed_tail
            while not engine.eof:
                piece = engine.decompress(b"", CHUNK)
                if not piece:
                    raise InputError(path, "broken gzip data (truncated)")
                out += piece
                if len(out) > limit:
                    raise _too_large(path, "the decompressed gzip data", limit)
            data = engine.unused_data.lstrip(b"\0")  # trailing zero padding is allowed (as gzip does)
            if data and not data.startswith(GZIP_MAGIC):
                break  # trailing garbage after the last member is ignored, as gzip -d warns and does
    except zlib.error as exc:
        raise InputError(path, f"broken gzip data ({exc})") from None
    except MemoryError:
        raise InputError(path, "not enough memory to decompress it") from None
    return bytes(out)


def read_zip_member(archive: zipfile.ZipFile, member: zipfile.ZipInfo, path: str, limit: int | None = None,
                    advice: str = RAISE_LIMIT) -> bytes:
    """One member's bytes, read in chunks and refused beyond ``limit`` whatever size the archive declares
    (``advice``: what the refusal suggests, e.g. to a participant who cannot raise the limit)."""
    import zipfile
    import zlib

    limit = max_input_bytes() if limit is None else limit
    if member.file_size > limit:
        raise _too_large(path, f"zip member {member.filename!r} ({member.file_size:,} bytes)", limit, advice)
    out = bytearray()
    try:
        with archive.open(member) as handle:
            while True:
                piece = handle.read(CHUNK)
                if not piece:
                    break
                out += piece
                if len(out) > limit:
                    raise _too_large(path, f"zip member {member.filename!r}", limit, advice)
    except (zipfile.BadZipFile, RuntimeError, OSError, EOFError, zlib.error, NotImplementedError) as exc:
        raise InputError(path, f"cannot read zip member {member.filename!r} ({exc})") from None
    except MemoryError:
        raise InputError(path, "not enough memory to decompress it") from None
    return bytes(out)


@dataclass(frozen=True, init=False)
class LoadedFile:
    """The decoded content of one input file.

    ``sha256`` (of the file as stored on disk) may still be computing on a
    second thread when the file is handed to its reader: reading it waits.
    """

    path: str
    data: bytes  # normalised bytes: no BOM, LF line ends, valid UTF-8
    member: str | None  # zip member name, if read from a zip

    def __init__(self, path: str, data: bytes, sha256: "str | PendingDigest", member: str | None = None) -> None:
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "data", data)
        object.__setattr__(self, "member", member)
        object.__setattr__(self, "_sha256", sha256)

    @property
    def digest(self) -> "str | PendingDigest":
        """The sha256, or what gives it when asked (:class:`~evalkit.data.Source` takes it so: not waited for here)."""
        return self.__dict__["_sha256"]

    @property
    def sha256(self) -> str:
        digest = taken(self.__dict__["_sha256"])  # waits while it is taken on a second thread
        object.__setattr__(self, "_sha256", digest)
        return digest

    @property
    def label(self) -> str:
        """How errors name this input: ``file.zip/predictions.tsv`` for zip members."""
        return f"{self.path}/{self.member}" if self.member else self.path

    def text(self) -> str:
        return self.data.decode("utf-8")

    def prefix(self) -> tuple[bytes, bool]:
        """The first bytes held and whether they are all of them (here: the whole; a run judged from its file holds
        only its ends, :class:`evalkit.io.prejudged.StreamedFile`)."""
        return self.data, True

    def suffix(self) -> tuple[bytes, bool]:
        """The last bytes held and whether they are all of them (as :meth:`prefix`)."""
        return self.data, True


@dataclass(frozen=True)
class ZipEntries:
    """A zip's members sorted by what they hold (every name already checked to stay inside the archive)."""

    data: list[zipfile.ZipInfo]  # files that hold data
    extras: list[str]  # macOS resource forks (``__MACOSX/``) and dotfiles
    folders: list[str]  # folder entries


def zip_entries(archive: zipfile.ZipFile, path: str) -> ZipEntries:
    """Sort the members of ``archive``; raise on a name that would escape the extraction folder.

    An absolute name, a ``..`` part or a drive letter (``C:...``) is refused,
    and so is a member that is not a plain file or folder (a symlink, which
    unzipped could point at the gold, a FIFO or a device: Unix mode bits in
    the member's external attributes), whichever reader (strict or lenient)
    opens the archive.
    """
    data, extras, folders = [], [], []
    for info in archive.infolist():
        name = info.filename
        pure = PurePosixPath(name.replace("\\", "/"))
        if pure.is_absolute() or ".." in pure.parts or (len(name) > 1 and name[1] == ":"):
            raise InputError(path, f"zip member {name!r} has a path outside the archive")
        kind = _special_kind(info)
        if kind:
            raise InputError(path, f"zip member {name!r} is {kind}, not a plain file; evalkit reads only plain files from a zip")
        if (pure.parts and pure.parts[0] == "__MACOSX") or pure.name.startswith("."):
            extras.append(name)
        elif info.is_dir():
            folders.append(name)
        else:
            data.append(info)
    return ZipEntries(data, extras, folders)


_SPECIAL_KINDS = {stat.S_IFLNK: "a symbolic link", stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a character device",
                  stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket"}
UNIX_SYSTEMS = (3, 19)  # ZipInfo.create_system of archives made on Unix / OS X (where external_attr >> 16 holds st_mode)


def _special_kind(info: zipfile.ZipInfo) -> str | None:
    """What a member is when its Unix mode says it is not a regular file or folder (None otherwise)."""
    mode = info.external_attr >> 16
    if info.create_system not in UNIX_SYSTEMS or not mode:
        return None
    return _SPECIAL_KINDS.get(stat.S_IFMT(mode))


def zip_data_members(archive: zipfile.ZipFile, path: str) -> list[zipfile.ZipInfo]:
    """Members that hold data: no folders, no macOS resource forks or dotfiles (see :func:`zip_entries`)."""
    return zip_entries(archive, path).data


def open_zip(raw: bytes, path: str) -> zipfile.ZipFile:
    """The zip archive in ``raw``; one line when it is not a readable zip."""
    import zipfile

    try:
        return zipfile.ZipFile(io.BytesIO(raw))
    except zipfile.BadZipFile as exc:
        raise InputError(path, f"not a readable zip archive ({exc})") from None


def container_of(raw: bytes) -> str | None:
    """``"gzip"`` or ``"zip"`` from the first bytes, ``None`` for a plain file."""
    if raw.startswith(GZIP_MAGIC):
        return "gzip"
    if raw.startswith(ZIP_MAGIC) or raw.startswith(EMPTY_ZIP_MAGIC):
        return "zip"
    return None


def _unzip_single(raw: bytes, path: str) -> tuple[bytes, str]:
    with open_zip(raw, path) as archive:
        members = zip_data_members(archive, path)
        if len(members) != 1:
            from evalkit.core.errors import listed

            names = listed((m.filename for m in members), total=len(members)) or "none"
            raise InputError(path, f"zip must hold exactly one predictions file, found {len(members):,} ({names})")
        member = members[0]
        return read_zip_member(archive, member, path), member.filename


@dataclass(frozen=True)
class Normalised:
    """Bytes with the BOM dropped and CRLF / CR line ends turned into LF, and what was changed."""

    data: bytes
    had_bom: bool
    first_cr_line: int | None  # the line (after the BOM) of the first CR, None without one
    ascii: bool  # every byte below 0x80 (then UTF-8), known from the same pass


def normalise(data: bytes) -> Normalised:
    """Drop a UTF-8 BOM and turn CRLF and lone CR line ends into LF."""
    from evalkit.native import kernels

    had_bom = data.startswith(BOM)
    if had_bom:
        data = data[len(BOM):]
    first_cr, ascii_only = kernels.text_marks(data)  # one pass for both (a CR's replacement keeps the bytes ASCII)
    first_cr_line = None
    if first_cr >= 0:
        first_cr_line = data.count(b"\n", 0, first_cr) + 1
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return Normalised(data, had_bom, first_cr_line, ascii_only)


def utf8_errors(normalised: Normalised) -> Iterator[tuple[int, int]]:
    """``(line, first bad byte)`` of each line of the normalised text that is not UTF-8 (nothing when all is)."""
    if normalised.ascii:  # ASCII is UTF-8: no str built (0.4 s at 177 MB), known from normalise's pass
        return
    data = normalised.data
    try:
        data.decode("utf-8")
        return
    except UnicodeDecodeError:
        pass
    for number, line in enumerate(data.split(b"\n"), start=1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield number, line[exc.start]


def decode_check(data: bytes, label: str) -> bytes:
    """Normalise BOM and line ends; raise with the line of the first non-UTF-8 byte."""
    normalised = normalise(data)
    for line, byte in utf8_errors(normalised):
        raise InputError(label, f"not UTF-8 text (byte 0x{byte:02x})", line)
    return normalised.data


def load(path: str | os.PathLike) -> LoadedFile:
    """Read a plain, gzip or single-member zip file as normalised UTF-8 bytes (those read ahead, if unchanged since)."""
    path = str(path)
    ahead = readahead.take(path, check_regular(path), max_input_bytes())
    raw = ahead[0] if ahead else read_input_bytes(path)
    digest = ahead[1] if ahead else Digest(raw) if len(raw) >= BACKGROUND_DIGEST_BYTES else hashlib.sha256(raw).hexdigest()
    member = None
    container = container_of(raw)
    if container == "gzip":
        raw = gunzip_bounded(raw, path)
    elif container == "zip":
        raw, member = _unzip_single(raw, path)
    label = f"{path}/{member}" if member else path
    return LoadedFile(path=path, data=decode_check(raw, label), sha256=digest, member=member)


def parse_json(text: str | bytes, label: str, line: int | None = None, pairs_hook=None):
    """``json.loads`` with every failure as one :class:`InputError` line (bad syntax, nesting too deep, or a
    ``ValueError`` of ``pairs_hook``, the ``object_pairs_hook`` that may refuse an object)."""
    import json

    try:
        return json.loads(text, object_pairs_hook=pairs_hook)
    except json.JSONDecodeError as exc:
        raise InputError(label, f"not valid JSON ({exc.msg})", line if line is not None else exc.lineno) from None
    except ValueError as exc:  # the hook's refusal
        raise InputError(label, str(exc), line) from None
    except RecursionError:
        raise InputError(label, "JSON nested too deeply", line) from None
    except UnicodeDecodeError:
        raise InputError(label, "not UTF-8 text", line) from None
