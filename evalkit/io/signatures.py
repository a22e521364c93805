"""The first bytes that say how :func:`evalkit.io.textio.load` changes a file before its format reads it: a gzip or zip
container (unpacked), a UTF-8 byte order mark (dropped). A leaf module (no imports), so that the read-ahead thread
(:mod:`evalkit.io.readahead`, which :mod:`evalkit.io.textio` imports) knows them from the same place as the loader."""
from __future__ import annotations

GZIP_MAGIC = b"\x1f\x8b"
ZIP_MAGIC = b"PK\x03\x04"
EMPTY_ZIP_MAGIC = b"PK\x05\x06"
BOM = b"\xef\xbb\xbf"
CHANGED_BY_LOAD = (GZIP_MAGIC, ZIP_MAGIC, EMPTY_ZIP_MAGIC, BOM)  # load hands a reader other bytes than the file's
