"""The organiser's API for LLM judgments: :func:`judge` grades a judging sheet and writes it with its provenance.

>>> import evalkit.api.judge as jj
>>> made = jj.judge("pool.tsv", "llm.tsv", backend="openai", model="gpt-4o-mini",
...                 base_url="http://localhost:8000/v1")                     # doctest: +SKIP
>>> made.counts, made.errors[:3]                                            # doctest: +SKIP

The model is reached through evalkit's LLM backends
(:mod:`evalkit.systems._models.llm`, loaded by name only when asked, so
this module imports no model library), or any object with their ``chat``.
"""
from __future__ import annotations

import importlib
import os
from typing import Any, Mapping

from evalkit.core.errors import UsageError
from evalkit.judging.llm_judge import ChatBackend, JudgeResult, JudgeSettings, human_grades, judge_sheet, read_sheet, sample_rows
from evalkit.judging.prompt import load_prompt

LLM_BACKENDS = "evalkit.systems._models.llm"  # the backends' door, imported by name (a plugin, as entry points are)


def journal_of(out: str | os.PathLike) -> str:
    """The journal beside an output sheet: ``OUT.journal.jsonl``."""
    return os.fspath(out) + ".journal.jsonl"


def backend_kind(backend: str) -> str:
    """The canonical name of an LLM backend or alias (``openai``, ``transformers``, ``llamacpp``); unknown: one line."""
    return importlib.import_module(LLM_BACKENDS).backend_class(backend).name


def make_backend(backend: str, model: str, **options: Any) -> ChatBackend:
    """evalkit's LLM backend ``backend`` (openai, transformers, llamacpp) for ``model`` with ``options``."""
    return importlib.import_module(LLM_BACKENDS).load_backend(backend, model, **options)


