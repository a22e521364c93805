"""The relevance-judging prompt of ``evalkit judge``: a replaceable text file, how a pair fills it, and how an answer is read.

**The prompt file** (default: ``evalkit/judging/prompts/umbrela.txt``, the
UMBRELA prompt of Upadhyay et al. 2024, arXiv:2406.06519, after Thomas et
al. 2024, "Large language models can accurately predict searcher
preferences", SIGIR, https://doi.org/10.1145/3626772.3657707) is UTF-8 text
with a ``[system]`` section (optional) and a ``[user]`` section, each a
line of its own; ``{query}`` and ``{passage}`` in them are replaced by the
pair's texts in one pass (nothing else is a placeholder, so braces in a text
stay as they are and a query holding ``{passage}`` does not pull the passage
in). A file without section lines is one user message. Its sha256 (of the
bytes) names it in every judgment's provenance: ``llm:<model>@<sha256>``.

**Texts are data**: before filling in, a text's ``<<<``/``>>>`` (the prompt's
delimiters) become ``<< <``/``> >>``, a line of it that is a section line is
indented, and an answer marker inside it (``final score:``, ``grade:``...)
loses its colon, so a passage can neither close its block, open a section,
nor write the answer the reader below takes.

**Reading an answer** (:func:`read_grade`; grades are the integers
``0..max_grade``):

1. an empty answer is an error;
2. a marker ``final score``, ``score``, ``grade``, ``relevance`` or ``rating``
   followed by ``:`` or ``=`` and a number (``##final score: 2``,
   ``Score = 3``) anywhere in the answer: its number is the grade, if every
   marker found gives the same one (else an error: conflicting grades);
3. else an answer that is only a number (``2``, ``**2**``, ``2.``);
4. else an answer whose first line starts with a number set apart by a dash,
   colon, comma or semicolon (``2 - the passage answers...``, ``3, because...``),
   or is a number alone (``2/3`` too); a numbered list (``1. Identify the
   intent...``) is not a grade;
5. anything else (prose, digits inside a sentence such as "3 studies") is an
   error: no grade is guessed. A grade found but not an integer on the scale
   (``4``, ``-1``, ``2.5``) is an error too.

An error is one line (``no grade in the answer: 'It depends...'``),
recorded with the raw answer; the pair's relevance is ``-1`` (unjudged,
trec_eval's convention), never a grade the model did not give.
"""
from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from evalkit.core.errors import InputError, UsageError

DEFAULT_PROMPT = Path(__file__).with_name("prompts") / "umbrela.txt"
SECTION = re.compile(r"^\[(system|user)\]\s*$", re.M)
PLACEHOLDER = re.compile(r"\{(query|passage)\}")
MARKER = r"(?:final\s+score|score|grade|relevance|rating)"
MARKED = re.compile(r"#*\s*\**" + MARKER + r"\**\s*[:=]\s*\**\s*(-?\d+(?:\.\d+)?)", re.I)
ONLY_NUMBER = re.compile(r"^[\s*#`'\"(\[]*(-?\d+(?:\.\d+)?)[\s*`'\")\].]*$")
LEADING_NUMBER = re.compile(r"^[*#`'\"(\[]*(-?\d+(?:\.\d+)?)[*`'\")\]]*(?:[ \t]*(?:/[ \t]*\d+)?[ \t]*$|\s+[-\u2013\u2014]\s|\s*[:,;]\s)", re.M)
MARKER_IN_TEXT = re.compile("(" + MARKER + r")(\s*)([:=])", re.I)
MAX_PROMPT_BYTES = 1 << 20


@dataclass(frozen=True)
class Prompt:
    """A judging prompt: its (system, user) templates, the file it came from and the sha256 of its bytes."""

    system: str
    user: str
    sha256: str
    path: str

    def messages(self, query: str, passage: str) -> list[dict[str, str]]:
        """The chat messages asking for the grade of ``passage`` for ``query`` (texts made inert, see the module docstring)."""
        values = {"query": inert_text(query), "passage": inert_text(passage)}
        fill = lambda template: PLACEHOLDER.sub(lambda m: values[m.group(1)], template)  # noqa: E731 - one pass
        user = {"role": "user", "content": fill(self.user)}
        return [{"role": "system", "content": fill(self.system)}, user] if self.system else [user]


def inert_text(text: str) -> str:
    """``text`` unable to close the prompt's blocks, open a section or write an answer marker."""
    text = text.replace("<<<", "<< <").replace(">>>", "> >>")
    text = SECTION.sub(lambda m: " " + m.group(0), text)
    return MARKER_IN_TEXT.sub(lambda m: m.group(1) + m.group(2), text)


def load_prompt(path: str | os.PathLike | None = None) -> Prompt:
    """The prompt of ``path`` (default: the UMBRELA prompt); it must hold ``{query}`` and ``{passage}``."""
    chosen = Path(path) if path is not None else DEFAULT_PROMPT
    label = os.fspath(chosen)
    try:
        if chosen.stat().st_size > MAX_PROMPT_BYTES:
            raise InputError(label, f"a prompt file over {MAX_PROMPT_BYTES:,} bytes")
        raw = chosen.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"{label}: no such prompt file") from None
    except OSError as exc:
        raise UsageError(f"{label}: cannot read the prompt file ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(label, "the prompt file is not UTF-8 text") from None
    parts = SECTION.split(text)
    sections = {"system": "", "user": parts[0]} if len(parts) == 1 else {}
    if len(parts) > 1:
        if parts[0].strip():
            raise InputError(label, "text before the first [system] or [user] line")
        for name, body in zip(parts[1::2], parts[2::2]):
            if name in sections:
                raise InputError(label, f"two [{name}] sections")
            sections[name] = body.strip("\n")
    user, system = sections.get("user", ""), sections.get("system", "")
    for name in ("query", "passage"):
        if "{" + name + "}" not in user + system:
            raise InputError(label, f"the prompt has no {{{name}}} placeholder")
    if not user.strip():
        raise InputError(label, "the prompt has no [user] text")
    return Prompt(system=system, user=user, sha256=hashlib.sha256(raw).hexdigest(), path=label)


def _short(answer: str, limit: int = 60) -> str:
    flat = " ".join(answer.split())
    return repr(flat if len(flat) <= limit else flat[:limit] + "...")


def read_grade(answer: str, max_grade: int = 3) -> tuple[int | None, str]:
    """(grade, "") or (None, one-line error) for a model's answer; see the module docstring."""
    text = answer.strip()
    if not text:
        return None, "empty answer"
    marked = {m.group(1) for m in MARKED.finditer(text)}
    if len(marked) > 1:
        return None, f"conflicting grades {', '.join(sorted(marked))} in the answer: {_short(text)}"
    found = next(iter(marked), None)
    if found is None:
        match = ONLY_NUMBER.match(text) or LEADING_NUMBER.match(text)
        found = match.group(1) if match else None
    if found is None:
        return None, f"no grade in the answer: {_short(text)}"
    value = float(found)
    if value != int(value) or not 0 <= value <= max_grade:
        return None, f"grade {found} is off the scale 0-{max_grade}: {_short(text)}"
    return int(value), ""
