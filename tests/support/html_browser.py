"""Helpers for the HTML page in a real browser: the system Chromium driven by selenium, and large synthetic pages.

Used by tests/report/test_html_browser.py and bench/html_page.py. Chromium comes from
the Debian packages (``apt-get install chromium chromium-driver``; ``.ci/run``
installs them when absent), selenium from pip (the test extra).
"""
from __future__ import annotations

import shutil
import time
from pathlib import Path

import numpy as np

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def browser_or_reason() -> tuple[str | None, str | None, str]:
    """(browser binary, driver binary, why not) -- the reason is empty when both are there and selenium imports."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return None, None, "selenium is not installed (pip install -e '.[test]')"
    browser = next((path for path in map(shutil.which, BROWSERS) if path), None)
    driver = shutil.which("chromedriver")
    if browser is None or driver is None:
        return browser, driver, ("no Chromium and chromedriver on PATH (apt-get install chromium chromium-driver; "
                                 ".ci/run installs them when absent)")
    return browser, driver, ""


def start_chromium(browser: str, driver: str, width: int = 1400, height: int = 1000):
    """A headless Chromium through its system chromedriver, logging the browser console."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--disable-extensions", f"--window-size={width},{height}"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(driver), options=options)


def open_page(driver, path: Path, timeout: float = 30.0) -> float:
    """Load a page and wait until its script says it is ready; seconds from navigation to ready."""
    start = time.perf_counter()
    driver.get(Path(path).resolve().as_uri())
    while not driver.execute_script("return !!(window.evalkitPage && window.evalkitPage.ready)"):
        if time.perf_counter() - start > timeout:
            raise TimeoutError(f"{path}: the page did not become ready in {timeout} s")
        time.sleep(0.02)
    return time.perf_counter() - start


def console_problems(driver) -> list[str]:
    """Console errors and warnings since the last call (uncaught exceptions included)."""
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] in ("SEVERE", "WARNING")]


def synthetic(n_queries: int = 50_000, depth: int = 100, n_runs: int = 2, n_docs: int = 200_000, seed: int = 0):
    """Qrels (3 judged documents a query, grades 0-2, query texts) and ``n_runs`` scored runs of ``depth`` documents.

    Built as columns directly (no file to parse): each run holds one judged document of its query at a random
    rank for 60% of the queries, the rest random documents.
    """
    from evalkit.data import Qrels, Run

    rng = np.random.default_rng(seed)
    query_ids = np.array([f"q{i}" for i in range(n_queries)], dtype=object)
    doc_ids = np.array([f"d{i}" for i in range(n_docs)], dtype=object)
    gold_q = np.repeat(np.arange(n_queries), 3)
    gold_d = rng.integers(0, n_docs, len(gold_q))
    qrels = Qrels(query_ids=query_ids, doc_ids=doc_ids, qidx=gold_q, didx=gold_d, grades=rng.integers(0, 3, len(gold_q)).astype(float),
                  texts={q: f"query {i} about topic {i % 97} and more" for i, q in enumerate(query_ids.tolist())}, name="synthetic")
    runs = []
    for r in range(n_runs):
        qidx = np.repeat(np.arange(n_queries), depth)
        didx = rng.integers(0, n_docs, len(qidx))
        hit = rng.random(n_queries) < 0.6
        at = rng.integers(0, depth, n_queries)
        didx[(np.arange(n_queries) * depth + at)[hit]] = gold_d[::3][hit]
        scores = np.tile(np.arange(depth, 0, -1, dtype=np.float64), n_queries)
        runs.append(Run(query_ids=query_ids, doc_ids=doc_ids, qidx=qidx, didx=didx, scores=scores, name=f"run{r}"))
    return qrels, runs


def synthetic_page(path: Path, n_queries: int = 50_000, depth: int = 100, n_runs: int = 2, k: int = 10) -> dict[str, float]:
    """Score synthetic runs, build and write their page; seconds per step and the file size."""
    from evalkit.stats.comparison import CompareOptions
    from evalkit.report.html_page import render_page
    from evalkit.report.page_data import PageInputs, board_of_runs, build_page_data
    from evalkit.scoring.runset import ScoredRun
    from evalkit.tasks import get_task

    qrels, runs = synthetic(n_queries, depth, n_runs)
    start = time.perf_counter()
    task = get_task("trec")
    scored = [ScoredRun(r.name, r.name, r, task.score(r, qrels, "ndcg@10 mrr@10 recall@100")) for r in runs]
    scoring = time.perf_counter() - start
    board = board_of_runs("trec", "synthetic", scored, "nDCG@10", "wilcoxon", CompareOptions())
    data = build_page_data(PageInputs("report", f"{n_queries:,} synthetic queries", board, qrels, runs[0].name, k=k))
    page = render_page(data, f"{n_queries:,} synthetic queries")
    Path(path).write_text(page, encoding="utf-8")
    return {"scoring_s": scoring, "page_s": time.perf_counter() - start - scoring, "bytes": float(Path(path).stat().st_size)}
