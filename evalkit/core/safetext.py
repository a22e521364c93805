"""Untrusted text (file names, ids, document texts, run names) made safe where evalkit shows it.

A submission is a stranger's upload: its file name, ids and texts may hold
terminal escape sequences (``ESC ] 0 ; title BEL`` retitles the terminal,
``ESC [ 2 J`` clears it), a newline that forges a row of a table, Unicode
direction overrides that reorder what is read, or markup that runs as
script where Markdown is published (Jekyll, mkdocs, pandoc, GitHub).

- :func:`visible`: every control character (C0, DEL, C1) and direction
  override shown as an escape (``\\x1b``, ``\\n``, ``\\u202e``): for the terminal.
- :func:`markdown_text`: :func:`visible`, then every character with a meaning
  in Markdown or HTML escaped, so the text reads as written in any renderer:
  ``& < > | { } ~ $`` as HTML character references (``{`` too, so Jekyll's
  Liquid and mkdocs-macros never see ``{{``), and `` \\ ` * [ ] # `` with a
  backslash (CommonMark, GFM, Python-Markdown, kramdown and pandoc agree on
  these), ``_`` too except inside a word (``E5_HN_All``, never emphasis); a leading ``+``, ``-``, ``=`` or ``1.`` cannot start a list or a
  heading underline. Safe in paragraphs, headings, emphasis and table cells.
- :func:`latex_text`: :func:`visible`, then every character with a meaning
  to TeX (``\\ { } # $ % & _ ~ ^``, and ``< > | "`` that the default fonts
  misprint; ``[ ]`` braced so no row end reads them as its option) written as the command that prints it, and any character beyond
  Latin-1 and Latin Extended-A as ``[U+XXXX]`` (pdflatex has no glyph for it):
  ``\\input{/etc/passwd}`` prints as text, never runs.
- :func:`markdown_json`: JSON for a fenced block, ``< > & { }`` inside strings
  written as ``\\u`` escapes (the same value when parsed).
"""
from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

DIRECTION_MARKS = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_MARKDOWN = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "|": "&#124;", "{": "&#123;", "}": "&#125;", "~": "&#126;", "$": "&#36;",
             "\\": "\\\\", "`": "\\`", "*": "\\*", "[": "\\[", "]": "\\]", "#": "\\#"}
_MARKDOWN_TABLE = str.maketrans(_MARKDOWN)
_EDGE_UNDERSCORE = re.compile(r"(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")  # inside a word (E5_HN_All) no renderer reads emphasis
_LEADING = re.compile(r"\A(\s*)([+\-=]|[0-9]+(?=[.)]))")
_LATEX = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "#": r"\#", "$": r"\$", "%": r"\%", "&": r"\&", "_": r"\_",
          "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}",
          '"': r"\textquotedbl{}", "-": "-{}", "`": r"\textasciigrave{}", "'": r"\textquotesingle{}",
          "[": "{[}", "]": "{]}"}
_LATEX_TABLE = str.maketrans(_LATEX)
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_JSON_UNSAFE = str.maketrans({c: f"\\u{ord(c):04x}" for c in "<>&{}"})


@lru_cache(maxsize=4)
def _visible_table(keep: str) -> dict[int, str]:
    table = {}
    for code in (*range(0x20), *range(0x7F, 0xA0), *DIRECTION_MARKS):
        char = chr(code)
        if char in keep:
            continue
        table[code] = _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
    return table


def visible(text: object, keep: str = "") -> str:
    """``text`` with control characters and direction overrides shown as escapes (those in ``keep`` left as they are)."""
    return str(text).translate(_visible_table(keep))


def markdown_text(text: object) -> str:
    """``text`` as literal Markdown: controls made visible, Markdown and HTML syntax escaped (see the module docstring)."""
    escaped = _EDGE_UNDERSCORE.sub(r"\\_", visible(text).translate(_MARKDOWN_TABLE))
    match = _LEADING.match(escaped)
    if match is None:
        return escaped
    cut = match.end() if match.group(2).isdigit() else match.start(2)  # "1." -> "1\.", "- x" -> "\- x"
    return f"{escaped[:cut]}\\{escaped[cut:]}"


def latex_text(text: object) -> str:
    """``text`` as literal LaTeX text (pdflatex, T1 fonts, textcomp): controls made visible, TeX syntax as the commands
    that print it, characters without a pdflatex glyph as ``[U+XXXX]`` (see the module docstring)."""
    shown = visible(text).translate(_LATEX_TABLE)
    return "".join(c if ord(c) < 0x80 or 0xA0 <= ord(c) < 0x180 else f"[U+{ord(c):04X}]" for c in shown)


def markdown_json(value: Any, **dumps: Any) -> str:
    """``json.dumps(value)`` with ``< > & { }`` inside strings as ``\\u`` escapes (safe in a fenced block anywhere)."""
    text = json.dumps(value, allow_nan=False, **dumps)
    return _JSON_STRING.sub(lambda m: m.group(0).translate(_JSON_UNSAFE), text)


def shown_path(path: object) -> str:
    """A file path as reports, pages and manifests show it: normalised (``runs/../x`` -> ``x``), relative to the folder
    the command ran in when inside it, ``evalkit/...`` inside evalkit's own installation (the demo's example files),
    ``~/...`` under the home folder: never an absolute home path in a published report."""
    import os

    text = os.fspath(path) if isinstance(path, (str, os.PathLike)) else str(path)
    if not text or not os.path.isabs(text):
        return os.path.normpath(text) if text else text
    text = os.path.normpath(text)
    for root, shown in ((os.getcwd(), ""), (os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), ""),
                        (os.path.expanduser("~"), "~")):
        if root and root != os.sep and (text == root or text.startswith(root.rstrip(os.sep) + os.sep)):
            relative = os.path.relpath(text, root)
            return os.path.join(shown, relative) if shown else relative
    return text
