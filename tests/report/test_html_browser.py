"""The HTML page in a real headless Chromium (system package, selenium): no console errors, sorting, search with the
gold marked, filters, figures, the real 4b leaderboard, and a 50,000-query page loading within seconds."""
from __future__ import annotations

import json
import time

import pytest

from support.helpers import CT4B, GOLD_4B, shared_or_skip
from evalkit.cli import main
from support.html_browser import browser_or_reason, console_problems, open_page, start_chromium, synthetic_page

HOSTILE = "masks </script><script>alert(1)</script> <img src=x onerror=alert(2)> & <!--"
GOLD = "post_id\ttweet_text\tcord_uid\n" + "".join(f"{i}\tdo masks stop the spread of covid number {i}\tdoc{i}\n" for i in range(1, 40)) + \
    f"40\t{HOSTILE}\tdoc40\n"
LOAD_LIMIT_S = 5.0  # a 50,000-query page must be usable within a few seconds


@pytest.fixture(scope="module")
def driver():
    browser, chromedriver, reason = browser_or_reason()
    if reason:
        pytest.skip(reason)
    try:
        handle = start_chromium(browser, chromedriver)
    except Exception as exc:  # a Chromium that cannot start here (no sandbox support, ...): say why
        pytest.skip(f"Chromium at {browser} did not start: {' '.join(str(exc).split())[:300]}")
    yield handle
    handle.quit()


def write_run(path, hit):
    lines = ["post_id\tpreds"]
    for i in range(1, 41):
        docs = [f"x{i}_{j}" for j in range(6)]
        if hit(i):
            docs.insert(hit(i) - 1, f"doc{i}")
        lines.append(f"{i}\t{docs[:7]!r}")
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def small_page(tmp_path_factory):
    folder = tmp_path_factory.mktemp("browser")
    gold = folder / "gold.tsv"
    gold.write_text(GOLD)
    corpus = folder / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"_id": d, "title": f"Paper {d}", "text": f"masks and the spread of covid, study {d}"}) + "\n"
                              for d in [f"doc{i}" for i in range(1, 41)] + [f"x{i}_{j}" for i in range(1, 41) for j in range(6)]))
    runs = [write_run(folder / "weak.tsv", lambda i: 0 if i % 3 == 0 else 4), write_run(folder / "mid.tsv", lambda i: 2),
            write_run(folder / "strong.tsv", lambda i: 1 if i % 4 else 3)]
    page, data = folder / "page.html", folder / "page.json"
    code = main(["report", str(gold), *map(str, runs), "--html", str(page), "--json", str(data), "--corpus", str(corpus), "--top-docs", "5"])
    assert code == 0
    return page, json.loads(data.read_text())


def test_page_loads_without_console_errors_on_every_tab(driver, small_page):
    from selenium.webdriver.common.by import By

    page, data = small_page
    open_page(driver, page)
    for tab in ("queries", "figures", "about", "board"):
        driver.find_element(By.CSS_SELECTOR, f"#tabs button[data-tab={tab}]").click()
        assert driver.find_element(By.ID, f"tab-{tab}").is_displayed()
    assert console_problems(driver) == []
    rows = driver.find_elements(By.CSS_SELECTOR, "#board-table tbody tr")
    assert [r.get_attribute("data-run") for r in rows] == [r["name"] for r in data["board"]["rows"]]
    assert driver.find_element(By.ID, "manifest").get_attribute("textContent").count('"command": "report"') == 1
    driver.find_element(By.CSS_SELECTOR, "#tabs button[data-tab=queries]").click()
    driver.find_element(By.ID, "query-search").send_keys("40\n")
    assert driver.find_element(By.ID, "query-text").text == HOSTILE  # markup in a query stays text
    assert not driver.find_elements(By.CSS_SELECTOR, "#query-detail img") and console_problems(driver) == []


