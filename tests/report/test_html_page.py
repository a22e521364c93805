"""`report --html/--json` and `leaderboard --html/--json`: the page's data checked against independent computations,
self-containment, bad input (one line, exit 2, nothing written). The browser tests are in test_html_browser.py."""
from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import numpy as np
import pytest

import evalkit
from support.helpers import CT4B, GOLD_4B, REPO, shared_or_skip
from evalkit.cli import main
from evalkit.stats.rank_correlation import rbo

HOSTILE = "</script><script>alert(1)</script> <!-- & <b>bold</b> \u2028"
GOLD = "post_id\ttweet_text\tcord_uid\n" + "".join(f"{i}\ttweet number {i} about vaccines\tdoc{i}\n" for i in range(1, 30)) + f"30\t{HOSTILE}\tdoc30\n"
CC_GOLD = """claim_id,claim,abstract_id,annotation
c1,Sea levels rise,a1,Supports
c1,Sea levels rise,a2,Refutes
c1,Sea levels rise,a3,Not Enough Information
c2,CO2 is plant food,b1,Supports
c2,CO2 is plant food,b2,Not Enough Information
"""
CC_RUN = "claim_id,abstract_id,rank\nc1,a3,1\nc1,zz,2\nc1,a1,3\nc2,b1,1\nc2,yy,2\n"


def run_file(path: Path, hit: callable) -> Path:
    """A 4b list run: query i lists doc{i} at position hit(i) (0 = not at all) among fillers."""
    lines = ["post_id\tpreds"]
    for i in range(1, 31):
        docs = [f"x{i}_{j}" for j in range(5)]
        if hit(i):
            docs.insert(hit(i) - 1, f"doc{i}")
        lines.append(f"{i}\t{docs[:6]!r}")
    path.write_text("\n".join(lines) + "\n")
    return path


