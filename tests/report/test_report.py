"""`evalkit report`: the Markdown report, its figures and its numbers on real runs; bad input."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from support.helpers import CT4B, GOLD_4B, shared_or_skip
from oracles.official_4b import per_query, read_gold, read_preds

from evalkit.cli import main

AIRWAVES = CT4B / "runs" / "airwaves"
BM25 = AIRWAVES / "predictions_BM25_dev_TOP10.tsv"
E5 = AIRWAVES / "E5_base_setup_dev_TOP100.tsv"
SCIBERT = AIRWAVES / "predictions_SciBERT_dev_TOP10.tsv"
C6 = AIRWAVES / "c_6_intfloat-e5-large-v2_lr7e-6_chunked_20250527_190411_dev.tsv"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def cli(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def section(markdown: str, title: str) -> str:
    start = markdown.index(f"## {title}")
    end = markdown.find("\n## ", start + 3)
    return markdown[start: end if end > 0 else None]


def table_rows(text: str) -> list[list[str]]:
    rows = [line for line in text.splitlines() if line.startswith("|")]
    return [[c.strip() for c in row.strip("|").split(" | ")] for row in rows[2:]]


@pytest.fixture(scope="module")
def dev_report(tmp_path_factory):
    gold = shared_or_skip(GOLD_4B["dev"])
    folder = tmp_path_factory.mktemp("reports")
    out = folder / "dev.md"
    code = main(["report", str(gold), str(BM25), str(E5), str(SCIBERT), str(C6), "--out", str(out), "--top", "5"])
    assert code == 0
    return gold, out, out.read_text()


@pytest.mark.realdata
def test_report_files_and_links_resolve(dev_report):
    _, out, markdown = dev_report
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", markdown)
    assert sorted(links) == ["dev.first-relevant-rank.png", "dev.query-length.png"]
    for link in links:
        png = out.parent / link
        assert png.exists() and png.stat().st_size > 5_000
        assert png.read_bytes()[:8] == PNG_MAGIC
    assert not list(out.parent.glob(".*.tmp"))
    for heading in ("## Leaderboard", "## Where the first relevant document lands", "## Effect of query length",
                    "## Largest wins and losses", "## Manifest"):
        assert heading in markdown


@pytest.mark.realdata
def test_leaderboard_bold_and_markers_equal_scipy_holm(dev_report):
    from statsmodels.stats.multitest import multipletests

    gold_path, _, markdown = dev_report
    board = section(markdown, "Leaderboard")
    rows = table_rows(board)
    header = [c.strip() for c in board.splitlines()[2].strip("|").split(" | ")]
    assert header[:3] == ["#", "run", "MRR@5 (official)"]
    assert [r[1] for r in rows] == [
        "predictions_SciBERT_dev_TOP10", "c_6_intfloat-e5-large-v2_lr7e-6_chunked_20250527_190411_dev",
        "E5_base_setup_dev_TOP100", "predictions_BM25_dev_TOP10 (baseline)",
    ]
    assert rows[0][2].startswith("**0.7084**")  # best official score in bold
    assert "**" not in rows[3][2] and "▲" not in rows[3][2]  # the baseline gets no marker
    assert "Wilcoxon signed-rank" in board and "Holm correction over the 3 runs" in board and "alpha = 0.05" in board

    gold = read_gold(gold_path)
    base = per_query(gold, read_preds(BM25))
    others = {p.stem: per_query(gold, read_preds(p)) for p in (SCIBERT, C6, E5)}
    raw = [stats.wilcoxon(v, base).pvalue for v in others.values()]
    adjusted = dict(zip(others, multipletests(raw, method="holm")[1]))
    for row in rows[:3]:
        name = row[1]
        assert ("▲" in row[2]) == (adjusted[name] < 0.05 and others[name].mean() > base.mean())
        assert row[2].strip("*▲ ").startswith(f"{others[name].mean():.4f}")


@pytest.mark.realdata
def test_rank_distribution_equals_independent_count(dev_report):
    gold_path, _, markdown = dev_report
    rows = {r[0]: r[1:] for r in table_rows(section(markdown, "Where the first relevant document lands"))}
    gold = read_gold(gold_path)
    for path in (BM25, E5):
        preds = read_preds(path)
        counts = dict.fromkeys([str(r) for r in range(1, 11)] + ["11+", "none"], 0)
        for post_id, (_, cord_uid) in gold.items():
            ranked = preds.get(post_id, [])
            if cord_uid not in ranked:
                counts["none"] += 1
            else:
                rank = ranked.index(cord_uid) + 1
                counts[str(rank) if rank <= 10 else "11+"] += 1
        assert rows[path.stem] == [str(v) for v in counts.values()]
        assert sum(counts.values()) == 1400
    assert rows[E5.stem][10] != "0" and rows[BM25.stem][10] == "0"  # depth 100 vs depth 10


@pytest.mark.realdata
def test_query_length_buckets_equal_independent_means(dev_report):
    gold_path, _, markdown = dev_report
    part = section(markdown, "Effect of query length")
    header = [c.strip() for c in part.splitlines()[4].strip("|").split(" | ")][1:]
    gold = read_gold(gold_path)
    lengths = np.array([len(text.split()) for text, _ in gold.values()])
    values = per_query(gold, read_preds(SCIBERT))
    row = {r[0]: r[1:] for r in table_rows(part)}[SCIBERT.stem]
    total = 0
    for cell, label in zip(row, header):
        low, high, n = map(int, re.match(r"(\d+)-(\d+) tokens \(n=(\d+)\)", label).groups())
        members = (lengths >= low) & (lengths <= high)
        assert members.sum() == n
        assert float(cell) == pytest.approx(values[members].mean(), abs=5e-5)
        total += n
    assert total == 1400 and len(header) == 4


@pytest.mark.realdata
def test_wins_and_losses_have_text_and_gold_doc(dev_report):
    gold_path, _, markdown = dev_report
    part = section(markdown, "Largest wins and losses")
    assert "A = **predictions_BM25_dev_TOP10**, B = **predictions_SciBERT_dev_TOP10**" in part
    gold = read_gold(gold_path)
    a, b = per_query(gold, read_preds(BM25)), per_query(gold, read_preds(SCIBERT))
    diffs = b - a
    rows = table_rows(part)
    assert len(rows) == 10 + 2  # 5 wins, 5 losses, plus the second table's header rows
    first_win = rows[0]
    query = first_win[0]
    assert gold[query][1] == first_win[2]  # gold cord_uid
    assert gold[query][0][:40] == first_win[1][:40]
    assert float(first_win[5]) == pytest.approx(diffs.max())


@pytest.mark.realdata
def test_manifest_block(dev_report):
    gold_path, _, markdown = dev_report
    manifest = section(markdown, "Manifest")
    from evalkit.io.manifest import sha256_of

    assert sha256_of(gold_path) in manifest and sha256_of(SCIBERT) in manifest
    assert '"command": "report"' in manifest and '"seed": 42' in manifest and '"evalkit_version"' in manifest


SMALL_GOLD = "post_id\ttweet_text\tcord_uid\n" + "".join(
    f"{i}\t{' '.join(['word'] * (i % 7 + 1))}\tdoc{i}\n" for i in range(1, 21)
)


def small_run(path: Path, hit_every: int) -> Path:
    lines = ["post_id\tpreds"] + [
        f"{i}\t['doc{i}', 'x']" if i % hit_every == 0 else f"{i}\t['x', 'doc{i}']" for i in range(1, 21)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_small_report_single_run_and_pair(tmp_path, capsys):
    gold = tmp_path / "gold.tsv"
    gold.write_text(SMALL_GOLD)
    a, b = small_run(tmp_path / "a.tsv", 2), small_run(tmp_path / "b.tsv", 1)
    out = tmp_path / "one.md"
    code, _, err = cli(capsys, "report", gold, a, "--out", out)
    assert code == 0, err
    text = out.read_text()
    assert "Only one run: nothing to compare." in text and "▲" not in text
    out2 = tmp_path / "two.md"
    code, _, err = cli(capsys, "report", gold, a, b, "--out", out2, "--pair", "b", "a", "--length-buckets", 2)
    assert code == 0, err
    text = out2.read_text()
    assert "A = **b**, B = **a**" in text
    assert "1-4 tokens (n=" in text  # token counts 1..7, median 4


def test_write_report_in_memory_equals_the_command(tmp_path, capsys):
    """evalkit.write_report on Run objects writes the report `evalkit report` writes from their files (manifest aside)."""
    import evalkit

    gold = tmp_path / "gold.tsv"
    gold.write_text(SMALL_GOLD)
    a, b = small_run(tmp_path / "a.tsv", 2), small_run(tmp_path / "b.tsv", 1)
    code, _, err = cli(capsys, "report", gold, a, b, "--out", tmp_path / "cli.md", "--pair", "b", "a")
    assert code == 0, err
    runs = [evalkit.read_run(a).with_name("a"), evalkit.read_run(b).with_name("b")]
    runs = [evalkit.as_run(run.to_pandas(), name=run.name) for run in runs]  # no file behind them
    written = evalkit.write_report(evalkit.read_qrels(gold), *runs, out=tmp_path / "api.md", pair=("b", "a"))
    assert [p.name for p in written.figures] == ["api.first-relevant-rank.png", "api.query-length.png"]

    def body(text: str) -> str:
        text = text.split("## Manifest")[0].split("\n", 3)[3]  # without the title line and the date
        return text.replace("api.", "NAME.").replace("cli.", "NAME.")  # figure file names

    assert body(written.markdown) == body((tmp_path / "cli.md").read_text())
    assert written.markdown == (tmp_path / "api.md").read_text()
    with pytest.raises(evalkit.api.UsageError, match="exists; pass --force"):
        evalkit.write_report(gold, *runs, out=tmp_path / "api.md")


def test_gold_without_text_skips_query_length(tmp_path, capsys):
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("q1\t0\td1\t1\nq2\t0\td2\t1\nq3\t0\td3\t1\n")
    run = tmp_path / "r.trec"
    run.write_text("q1 Q0 d1 1 2.0 r\nq2 Q0 d9 1 2.0 r\nq2 Q0 d2 2 1.0 r\nq3 Q0 d3 1 1.0 r\n")
    out = tmp_path / "trec.md"
    code, _, err = cli(capsys, "report", qrels, run, "--out", out)
    assert code == 0, err
    assert "carries no query text" in out.read_text()
    assert (tmp_path / "trec.first-relevant-rank.png").exists() and not (tmp_path / "trec.query-length.png").exists()


@pytest.mark.realdata
def test_bad_report_inputs(tmp_path, capsys):
    gold = shared_or_skip(GOLD_4B["dev"])

    def fails(expected: str, *args):
        code, _, err = cli(capsys, "report", gold, *args)
        assert code == 2 and len(err.strip().splitlines()) == 1 and expected in err, err

    fails("name it NAME.md", BM25, "--out", tmp_path / "r.txt")
    existing = tmp_path / "r.first-relevant-rank.png"
    existing.write_bytes(b"old")
    fails("exists; pass --force", BM25, "--out", tmp_path / "r.md")
    assert existing.read_bytes() == b"old" and not (tmp_path / "r.md").exists()
    fails("wrong split?", BM25, AIRWAVES / "E5_HN_All__dev_TOP100.tsv", "--out", tmp_path / "s.md")
    fails("--pair needs two different runs", BM25, E5, "--out", tmp_path / "p.md", "--pair", "1", "1")
    fails("unknown metric 'foo'", BM25, E5, "--out", tmp_path / "m.md", "--metric", "foo@3")
    assert not (tmp_path / "s.md").exists() and not (tmp_path / "p.md").exists()