def test_clicking_a_header_resorts_the_leaderboard(driver, small_page):
    from selenium.webdriver.common.by import By

    page, data = small_page
    open_page(driver, page)
    columns = [c["label"] for c in data["board"]["columns"]]
    column = columns.index("Recall@1")
    values = {r["name"]: r["values"][column] for r in data["board"]["rows"]}

    def order():
        return [r.get_attribute("data-run") for r in driver.find_elements(By.CSS_SELECTOR, "#board-table tbody tr")]

    header = f"#board-table th[data-col='{column}']"
    driver.find_element(By.CSS_SELECTOR, header).click()
    assert order() == sorted(values, key=lambda name: -values[name])
    assert driver.find_element(By.CSS_SELECTOR, header).get_attribute("aria-sort") == "descending"
    driver.find_element(By.CSS_SELECTOR, header).click()
    assert order() == sorted(values, key=lambda name: values[name])
    driver.find_element(By.CSS_SELECTOR, "#board-table th[data-col='name']").click()
    assert order() == sorted(values)
    driver.find_element(By.CSS_SELECTOR, "#board-table th[data-col='rank']").click()
    assert order() == [r["name"] for r in data["board"]["rows"]]
    assert console_problems(driver) == []


def test_searching_a_query_id_shows_its_documents_with_the_gold_marked(driver, small_page):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    page, data = small_page
    open_page(driver, page)
    driver.find_element(By.CSS_SELECTOR, "#tabs button[data-tab=queries]").click()
    search = driver.find_element(By.ID, "query-search")
    search.send_keys("7", Keys.ENTER)
    detail = driver.find_element(By.ID, "query-detail")
    assert detail.is_displayed() and "Query 7" in detail.text
    assert [li.get_attribute("data-doc") for li in driver.find_elements(By.CSS_SELECTOR, "#gold-docs li")] == ["doc7"]
    rankings = driver.find_elements(By.CSS_SELECTOR, "#query-detail .ranking")
    assert [r.get_attribute("data-run") for r in rankings] == [data["meta"]["pair"][0], data["meta"]["pair"][1]]  # A and B
    for ranking in rankings:
        docs = ranking.find_elements(By.CSS_SELECTOR, "li.doc")
        assert len(docs) == 5 and all(d.get_attribute("data-doc") for d in docs)
        marked = [d.get_attribute("data-doc") for d in ranking.find_elements(By.CSS_SELECTOR, "li.doc.rel")]
        assert marked == [d.get_attribute("data-doc") for d in docs if d.get_attribute("data-doc") == "doc7"]
    assert driver.find_elements(By.CSS_SELECTOR, "#query-detail li.doc.rel mark")  # query terms highlighted in the text
    driver.find_element(By.ID, "all-runs").click()
    assert len(driver.find_elements(By.CSS_SELECTOR, "#query-detail .ranking")) == 3
    assert console_problems(driver) == []


