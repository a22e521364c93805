"""The HTML page at scale, and its screenshots: file size, build time and load time in a real headless Chromium.

Builds the page of synthetic runs (default 50,000 queries x 100 documents x 2 runs, top 10 shown; built as
columns, no file parsing) and loads it in the system Chromium (selenium + chromedriver), best of N loads,
timed from navigation until the page's script is ready. With --screenshots it also writes the leaderboard
and the per-query explorer of the real CheckThat! 4b test runs (../shared/data) as PNGs in reports/.
Prints; asserts nothing.

    python bench/html_page.py [--queries 50000] [--depth 100] [--runs 2] [--repeats 3] [--screenshots]
"""
from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CT4B = REPO.parent / "shared" / "data" / "checkthat2025-4b"
sys.path.insert(0, str(REPO / "tests"))

from support.html_browser import browser_or_reason, console_problems, open_page, start_chromium, synthetic_page  # noqa: E402


def screenshots(driver, out: Path) -> list[Path]:
    """Leaderboard and explorer of the real 4b test submissions (every `*_test*` file of the folder)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    from evalkit.cli import main

    gold = CT4B / "queries" / "subtask4b_query_tweets_test_gold.tsv"
    if not gold.exists():
        print(f"no real data at {CT4B}: no screenshots")
        return []
    with tempfile.TemporaryDirectory() as folder:
        page = Path(folder) / "leaderboard.html"
        with contextlib.redirect_stdout(io.StringIO()):  # the leaderboard's table, printed as always
            # relative paths, as a user types them: the page shows the gold as given, never this machine's folders
            runs, shown_gold = os.path.relpath(CT4B / "runs"), os.path.relpath(gold)
            assert main(["leaderboard", runs, "--gold", shown_gold, "--glob", "*_test*", "--html", str(page)]) == 0
        print(f"4b test leaderboard page: {page.stat().st_size / 1e6:.1f} MB, ready after {open_page(driver, page):.2f} s")
        driver.set_window_size(1500, 1180)
        board = out / "html-leaderboard.png"
        driver.find_element(By.ID, "show-bounds").click()
        driver.save_screenshot(str(board))
        driver.find_element(By.ID, "show-bounds").click()
        driver.find_element(By.CSS_SELECTOR, "#tabs button[data-tab=queries]").click()
        Select(driver.find_element(By.ID, "run-b")).select_by_visible_text("predictions_SciBERT_test_TOP10")
        Select(driver.find_element(By.ID, "filter")).select_by_visible_text("A better than B")
        Select(driver.find_element(By.ID, "order")).select_by_visible_text("RBO(A, B), lowest first")
        driver.set_window_size(1500, 2100)
        driver.find_element(By.CSS_SELECTOR, "#query-table tbody tr").click()  # the most different rankings where A wins
        time.sleep(0.3)
        explorer = out / "html-explorer.png"
        driver.execute_script("window.scrollTo(0, 0)")
        driver.save_screenshot(str(explorer))
        driver.set_window_size(1500, 1180)
        driver.find_element(By.CSS_SELECTOR, "#tabs button[data-tab=figures]").click()
        figures = out / "html-figures.png"
        driver.save_screenshot(str(figures))
        problems = console_problems(driver)
        print(f"console problems: {problems or 'none'}")
    return [board, explorer, figures]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=50_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--screenshots", action="store_true", help="also write reports/html-*.png from the real 4b test runs")
    args = parser.parse_args()
    browser, chromedriver, reason = browser_or_reason()
    if reason:
        sys.exit(reason)
    driver = start_chromium(browser, chromedriver)
    try:
        with tempfile.TemporaryDirectory() as folder:
            page = Path(folder) / "big.html"
            built = synthetic_page(page, args.queries, args.depth, args.runs)
            loads = [open_page(driver, page) for _ in range(args.repeats)]
            print(f"{args.queries:,} queries x {args.depth} documents x {args.runs} runs (top 10 shown): "
                  f"{built['bytes'] / 1e6:.1f} MB; scoring {built['scoring_s']:.1f} s, page data + HTML {built['page_s']:.1f} s; "
                  f"ready in Chromium after {min(loads):.2f} s (best of {args.repeats}; all: {', '.join(f'{t:.2f}' for t in loads)}); "
                  f"in-page decode and first render {driver.execute_script('return window.evalkitPage.buildMs'):.0f} ms; "
                  f"console problems: {console_problems(driver) or 'none'}")
        if args.screenshots:
            for path in screenshots(driver, REPO / "reports"):
                print(f"wrote {path.relative_to(REPO)} ({path.stat().st_size / 1e3:.0f} kB)")
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