def cli(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def embedded(html: str) -> dict:
    """The page's data, decoded as the page's script decodes it (base64 typed arrays)."""
    blob = re.search(r'<script type="application/json" id="evalkit-data">(.*?)</script>', html, re.S).group(1)
    kinds = {"f4": "<f4", "i4": "<i4", "u2": "<u2", "u1": "<u1"}

    def decode(value):
        if isinstance(value, dict) and set(value) == {"t", "b"}:
            values = np.frombuffer(base64.b64decode(value["b"]), dtype=kinds[value["t"]]).astype(np.float64)
            return [None if not np.isfinite(v) else (int(v) if value["t"] != "f4" else float(v)) for v in values]
        if isinstance(value, dict):
            return {k: decode(v) for k, v in value.items()}
        if isinstance(value, list):
            return [decode(v) for v in value]
        return value

    return decode(json.loads(blob))


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    folder = tmp_path_factory.mktemp("page")
    gold = folder / "gold.tsv"
    gold.write_text(GOLD)
    a = run_file(folder / "a.tsv", lambda i: 1 if i % 2 else 0)
    b = run_file(folder / "b.tsv", lambda i: (i % 3) + 1)
    code = main(["report", str(gold), str(a), str(b), "--html", str(folder / "p.html"), "--json", str(folder / "p.json"), "--top-docs", "4"])
    assert code == 0
    return folder, gold, a, b, json.loads((folder / "p.json").read_text())


def test_json_equals_the_data_in_the_page(small):
    folder, *_, data = small
    html = (folder / "p.html").read_text()
    assert same(embedded(html), data)  # per-query columns travel as Float32 in the page, as float64 in the JSON
    assert data["schema"] == "evalkit-page/1" and data["meta"]["k"] == 4
    assert data["manifest"]["command"] == "report" and data["manifest"]["options"]["top_docs"] == 4


def test_page_is_self_contained(small):
    folder, *_ = small
    html = (folder / "p.html").read_text()
    assert not re.search(r"<script[^>]+src=|<link[^>]+href=|@import|https?://(?!www\.w3\.org/2000/svg)", html)
    assert html.count("<script") == 2 and "</script>" not in embedded_blob(html) and "<" not in embedded_blob(html)
    assert embedded(html)["queries"]["text"][-1] == HOSTILE  # markup in the data stays text


def same(x, y) -> bool:
    if isinstance(x, dict):
        return isinstance(y, dict) and x.keys() == y.keys() and all(same(x[k], y[k]) for k in x)
    if isinstance(x, list):
        return isinstance(y, list) and len(x) == len(y) and all(same(a, b) for a, b in zip(x, y))
    if isinstance(x, float) and isinstance(y, (int, float)):
        return x == pytest.approx(y, rel=1e-6, abs=1e-7)
    return x == y


def embedded_blob(html: str) -> str:
    return re.search(r'id="evalkit-data">(.*?)</script>', html, re.S).group(1)


def test_values_bounds_and_rankings_equal_independent_computation(small):
    _, gold, a, b, data = small
    assert [r["name"] for r in data["board"]["rows"]] == ["b", "a"]  # b hits every query (rank 1..3), a every other
    columns = [c["label"] for c in data["board"]["columns"]]
    assert columns[0] == "MRR@5" and columns[-1] == "Judged@4"
    for row, path in zip(data["board"]["rows"], (b, a)):
        score = evalkit.score(path, gold, metrics="mrr@1 mrr@10 recall@1 recall@5 recall@10 judged@4")
        for label, value in zip(columns, row["values"]):
            assert value == pytest.approx(score.means[label]), label
    ids = data["queries"]["ids"]
    assert ids == [str(i) for i in range(1, 31)] and data["queries"]["text"][0] == "tweet number 1 about vaccines"
    docs = data["docs"]["ids"]
    run_b = data["runs"][0]
    assert run_b["name"] == "b"
    for q in range(30):
        start, end = run_b["top"]["offsets"][q], run_b["top"]["offsets"][q + 1]
        shown = [docs[d] for d in run_b["top"]["doc"][start:end]]
        assert len(shown) == 4 and shown.index(f"doc{q + 1}") == (q + 1) % 3  # doc{i} at position (i % 3) + 1
        grades = dict(zip(run_b["top"]["judged_at"], run_b["top"]["judged_grade"]))  # sparse: the judged rows only
        marked = [docs[run_b["top"]["doc"][i]] for i in range(start, end) if grades.get(i) == 1]
        assert marked == [f"doc{q + 1}"] and run_b["top"]["repeat_at"] == []
        assert run_b["first_rel"][q] == (q + 1) % 3 + 1
        gold_docs = [docs[d] for d in data["gold"]["doc"][data["gold"]["offsets"][q]: data["gold"]["offsets"][q + 1]]]
        assert gold_docs == [f"doc{q + 1}"]
    run_a = data["runs"][1]
    assert run_a["first_rel"][1] is None  # query 2: a misses its paper (infinity travels as null in JSON)
    # bounds: every retrieved filler counted relevant, so MRR@5 and Judged@4 go to 1; Recall@1 to 1/(1 + 5 fillers)
    assert run_a["upper"]["MRR@5"] == [1.0] * 30 and run_a["values"]["Judged@4"][0] == 0.25
    assert data["board"]["rows"][1]["upper"][0] == 1.0
    assert run_a["upper"]["Recall@1"][1] == pytest.approx(1 / 6)  # query 2: R = doc2 + 5 fillers, filler at rank 1
    # RBO of the pair equals the scalar implementation on the full lists
    (i, j, values), = data["rbo"]["pairs"]
    lists = {name: evalkit.read_run(path).to_lists() for name, path in (("a", a), ("b", b))}
    for q, query in enumerate(ids):
        assert values[q] == pytest.approx(rbo(lists["b"][query], lists["a"][query], 0.9), abs=1e-6)


def test_significance_marks_and_groups(small):
    _, gold, a, b, data = small
    rows = data["board"]["rows"]
    assert rows[1]["baseline"] and data["meta"]["baseline"] == "a" and data["meta"]["pair"] == ["a", "b"]
    from scipy import stats

    mrr = {name: evalkit.score(path, gold).per_query["MRR@5"].to_numpy() for name, path in (("a", a), ("b", b))}
    p = stats.wilcoxon(mrr["b"], mrr["a"]).pvalue
    assert rows[0]["vs_next"]["p"] == pytest.approx(p) and rows[0]["vs_next"]["significant"] == (p < 0.05)
    assert rows[0]["marks"][0] == ("▲" if p < 0.05 else "")
    assert [r["group"] for r in rows] == ([0, 1] if p < 0.05 else [0, 0])
    assert "Wilcoxon" in data["board"]["legend"]["baseline"] and "Judged@4" in data["board"]["legend"]["baseline"]


def test_climatecheck_labels_and_composite_bound(tmp_path, capsys):
    gold, run = tmp_path / "gold.csv", tmp_path / "run.csv"
    gold.write_text(CC_GOLD)
    run.write_text(CC_RUN)
    code, _, err = cli(capsys, "report", gold, run, "--json", tmp_path / "cc.json", "--allow-partial")
    assert code == 0, err
    data = json.loads((tmp_path / "cc.json").read_text())
    labels = [data["gold"]["labels"][x] for x in data["gold"]["label"]]
    assert sorted(labels) == sorted(["Supports", "Refutes", "Not Enough Information", "Supports", "Not Enough Information"])
    row = data["board"]["rows"][0]
    columns = [c["label"] for c in data["board"]["columns"]]
    components = [columns.index(c) for c in ("Recall@2", "Recall@5", "Recall@10", "CC-Bpref")]
    assert row["upper"][0] == pytest.approx(np.mean([row["upper"][i] for i in components]))  # the official mean's bound


@pytest.mark.realdata
def test_leaderboard_page_on_real_test_runs(tmp_path, capsys):
    gold = shared_or_skip(GOLD_4B["test"])
    out = tmp_path / "lb.json"
    code, stdout, err = cli(capsys, "leaderboard", CT4B / "runs", "--gold", gold, "--glob", "*_test*", "--json", out, "-o", "json")
    assert code == 0, err
    board, data = json.loads(stdout), json.loads(out.read_text())
    assert [r["name"] for r in data["board"]["rows"]] == [r["run"] for r in board["ranking"]]
    for row, ranked in zip(data["board"]["rows"], board["ranking"]):
        assert row["values"][0] == pytest.approx(ranked["official"]["value"])
        if ranked["vs_next"]:
            assert row["vs_next"]["p_adjusted"] == pytest.approx(ranked["vs_next"]["p_adjusted"])
    assert data["board"]["rows"][0]["group"] == data["board"]["rows"][1]["group"]  # 1st and 2nd statistically tied
    for row, ranked in zip(data["board"]["rows"], board["ranking"]):  # the all-pairs columns, as the leaderboard's JSON
        assert row["rank_interval"] == ranked["rank_interval"] and row["letters"] == ranked["letters"]
        assert row["tied_with_top"] == ranked["tied_with_top"]
    assert [r["tied_with_top"] for r in data["board"]["rows"]][:3] == [True, True, False]
    assert data["board"]["all_pairs"]["pairs"] == board["all_pairs"]["pairs"]
    assert any("randomised Tukey HSD" in line for line in data["board"]["legend"]["all_pairs"])
    assert "tied with #1" in data["board"]["legend"]["groups"]
    assert data["board"]["not_ranked"] == [{"file": "airwaves/E5_HN_All__test_TOP100.tsv", "problem": "other split",
                                            "reason": board["not_ranked"][0]["reason"]}]
    assert data["meta"]["n_queries"] == 1446 and len(data["rbo"]["pairs"]) == 19 * 18 // 2


def test_bad_page_inputs(small, tmp_path, capsys):
    _, gold, a, b, _ = small

    def fails(expected: str, *args):
        code, _, err = cli(capsys, *args)
        assert code == 2 and len(err.strip().splitlines()) == 1 and expected in err, err

    fails("name it NAME.html", "report", gold, a, "--html", tmp_path / "p.txt")
    fails("name it NAME.json", "report", gold, a, "--json", tmp_path / "p.txt")
    fails("nothing to write", "report", gold, a)
    existing = tmp_path / "old.html"
    existing.write_text("old")
    fails("exists; pass --force", "report", gold, a, "--html", existing, "--json", tmp_path / "new.json")
    assert existing.read_text() == "old"
    fails("no such file", "report", gold, a, "--html", tmp_path / "q.html", "--queries", tmp_path / "missing.tsv")
    fails("named twice", "leaderboard", a.parent, "--gold", gold, "--glob", "?.tsv", "--html", tmp_path / "s.html", "--out", tmp_path / "s.html")
    fails("is also an input", "report", gold, a, "--json", tmp_path / "x.json", "--queries", tmp_path / "x.json")
    fails("--top-docs", "report", gold, a, "--html", tmp_path / "k.html", "--top-docs", "0")
    fails("--baseline 'nope'", "leaderboard", a.parent, "--gold", gold, "--glob", "?.tsv", "--html", tmp_path / "lb.html", "--baseline", "nope")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.html"]
    code, _, err = cli(capsys, "report", gold, a, "--html", existing, "--force")
    assert code == 0 and existing.read_text().startswith("<!DOCTYPE html>")


def test_query_and_document_texts_and_run_labels(small, tmp_path, capsys):
    _, gold, a, b, _ = small
    queries = tmp_path / "queries.tsv"
    queries.write_text("".join(f"{i}\tother text {i}\n" for i in range(1, 31)))
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"_id": f"doc{i}", "title": f"Title {i}", "text": "word " * 400}) + "\n" for i in range(1, 31)))
    out = tmp_path / "texts.json"
    code, _, err = cli(capsys, "report", gold, a, "--json", out, "--queries", queries, "--corpus", corpus)
    assert code == 0, err
    data = json.loads(out.read_text())
    assert data["queries"]["text"][:2] == ["other text 1", "other text 2"] and data["queries"]["length"][:1] == [3]
    docs = dict(zip(data["docs"]["ids"], data["docs"]["title"]))
    assert docs["doc1"] == "Title 1" and docs["x1_0"] == ""  # fillers are not in the corpus
    assert all(len(text) <= 1200 for text in data["docs"]["text"])  # long texts are cut for the page
    assert {entry["role"] for entry in data["manifest"]["inputs"]} >= {"gold", "run:a", "queries", "corpus"}

    gold_cc, run_cc = tmp_path / "gold.csv", tmp_path / "run.csv"
    gold_cc.write_text(CC_GOLD)
    run_cc.write_text("claim_id,abstract_id,rank,label\nc1,a3,1,Supports\nc1,zz,2,Refutes\nc2,b1,1,Supports\n")
    code, _, err = cli(capsys, "report", gold_cc, run_cc, "--json", tmp_path / "verification.json", "--allow-partial",
                       "--task", "climatecheck2025-verification")  # a labelled run never chooses Subtask II
    assert code == 0, err
    data = json.loads((tmp_path / "verification.json").read_text())
    top = data["runs"][0]["top"]
    assert data["meta"]["task"] == "climatecheck2025-verification"
    assert [top["labels"][x] for x in top["label"]] == ["Supports", "Refutes", "Supports"]


def test_figure_axes_fall_on_round_values():
    """The figures' y ticks are 1, 2, 2.5 or 5 times a power of ten (never 15.8 %, 31.5 %), the top one above the data."""
    import shutil
    import subprocess

    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        pytest.skip("node is not installed (the figures' tick code is JavaScript)")
    source = REPO / "evalkit" / "report" / "html_assets" / "figures.js"
    script = (
        "const src = require('fs').readFileSync(process.argv[1], 'utf8');"
        "const start = src.indexOf('niceTicks(low'), end = src.indexOf('axisY(root', start);"
        "const F = eval('({' + src.slice(start, end).trim().replace(/,\\s*$/, '') + '})');"
        "console.log(JSON.stringify([[0, 63.1], [0, 31.5], [0, 0.7123], [0, 15.8], [0, 0.37, 2]].map(([a, b, n]) => F.niceTicks(a, b, n))));"
    )
    done = subprocess.run([node, "-e", script, str(source)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [[0, 20, 40, 60, 80], [0, 10, 20, 30, 40], [0, 0.2, 0.4, 0.6, 0.8], [0, 5, 10, 15, 20], [0, 0.2, 0.4]]
