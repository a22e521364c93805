"""An LLM assessor for a judging sheet: every empty row of the sheet graded by a model, each judgment kept as it comes.

For each row of a sheet of ``evalkit pool`` (``--queries``/``--corpus`` put
the texts on it) whose ``relevance`` is empty, the prompt
(:mod:`evalkit.judging.prompt`) filled with the query and the passage goes
to an LLM backend (anything with the ``chat(prompts, max_new_tokens=, desc=,
on_answer=)`` of :class:`evalkit.systems._models.llm.LLMBackend`: an
OpenAI-compatible endpoint, a transformers model, a GGUF file); its answer is
read as a grade or as a one-line error (relevance ``-1``: unjudged).

* **Deterministic**: temperature 0 and a fixed seed by default; the
  backend's answer cache (model, settings and messages: the prompt filled
  with the pair) answers a prompt asked before without the model.
* **Durable and resumable**: each judgment goes to the journal
  (:mod:`evalkit.judging.journal`, fsynced) the moment its answer arrives;
  a rerun after an interruption takes the journaled ones as made and asks
  only for the others, so none is lost and none made twice. The graded sheet
  is written atomically at the end.
* **Provenance**: every row gets a ``judge`` column, ``llm:<model>@<prompt
  sha256>`` for the model's grades, ``human:<assessor>`` for rows graded
  before (or taken from ``human`` qrels), and ``judge_error`` for an answer
  that gave no grade (:mod:`evalkit.judging.provenance` reads them back).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol, Sequence

from evalkit.core.errors import InputError, UsageError
from evalkit.judging.journal import Journal, judgment_key
from evalkit.judging.prompt import Prompt, read_grade
from evalkit.judging.sheet import FORMULA_START

JUDGE_COLUMNS = ("judge", "judge_error")
UNJUDGED = "-1"


class ChatBackend(Protocol):
    name: str
    model: str

    def chat(self, prompts: Sequence[Any], *, max_new_tokens: int | None = None, desc: str = "LLM",
             on_answer: Callable[[int, str], None] | None = None) -> list[str]: ...


@dataclass(frozen=True)
class JudgeSettings:
    """What decides a judgment besides the pair: model, prompt, scale and generation settings."""

    backend: str
    model: str
    prompt: Prompt
    max_grade: int = 3
    max_new_tokens: int = 32
    temperature: float = 0.0
    seed: int = 0
    passage_words: int = 400  # a passage's first words put in the prompt (0: all)

    @property
    def judge(self) -> str:
        """The provenance of this judge's grades: ``llm:<model>@<prompt sha256>``."""
        return f"llm:{self.model}@{self.prompt.sha256}"

    def key_of(self, query_id: str, doc_id: str, query: str, passage: str) -> str:
        return judgment_key({"backend": self.backend, "model": self.model, "prompt": self.prompt.sha256,
                             "max_grade": self.max_grade, "max_new_tokens": self.max_new_tokens,
                             "temperature": self.temperature, "seed": self.seed, "query_id": query_id, "doc_id": doc_id,
                             "query": query, "passage": passage})

    def manifest(self) -> dict[str, Any]:
        return {"backend": self.backend, "model": self.model, "prompt": self.prompt.path, "prompt_sha256": self.prompt.sha256,
                "max_grade": self.max_grade, "max_new_tokens": self.max_new_tokens, "temperature": self.temperature,
                "passage_words": self.passage_words, "judge": self.judge}


@dataclass
class Sheet:
    """A judging sheet read for judging: its header, rows (lists of cells) and the columns the judge uses."""

    path: str
    delimiter: str
    header: list[str]
    rows: list[list[str]]
    lines: list[int]
    column: dict[str, int]

    def cell(self, row: list[str], name: str) -> str:
        index = self.column.get(name)
        return row[index] if index is not None else ""


def uninert(text: str) -> str:
    """A sheet's text as it was before :func:`evalkit.judging.sheet.inert` guarded it for spreadsheets."""
    return text[1:] if text.startswith("'") and text[1:].startswith(FORMULA_START) else text


def read_sheet(path: str) -> Sheet:
    """A judging sheet (``query_id, doc_id, relevance``...; texts and ``judge`` columns optional), read whole, checked."""
    from evalkit.io.formats.tables import find_column, header_delimiter, read_delimited
    from evalkit.io.textio import load

    loaded = load(path)
    delimiter = header_delimiter(loaded)
    header, records = read_delimited(loaded, delimiter)
    column = {name: find_column(header, (name,), loaded.label, name) for name in ("query_id", "doc_id", "relevance")}
    lowered = [h.lower() for h in header]
    column.update({name: lowered.index(name) for name in ("query_text", "doc_text", *JUDGE_COLUMNS) if name in lowered})
    rows: list = []
    lines: list = []
    seen: dict = {}
    for line, fields in records:
        pair = (fields[column["query_id"]].strip(), fields[column["doc_id"]].strip())
        if not all(pair):
            raise InputError(loaded.label, "empty query_id or doc_id", line)
        if pair in seen:
            raise InputError(loaded.label, f"document {pair[1]!r} of query {pair[0]!r} again (first at line {seen[pair]})", line)
        seen[pair] = line
        rows.append(fields)
        lines.append(line)
    if not rows:
        raise InputError(loaded.label, "a judging sheet without rows")
    return Sheet(path=str(path), delimiter=delimiter, header=header, rows=rows, lines=lines, column=column)


def sample_rows(sheet: Sheet, n: int, seed: int) -> list[int]:
    """``n`` rows drawn by the smallest ``BLAKE2b-64(seed; query, document)``, in the sheet's order (all when n >= rows)."""
    key = int(seed).to_bytes(8, "little")
    draw = [int.from_bytes(hashlib.blake2b(f"{sheet.cell(r, 'query_id')}\x00{sheet.cell(r, 'doc_id')}".encode("utf-8", "surrogatepass"),
                                           digest_size=8, key=key).digest(), "little") for r in sheet.rows]
    return sorted(sorted(range(len(sheet.rows)), key=lambda i: (draw[i], i))[:n])


