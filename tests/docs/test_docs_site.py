"""The documentation site builds with ``mkdocs build --strict``, its generated reference lists every name the
listing commands print, its links resolve, and the built site works in a real headless Chromium (navigation,
search, no console error). The README stays a README: at most 200 lines, its tour run by the docs' tests."""
from __future__ import annotations

import functools
import html
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from support.helpers import REPO, run_cli
from test_docs_blocks import RUNNABLE, blocks_of, pages

DOCS = REPO / "docs"
# pages other helpers write (the lead adds them to the nav at merge): a link to one may exist before it does
PENDING = {"guide/competition-rules.md", "guide/measure-parameters.md", "explanation/outputs.md", "benchmarks/leaderboard.md",
           "reference/conventions.md", "guide/install.md", "guide/llm-judgments.md", "guide/agreement.md",
           "guide/overview-paper.md", "guide/reproducibility.md", "guide/topic-set-size.md", "guide/datasets.md",
           "explanation/architecture.md"}
GENERATED = {"reference/metrics.md", "reference/tasks.md", "reference/formats.md", "reference/systems.md", "reference/api.md"}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    pytest.importorskip("mkdocs", reason="mkdocs is not installed (pip install -e '.[test]')")
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)], cwd=REPO,
                          capture_output=True, text=True, timeout=300, env={"NO_MKDOCS_2_WARNING": "1", **__import__("os").environ})
    assert done.returncode == 0, done.stderr[-5000:]
    return out


def test_mkdocs_build_strict(site):
    for page in ("index.html", "guide/score/index.html", "reference/cli/index.html", "reference/api/index.html",
                 "reference/metrics/index.html", "benchmarks/index.html", "plugins/index.html"):
        assert (site / page).is_file(), page


def printed_names(command: str) -> list[str]:
    """The names ``evalkit COMMAND`` lists (the first word of each unindented entry line)."""
    out = run_cli(command).stdout
    if command == "formats":
        return [line.split()[0] for line in out.splitlines() if line and not line.startswith("collections and queries")]
    names = [line.split()[0] for line in out.splitlines() if line and not line[0].isspace()
             and not line.startswith(("shipped pipeline configs:", "collection and query formats:"))]
    if command == "systems":
        configs = next(line for line in out.splitlines() if line.startswith("shipped pipeline configs:"))
        names += [name.strip() for name in configs.split(":", 1)[1].split(",")]
    return names


@pytest.mark.parametrize("command", ["metrics", "tasks", "formats", "systems"])
def test_generated_reference_lists_every_name(site, command):
    names = printed_names(command)
    assert len(names) >= 4, names
    page = html.unescape((site / "reference" / command / "index.html").read_text(encoding="utf-8"))
    missing = [name for name in names if f"<code>{name}</code>" not in page]
    assert not missing, f"docs/reference/{command}.md lacks {missing} (printed by evalkit {command})"


def test_generated_reference_is_not_a_file():
    """The generated pages exist only at build time, so nobody edits a copy that drifts."""
    assert not [page for page in GENERATED if (DOCS / page).exists()]


def test_links_resolve():
    """Every relative link of a page names a page that exists, is generated, or is one a helper is writing."""
    broken = []
    for path in pages():
        for target in re.findall(r"\]\(([^)#\s:]+\.md)(?:#[^)]*)?\)", path.read_text(encoding="utf-8")):
            resolved = (path.parent / target).resolve()
            relative = resolved.relative_to(DOCS.resolve()).as_posix() if resolved.is_relative_to(DOCS.resolve()) else None
            if not (resolved.exists() or relative in GENERATED or relative in PENDING):
                broken.append(f"{path.relative_to(DOCS)} -> {target}")
    assert not broken, broken


def test_readme_is_short_and_its_tour_runs():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    for banned in (r"\b20\d\d-\d\d-\d\d\b", r"\b[0-9a-f]{7}\b(?![\w.-])", r"farm-bench", r"machine of"):
        assert not re.search(banned, readme), banned
    documented = {line.strip() for p in pages() for b in blocks_of(p) if b.language in RUNNABLE for line in b.code.splitlines()}
    tour = [line.strip() for block in re.findall(r"```text\n(.+?)\n```", readme, re.S) for line in block.splitlines()
            if line.startswith(("evalkit ", "mkdir "))]
    assert tour and not [line for line in tour if line not in documented], "README tour lines not run by a docs page"


# ------------------------------------------------------------------ the built site in Chromium
@pytest.fixture(scope="module")
def served(site):
    """The built site on a local http.server (search needs http, not file://)."""
    import http.server

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


@pytest.fixture(scope="module")
def chromium():
    from support.html_browser import browser_or_reason, start_chromium

    browser, driver_binary, reason = browser_or_reason()
    if reason:
        pytest.skip(reason)
    driver = start_chromium(browser, driver_binary)
    yield driver
    driver.quit()


def wait_for(condition, timeout: float = 15.0):
    """``condition()``'s first truthy value; an element the page re-rendered meanwhile (stale) is asked again."""
    from selenium.common.exceptions import StaleElementReferenceException

    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        try:
            value = condition()
        except StaleElementReferenceException:
            value = None
        if value:
            return value
        time.sleep(0.1)
    raise TimeoutError("condition not met")


def severe(driver) -> list[str]:
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def test_site_navigation_and_search_in_chromium(served, chromium, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    chromium.get(served)
    wait_for(lambda: chromium.find_elements(By.CSS_SELECTOR, "nav.md-nav"))
    assert "evalkit" in chromium.title
    link = wait_for(lambda: next((a for a in chromium.find_elements(By.CSS_SELECTOR, "a") if a.get_attribute("href", ) and
                                  a.get_attribute("href").rstrip("/").endswith("guide/compare") and a.is_displayed()), None))
    link.click()
    wait_for(lambda: "guide/compare" in chromium.current_url)
    assert wait_for(lambda: chromium.find_element(By.TAG_NAME, "h1").text) == "Compare runs"
    chromium.save_screenshot(str(tmp_path / "compare.png"))
    if __import__("os").environ.get("EVALKIT_DOCS_SCREENSHOT"):  # a copy to look at by eye
        chromium.save_screenshot(__import__("os").environ["EVALKIT_DOCS_SCREENSHOT"])

    search = wait_for(lambda: next((e for e in chromium.find_elements(By.CSS_SELECTOR, "input.md-search__input")), None))
    chromium.execute_script("const t = document.querySelector('input[data-md-toggle=search]'); t.checked = true;"
                            "t.dispatchEvent(new Event('change'));")
    wait_for(lambda: search.is_displayed())
    search.click()
    search.send_keys("Wilcoxon")
    # the results list is re-rendered as the query is typed: read the texts in one step, again while an item goes stale
    texts = wait_for(lambda: [r.text for r in chromium.find_elements(By.CSS_SELECTOR, ".md-search-result__item")], timeout=20)
    assert any("ilcoxon" in text for text in texts)
    search.send_keys(Keys.ESCAPE)

    chromium.get(served + "reference/metrics/")
    assert "MRR" in wait_for(lambda: chromium.find_element(By.TAG_NAME, "article").text)
    problems = severe(chromium)
    assert not problems, problems
