"""One reading layer: the strict reader (textio.load) and the lenient one (open_submission) share the
container, member-name and decoding code, so they agree on what is unsafe and on what the text is."""
from __future__ import annotations

import gzip
import io
import zipfile

import pytest

from evalkit.core.errors import InputError
from evalkit.submission.container import open_submission
from evalkit.submission.problems import Problems
from evalkit.io.textio import load

TEXT = "post_id\tpreds\n1\t['a', 'b']\n"


def zip_bytes(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(zipfile.ZipInfo(name), data)
    return buffer.getvalue()


def lenient(path):
    problems = Problems(str(path))
    return open_submission(path, "predictions.tsv", problems), problems


@pytest.mark.parametrize("member", ["../predictions.tsv", "/predictions.tsv", "C:predictions.tsv", "C:\\x\\predictions.tsv", "a/../../p.tsv"])
def test_both_readers_refuse_a_member_outside_the_archive(tmp_path, member):
    path = tmp_path / "evil.zip"
    path.write_bytes(zip_bytes({member: TEXT.encode()}))
    for read in (load, lenient):
        with pytest.raises(InputError, match="has a path outside the archive"):
            read(path)


@pytest.mark.parametrize(
    "data",
    [TEXT.encode(), b"\xef\xbb\xbf" + TEXT.encode(), TEXT.replace("\n", "\r\n").encode(), TEXT.replace("\n", "\r").encode(),
     gzip.compress(TEXT.encode()), zip_bytes({"predictions.tsv": TEXT.encode(), "__MACOSX/._predictions.tsv": b"junk"})],
    ids=["plain", "bom", "crlf", "cr", "gzip", "zip"],
)
def test_both_readers_give_the_same_text(tmp_path, data):
    path = tmp_path / "sub.tsv"
    path.write_bytes(data)
    submission, _ = lenient(path)
    assert load(path).text() == submission.text == TEXT


def test_both_readers_name_the_same_bad_byte_and_line(tmp_path):
    path = tmp_path / "latin.tsv"
    path.write_bytes(b"\xef\xbb\xbfpost_id\tpreds\r\n1\t['a']\r\n2\t['\xe9']\r\n3\t['\xff']\n")
    with pytest.raises(InputError) as strict:
        load(path)
    _, problems = lenient(path)
    errors = [(p.line, p.message) for p in problems.errors if p.kind == "encoding"]
    assert strict.value.one_line().endswith(":3: not UTF-8 text (byte 0xe9)")
    assert errors == [(3, "not UTF-8 text (byte 0xe9)"), (4, "not UTF-8 text (byte 0xff)")]
