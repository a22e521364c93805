"""Strict parsing of ranked-id list literals such as ``['a', 'b']`` or ``["a","b"]``.

Nothing is ever evaluated: a fast regular expression handles the common
forms; anything else goes through :func:`ast.parse` and is accepted only if
the tree is a bare list (or tuple) of string constants.
"""
from __future__ import annotations

import ast
import re

_ITEM = r"""(?:'[^'\\\n]*'|"[^"\\\n]*")"""
# linear: each run of blanks has one place to go (``\s*,?\s*`` split a run of blanks between two groups in n ways)
_SIMPLE_LIST = re.compile(rf"\[\s*(?:{_ITEM}(?:\s*,\s*{_ITEM})*\s*(?:,\s*)?)?\]")
_ITEM_RE = re.compile(r"""'([^'\\\n]*)'|"([^"\\\n]*)\"""")
_SINGLE_RE = re.compile(r"""'([^'\\\n]*)'""")  # one group: findall gives the strings themselves


class ListLiteralError(ValueError):
    """The text is not a list of strings."""


def parse_id_list(text: str) -> list[str]:
    """Parse a list literal of strings; raise :class:`ListLiteralError` otherwise.

    >>> parse_id_list("['a1', 'b2']")
    ['a1', 'b2']
    >>> parse_id_list('["a1","b2"]')
    ['a1', 'b2']
    """
    text = text.strip()
    if _SIMPLE_LIST.fullmatch(text):
        if '"' not in text:  # the common ['a', 'b'] form
            return _SINGLE_RE.findall(text)
        return [single or double for single, double in _ITEM_RE.findall(text)]
    if not text.startswith("["):
        raise ListLiteralError("is not a list literal")
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        raise ListLiteralError("is not a valid list literal") from None
    node = tree.body
    if not isinstance(node, (ast.List, ast.Tuple)):
        raise ListLiteralError("is not a plain list literal (expressions are never evaluated)")
    from evalkit.core.input_rules import ValueProblem, utf8_text

    items = []
    for element in node.elts:
        if not (isinstance(element, ast.Constant) and isinstance(element.value, str)):
            raise ListLiteralError("holds an item that is not a string")
        try:  # an escape such as '\\ud800' writes a lone surrogate, which no UTF-8 text holds
            items.append(utf8_text(element.value))
        except ValueProblem:
            raise ListLiteralError("holds an item that is not UTF-8 text (an escape of a lone surrogate)") from None
    return items


def format_id_list(ids: list[str]) -> str:
    """The official 4b spelling: a Python list literal in single quotes."""
    return repr([str(i) for i in ids])
