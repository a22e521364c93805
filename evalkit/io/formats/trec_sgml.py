"""TREC SGML collections: ``<DOC><DOCNO>id</DOCNO> ... </DOC>`` (TREC collections, MEDLINE ``MED.ALL``)."""
from __future__ import annotations

import re
from typing import Iterator, Mapping

from evalkit.core.errors import InputError
from evalkit.io.formats.collections import Probe, Record, register_collection, text_reader
from evalkit.io.textio import LoadedFile

_DOC_TAG = re.compile(r"<(/?)DOC>", re.I)
_DOCNO_OPEN = re.compile(r"<DOCNO>", re.I)
_DOCNO_CLOSE = re.compile(r"</DOCNO>", re.I)
_TITLE_OPEN = re.compile(r"<(TITLE|HEADLINE|HL)>", re.I)
_TAG = re.compile(r"<[^<>]*>")


def _element(body: str, opening: re.Pattern, closing: re.Pattern, what: str, label: str, line: int) -> tuple[str, str] | None:
    """(the text inside the first ``what`` element, the body without it), ``None`` without one; linear scans only."""
    start = opening.search(body)
    if start is None:
        return None
    end = closing.search(body, start.end())
    if end is None:
        raise InputError(label, f"<{what}> without </{what}> in the <DOC> starting here", line)
    return body[start.end():end.start()], body[: start.start()] + " " + body[end.end():]


def _outside(text: str, start: int, end: int, label: str) -> None:
    """Only white space may stand between documents."""
    gap = text[start:end]
    if gap.strip():
        stray = start + len(gap) - len(gap.lstrip())
        raise InputError(label, "text outside <DOC> ... </DOC>", text.count("\n", 0, stray) + 1)


def records(loaded: LoadedFile, mapping: Mapping[str, str]) -> Iterator[Record]:
    """``<DOC><DOCNO>id</DOCNO> ... </DOC>`` read strictly, in one linear pass: an unclosed or nested
    ``<DOC>``, a stray ``</DOC>``, text outside documents and a document without exactly one DOCNO are
    errors naming the line (never documents merged or lost)."""
    text, label = loaded.text(), loaded.label
    line, counted, after_last = 1, 0, 0
    open_at: int | None = None
    open_line = 0
    for tag in _DOC_TAG.finditer(text):
        line += text.count("\n", counted, tag.start())
        counted = tag.start()
        if tag.group(1) != "/":
            if open_at is not None:
                raise InputError(label, f"<DOC> inside the <DOC> opened on line {open_line} (missing </DOC>)", line)
            _outside(text, after_last, tag.start(), label)
            open_at, open_line = tag.end(), line
            continue
        if open_at is None:
            raise InputError(label, "</DOC> without an open <DOC>", line)
        body = text[open_at: tag.start()]
        open_at, after_last = None, tag.end()
        docno = _element(body, _DOCNO_OPEN, _DOCNO_CLOSE, "DOCNO", label, open_line)
        if docno is None:
            raise InputError(label, "<DOC> without <DOCNO>", open_line)
        doc_id, rest = docno[0].strip(), docno[1]
        if not doc_id:
            raise InputError(label, "empty <DOCNO>", open_line)
        if _DOCNO_OPEN.search(rest):
            raise InputError(label, "<DOC> with two <DOCNO>s", open_line)
        title = ""
        match = _TITLE_OPEN.search(rest)
        if match:
            closing = re.compile(f"</{re.escape(match.group(1))}>", re.I)
            element = _element(rest, _TITLE_OPEN, closing, match.group(1), label, open_line)
            if element is not None:
                title, rest = " ".join(_TAG.sub(" ", element[0]).split()), element[1]
        yield open_line, {"_id": doc_id, "title": title, "text": " ".join(_TAG.sub(" ", rest).split())}
    if open_at is not None:
        raise InputError(label, "<DOC> never closed (missing </DOC>)", open_line)
    _outside(text, after_last, len(text), label)


def sniff(probe: Probe) -> bool:
    return probe.text[:5].upper() == "<DOC>"


FORMAT = register_collection("trec-sgml", "TREC SGML: <DOC><DOCNO>id</DOCNO> ... </DOC> (MEDLINE MED.ALL)", sniff, text_reader("trec-sgml", records))