def judge(
    sheet: str | os.PathLike,
    out: str | os.PathLike,
    *,
    backend: "str | ChatBackend" = "transformers",
    model: str = "",
    prompt: str | os.PathLike | None = None,
    max_grade: int = 3,
    max_new_tokens: int = 32,
    temperature: float = 0.0,
    seed: int = 0,
    passage_words: int = 400,
    journal: str | os.PathLike | None = None,
    human: str | os.PathLike | None = None,
    assessor: str = "assessor",
    queries: str | os.PathLike | None = None,
    corpus: str | os.PathLike | None = None,
    trust_pickle: bool = False,
    sample: int | None = None,
    sample_seed: int = 42,
    qrels_out: str | os.PathLike | None = None,
    backend_options: Mapping[str, Any] | None = None,
    force: bool = False,
) -> JudgeResult:
    """Grade the empty rows of ``sheet`` with an LLM and write the graded sheet to ``out`` (:mod:`evalkit.judging.llm_judge`).

    ``journal`` (default ``OUT.journal.jsonl``) keeps every judgment as it is
    made: a rerun resumes from it. ``human`` qrels grade the pairs they judge
    (``human:<assessor>``); ``sample`` judges ``sample`` seeded rows only (the
    output holds those); ``qrels_out`` also writes a plain TREC qrels and its
    ``.judges.tsv`` provenance sidecar. ``backend_options`` go to the backend
    (``base_url``, ``api_key``, ``concurrency``, ``timeout``, ``device``,
    ``batch_size``, ``cache``, ``cache_path``...).
    """
    from evalkit.io.reading import as_qrels
    from evalkit.judging.journal import Journal
    from evalkit.judging.provenance import judges_sidecar
    from evalkit.io.reading import input_entry as qrels_entry
    from evalkit.io.manifest import build_manifest, input_entry
    from evalkit.io.transactions import check_outputs, sidecar_of

    if isinstance(max_grade, bool) or not isinstance(max_grade, int) or not 1 <= max_grade <= 100:
        raise UsageError(f"max_grade must be an integer from 1 to 100 (got {max_grade!r})")
    if temperature < 0:
        raise UsageError(f"temperature must be 0 or more (got {temperature})")
    if sample is not None and sample < 1:
        raise UsageError(f"sample must be a positive number of rows (got {sample})")
    journal_path = os.fspath(journal) if journal is not None else journal_of(out)
    outputs = [out, sidecar_of(out), qrels_out, *((judges_sidecar(qrels_out), sidecar_of(qrels_out)) if qrels_out else ())]
    inputs = [sheet, prompt, human, queries, corpus]
    check_outputs(outputs, force, inputs=[p for p in inputs if p] + [journal_path])
    if os.path.realpath(journal_path) in {os.path.realpath(os.fspath(p)) for p in inputs if p}:
        raise UsageError(f"{journal_path}: the journal would overwrite an input")
    chosen_prompt = load_prompt(prompt)
    read = read_sheet(os.fspath(sheet))
    rows = sample_rows(read, sample, sample_seed) if sample else None
    query_texts = doc_texts = None
    if queries is not None or corpus is not None:
        from evalkit.io.formats.collections import read_corpus, read_queries

        query_texts = read_queries(queries).as_dict() if queries is not None else None
        if corpus is not None:
            collection = read_corpus(corpus, trust_pickle=trust_pickle)
            position = collection.position()
            wanted = {read.cell(r, "doc_id").strip() for r in read.rows}
            doc_texts = {d: collection.text(position[d]) for d in wanted if d in position}
    human_qrels = as_qrels(human) if human is not None else None
    if isinstance(backend, str):
        options = {"max_new_tokens": max_new_tokens, "temperature": temperature, "seed": seed, **dict(backend_options or {})}
        chat = make_backend(backend, model, **options)
    else:
        chat = backend
    settings = JudgeSettings(backend=chat.name, model=model or chat.model, prompt=chosen_prompt, max_grade=max_grade,
                             max_new_tokens=max_new_tokens, temperature=temperature, seed=seed, passage_words=passage_words)
    book = Journal(journal_path)
    result = judge_sheet(read, chat, settings, book, assessor=assessor, human=human_grades(human_qrels) if human_qrels else None,
                         query_texts=query_texts, doc_texts=doc_texts, rows=rows)
    result.counts["journal_dropped_tail"] = int(book.dropped_tail)
    entries = [input_entry("sheet", sheet), {"role": "prompt", "path": chosen_prompt.path, "sha256": chosen_prompt.sha256}]
    entries += [qrels_entry("human", human_qrels)] if human_qrels is not None else []
    entries += [input_entry(role, p) for role, p in (("queries", queries), ("corpus", corpus)) if p]
    result.manifest = build_manifest(None, entries, {**settings.manifest(), "assessor": assessor, "sample": sample,
                                                     "sample_seed": sample_seed if sample else None, "journal": journal_path,
                                                     "counts": dict(result.counts)}, seed=seed, command="judge")
    save_judged(result, out, qrels_out, force=force)
    return result


def save_judged(result: JudgeResult, out: str | os.PathLike, qrels_out: str | os.PathLike | None = None, *, force: bool = False) -> None:
    """Write the graded sheet and its manifest (``qrels_out``: also a plain TREC qrels, its ``.judges.tsv`` and manifest),
    atomically."""
    from evalkit.judging.provenance import judges_sidecar, qrels_texts
    from evalkit.judging.sheet import delimiter_for
    from evalkit.io.manifest import write_sidecar
    from evalkit.io.transactions import atomic_write

    atomic_write(out, result.text(delimiter_for(os.fspath(out))), force=force)
    write_sidecar(out, result.manifest)
    if qrels_out:
        at = {name: result.header.index(name) for name in ("query_id", "doc_id", "relevance", "judge")}
        rows = [(r[at["query_id"]].strip(), r[at["doc_id"]].strip(), r[at["relevance"]].strip(), r[at["judge"]]) for r in result.rows]
        qrels, judges = qrels_texts(rows)
        atomic_write(qrels_out, qrels, force=force)
        atomic_write(judges_sidecar(qrels_out), judges, force=force)
        write_sidecar(qrels_out, result.manifest)