def test_filters_and_figures_follow_the_chosen_pair(driver, small_page):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    page, data = small_page
    open_page(driver, page)
    driver.find_element(By.CSS_SELECTOR, "#tabs button[data-tab=queries]").click()
    names = [r["name"] for r in data["runs"]]
    a, b = names.index("weak"), names.index("strong")
    Select(driver.find_element(By.ID, "run-a")).select_by_index(a)
    Select(driver.find_element(By.ID, "run-b")).select_by_index(b)
    Select(driver.find_element(By.ID, "filter")).select_by_visible_text("B better than A")
    metric = data["meta"]["metric"]
    wins = sum(vb > va for va, vb in zip(data["runs"][a]["values"][metric], data["runs"][b]["values"][metric]))
    assert driver.find_element(By.ID, "query-count").text.startswith(f"{wins} of 40 queries")
    assert len(driver.find_elements(By.CSS_SELECTOR, "#query-table tbody tr")) == wins
    driver.find_element(By.CSS_SELECTOR, "#tabs button[data-tab=figures]").click()
    nonzero = sum(vb != va for va, vb in zip(data["runs"][a]["values"][metric], data["runs"][b]["values"][metric]))
    assert len(driver.find_elements(By.CSS_SELECTOR, "#fig-topic rect.topic-bar")) == nonzero
    assert len(driver.find_elements(By.CSS_SELECTOR, "#fig-rank rect.bar")) > 0
    assert len(driver.find_elements(By.CSS_SELECTOR, "#fig-length rect.bar")) > 0
    assert len(driver.find_elements(By.CSS_SELECTOR, "#fig-rank .svg-legend span")) == 3  # few runs: all of them
    driver.find_element(By.ID, "figure-runs").click()
    assert [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#fig-rank .svg-legend span")] == ["weak", "strong"]  # A and B
    assert console_problems(driver) == []


@pytest.mark.realdata
def test_real_4b_leaderboard_page(driver, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    gold = shared_or_skip(GOLD_4B["test"])
    page = tmp_path / "leaderboard.html"
    assert main(["leaderboard", str(CT4B / "runs"), "--gold", str(gold), "--glob", "*_test*", "--html", str(page)]) == 0
    open_page(driver, page)
    assert len(driver.find_elements(By.CSS_SELECTOR, "#board-table tbody tr")) == 19
    assert "E5_HN_All__test_TOP100.tsv" in driver.find_element(By.ID, "not-ranked-table").text
    # the all-pairs columns: rank intervals like "1-2", letters, the runs tied with #1 shaded
    ranks = [td.text for td in driver.find_elements(By.CSS_SELECTOR, "#board-table tbody td.ranks")]
    assert ranks[:2] == ["1-2", "1-2"] and len(ranks) == 19
    assert [td.text for td in driver.find_elements(By.CSS_SELECTOR, "#board-table tbody td.letters")][:2] == ["a", "a"]
    assert len(driver.find_elements(By.CSS_SELECTOR, "#board-table tbody tr.top-group")) == 2
    assert "randomised Tukey HSD" in driver.find_element(By.ID, "board-legend").text
    driver.find_element(By.CSS_SELECTOR, "#board-table th[data-col='ranks']").click()  # sortable like any column
    assert len(driver.find_elements(By.CSS_SELECTOR, "#board-table tbody tr")) == 19
    driver.find_element(By.CSS_SELECTOR, "#tabs button[data-tab=queries]").click()
    driver.find_element(By.ID, "query-search").send_keys("1", Keys.ENTER)
    gold_doc = next(line.split("\t")[2] for line in gold.read_text().splitlines()[1:] if line.split("\t")[0] == "1")
    assert [li.get_attribute("data-doc") for li in driver.find_elements(By.CSS_SELECTOR, "#gold-docs li")] == [gold_doc]
    for doc in driver.find_elements(By.CSS_SELECTOR, "#query-detail li.doc.rel"):
        assert doc.get_attribute("data-doc") == gold_doc
    assert console_problems(driver) == []


def test_a_50000_query_page_loads_within_seconds(driver, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    page = tmp_path / "big.html"
    built = synthetic_page(page, n_queries=50_000, depth=100, n_runs=2)
    seconds = open_page(driver, page)
    print(f"\n50,000 queries x 100 documents x 2 runs: {built['bytes'] / 1e6:.1f} MB, built in {built['page_s']:.1f} s "
          f"(scoring {built['scoring_s']:.1f} s), ready in Chromium after {seconds:.2f} s")
    assert seconds < LOAD_LIMIT_S
    assert console_problems(driver) == []
    driver.find_element(By.CSS_SELECTOR, "#tabs button[data-tab=queries]").click()
    assert driver.find_element(By.ID, "query-count").text.startswith("50,000 of 50,000 queries")
    assert len(driver.find_elements(By.CSS_SELECTOR, "#query-table tbody tr")) == 50  # one page of 50
    start = time.perf_counter()
    driver.find_element(By.ID, "query-search").send_keys("q49999", Keys.ENTER)
    assert "Query q49999" in driver.find_element(By.ID, "query-detail").text
    assert time.perf_counter() - start < LOAD_LIMIT_S
    driver.find_element(By.CSS_SELECTOR, "#tabs button[data-tab=figures]").click()
    assert driver.find_elements(By.CSS_SELECTOR, "#fig-topic path.topic-area")  # sampled areas, not 50,000 bars
    assert console_problems(driver) == []
