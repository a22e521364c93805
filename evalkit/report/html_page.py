"""One self-contained HTML file: the page template, its CSS and JavaScript inlined, the data embedded as JSON.

The assets live as package data in ``evalkit/report/html_assets/`` (a
template, one stylesheet, one script per part of the page); nothing is
fetched at view time (no CDN, no server), so the file works offline and as an
e-mail attachment. The data is the dict of :mod:`evalkit.report.page_data`,
with its numeric columns as base64 typed arrays (:mod:`evalkit.report.page_encode`).
"""
from __future__ import annotations

import html
import re
from importlib import resources

from evalkit._version import __version__
from evalkit.report.page_encode import to_embedded_json

SCRIPTS = ("core.js", "board.js", "explorer.js", "detail.js", "figures.js", "main.js")
_PLACEHOLDER = re.compile(r"\{\{(TITLE|VERSION|CSS|DATA|JS|EXTRA)\}\}")


def asset(name: str) -> str:
    return resources.files("evalkit.report").joinpath("html_assets").joinpath(name).read_text(encoding="utf-8")


def render_page(data: dict, title: str, extra: str = "") -> str:
    """The page as text; every placeholder of the template is filled in one pass (data is never re-scanned).

    ``extra``: static HTML (escaped by its maker) shown under the leaderboard table."""
    scripts = "\n".join(asset(name) for name in SCRIPTS)
    if "</script" in scripts.lower():  # pragma: no cover - a guard on the shipped assets
        raise ValueError("an asset script contains </script")
    values = {
        "TITLE": html.escape(title),
        "VERSION": html.escape(__version__),
        "CSS": asset("page.css"),
        "DATA": to_embedded_json(data),
        "JS": scripts,
        "EXTRA": extra,
    }
    return _PLACEHOLDER.sub(lambda match: values[match.group(1)], asset("page.html"))