@dataclass
class JudgeResult:
    """The graded sheet's rows, where each grade came from, and what happened (counts, errors, manifest)."""

    sheet: Sheet
    rows: list[list[str]]  # with the judge columns
    header: list[str]
    settings: JudgeSettings
    counts: dict[str, int]
    errors: list[str]  # "line N: query q, document d: error", in the sheet's order
    manifest: dict[str, Any] = field(repr=False, default_factory=dict)

    def text(self, delimiter: str | None = None) -> str:
        import csv
        import io

        buffer = io.StringIO()
        writer = csv.writer(buffer, delimiter=delimiter or self.sheet.delimiter, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
        writer.writerow(self.header)
        writer.writerows(self.rows)
        return buffer.getvalue()


def human_grades(qrels: Any) -> dict[tuple[str, str], float]:
    """{(query, document): grade} of a :class:`~evalkit.data.Qrels`."""
    queries, docs = qrels.query_ids[qrels.qidx].tolist(), qrels.doc_ids[qrels.didx].tolist()
    return dict(zip(zip(queries, docs), qrels.grades.tolist()))


def judge_sheet(sheet: Sheet, backend: ChatBackend, settings: JudgeSettings, journal: Journal, *, assessor: str = "assessor",
                human: Mapping[tuple[str, str], float] | None = None, query_texts: Mapping[str, str] | None = None,
                doc_texts: Mapping[str, str] | None = None, rows: Sequence[int] | None = None) -> JudgeResult:
    """Grade the empty rows of ``sheet`` (those of ``rows`` only, if given) with ``backend``; see the module docstring."""
    from evalkit.core.input_rules import ValueProblem, number_text

    chosen = list(range(len(sheet.rows))) if rows is None else list(rows)
    header = list(sheet.header) + [c for c in JUDGE_COLUMNS if c not in sheet.column]
    at = {name: header.index(name) for name in ("relevance", *JUDGE_COLUMNS)}
    out: list[list[str]] = []
    todo: list = []
    prompts: list = []
    counts = {"rows": len(chosen), "human": 0, "journaled": 0, "asked": 0, "model_calls": 0, "llm": 0, "errors": 0}
    for i in chosen:
        cells = list(sheet.rows[i]) + [""] * (len(header) - len(sheet.rows[i]))
        query_id, doc_id = sheet.cell(cells, "query_id").strip(), sheet.cell(cells, "doc_id").strip()
        grade = sheet.cell(cells, "relevance").strip()
        if grade:
            try:
                number_text(grade, "relevance")  # a graded row keeps its grade: it must be one
            except ValueProblem as problem:
                raise InputError(sheet.path, str(problem), sheet.lines[i]) from None
            cells[at["judge"]] = cells[at["judge"]] or f"human:{assessor}"
            counts["human"] += 1
        elif human is not None and (query_id, doc_id) in human:
            cells[at["relevance"]] = f"{human[(query_id, doc_id)]:g}"
            cells[at["judge"]], cells[at["judge_error"]] = f"human:{assessor}", ""
            counts["human"] += 1
        else:
            query = uninert(sheet.cell(cells, "query_text")) or (query_texts or {}).get(query_id, "")
            passage = uninert(sheet.cell(cells, "doc_text")) or (doc_texts or {}).get(doc_id, "")
            if settings.passage_words > 0:
                passage = " ".join(passage.split()[:settings.passage_words])
            todo.append((len(out), query_id, doc_id, query, passage, settings.key_of(query_id, doc_id, query, passage)))
        out.append(cells)
    missing = [t for t in todo if not t[3].strip() or not t[4].strip()]
    if missing:
        _, query_id, doc_id, query, _, _ = missing[0]
        what = "query" if not query.strip() else "document"
        raise UsageError(f"{sheet.path}: no {what} text for document {doc_id!r} of query {query_id!r} ({len(missing):,} rows "
                         "to judge lack a text): pool with --queries and --corpus, or give them to evalkit judge")
    ask = [t for t in todo if t[5] not in journal]
    counts["journaled"] = len(todo) - len(ask)

    def record(index: int, answer: str) -> None:
        _, query_id, doc_id, _, _, key = ask[index]
        grade, error = read_grade(answer, settings.max_grade)
        journal.append({"key": key, "query_id": query_id, "doc_id": doc_id, "judge": settings.judge, "grade": grade,
                        "answer": answer, "error": error})

    if ask:
        prompts = [settings.prompt.messages(t[3], t[4]) for t in ask]
        try:
            backend.chat(prompts, max_new_tokens=settings.max_new_tokens, desc="judging", on_answer=record)
        finally:
            journal.close()
        counts["asked"] = len(ask)
        counts["model_calls"] = int(getattr(backend, "calls", len(ask)))
    errors = []
    for position, query_id, doc_id, _, _, key in todo:
        made = journal.records[key]
        cells = out[position]
        error = str(made.get("error") or "")
        recorded = made.get("grade")
        if recorded is None and not error:
            error = "no grade recorded"
        cells[at["relevance"]] = UNJUDGED if error or recorded is None else str(int(recorded))
        cells[at["judge"]], cells[at["judge_error"]] = settings.judge, error
        counts["errors" if error else "llm"] += 1
        if error:
            errors.append(f"line {sheet.lines[chosen[position]]}: query {query_id!r}, document {doc_id!r}: {error}")
    return JudgeResult(sheet=sheet, rows=out, header=header, settings=settings, counts=counts, errors=errors)
