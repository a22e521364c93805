"""The HTML page and its JSON data for ``evalkit report`` and ``evalkit leaderboard`` (``--html``, ``--json``).

Shared options and the two steps every command takes: check the targets
before any work (``.html`` / ``.json`` names, no overwrite without
``--force``, never an input), then build the page data once; the command writes the page and
the JSON atomically after everything else has been computed.
"""
from __future__ import annotations

import click

PAGE_OPTIONS = (
    click.option("--html", "html_path", type=click.Path(dir_okay=False), default=None,
                 help="Write a self-contained HTML page: sortable leaderboard, per-query explorer, figures (NAME.html)."),
    click.option("--json", "json_path", type=click.Path(dir_okay=False), default=None,
                 help="Write the HTML page's data as JSON, for notebooks (NAME.json)."),
    click.option("--queries", "queries_path", type=click.Path(dir_okay=False), default=None,
                 help="Query texts for the page (default: the gold's, when it has them): BEIR JSONL, table, id<TAB>text, SMART."),
    click.option("--corpus", "corpus_path", type=click.Path(dir_okay=False), default=None,
                 help="Document texts for the page: BEIR JSONL, CSV/TSV/Parquet, id<TAB>text, TREC SGML, SMART, pickle."),
    click.option("--trust-pickle", is_flag=True, help="Allow reading a pickled --corpus (unpickling runs code: trusted files only)."),
    click.option("--top-docs", type=click.IntRange(1, 1000), default=10, show_default=True,
                 help="Documents shown per run and query on the page (Judged@k uses the same k)."),
)


def page_options(command):
    for option in reversed(PAGE_OPTIONS):
        command = option(command)
    return command


def page_targets(html_path: str | None, json_path: str | None) -> list[str]:
    """The page outputs asked for, refused in one line when misnamed."""
    from evalkit.core.errors import UsageError

    if html_path and not html_path.lower().endswith((".html", ".htm")):
        raise UsageError(f"{html_path}: the page is HTML; name it NAME.html")
    if json_path and not json_path.lower().endswith(".json"):
        raise UsageError(f"{json_path}: the page data is JSON; name it NAME.json")
    return [p for p in (html_path, json_path) if p]


def read_texts(queries_path: str | None, corpus_path: str | None, trust_pickle: bool):
    """Query texts (``{id: text}``) and a corpus, or ``None`` for what was not given."""
    from evalkit.io.formats.collections import read_corpus, read_queries

    texts = read_queries(queries_path).as_dict() if queries_path else None
    corpus = read_corpus(corpus_path, trust_pickle=trust_pickle) if corpus_path else None
    return texts, corpus


def official_components(task, score) -> list[str]:
    """The per-query metrics whose mean is the official score (:func:`evalkit.report.page_board.official_components`)."""
    from evalkit.report.page_board import official_components as components

    return components(task, score)


def page_payloads(inputs, html_path: str | None, json_path: str | None, extra_html: str = "") -> list[tuple[str, str]]:
    """Build the page data once; the page and/or the JSON as (path, text), written by the caller after all else.

    ``extra_html``: a static section (already escaped) shown under the leaderboard table (``--previous``'s changes)."""
    from evalkit.report.html_page import render_page
    from evalkit.report.page_data import build_page_data
    from evalkit.report.page_encode import to_json

    data = build_page_data(inputs)
    payloads = []
    if html_path:
        payloads.append((html_path, render_page(data, inputs.title, extra_html)))
    if json_path:
        payloads.append((json_path, to_json(data)))
    return payloads
