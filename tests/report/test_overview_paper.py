"""`evalkit leaderboard --latex/--csv/--figures`: the overview paper's table compiles with pdflatex, hostile names print as
text, teams grouped as `evalkit pool` groups them, every file through the output transaction with its manifest.

pdflatex comes from Debian's texlive-latex-base + texlive-latex-recommended (booktabs); .ci/run installs them, and the
compile tests skip with the reason where pdflatex is missing. `-recorder` lists every file TeX opened: a run named
``\\input{/etc/passwd}`` must not make it open that file.
"""
from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from support.helpers import CT4B, GOLD_4B, shared_or_skip  # noqa: E402

from evalkit.cli import main  # noqa: E402
from evalkit.scoring.leaderboard import build_leaderboard  # noqa: E402
from evalkit.report import latex as latex_module  # noqa: E402
from evalkit.report.overview import write_overview
from evalkit.report.overview_rows import overview_rows  # noqa: E402
from evalkit.core.safetext import latex_text  # noqa: E402

NO_PDFLATEX = ("pdflatex is not installed (apt-get install texlive-latex-base texlive-latex-recommended): "
               "the LaTeX compile tests are skipped")
HOSTILE = [r"\input{etc}", "#_$%&{}~^\\", "$x^2$ -- ``q''", "=HYPERLINK(1)", "ünï ≈ 🙂", "[opt] \x1b[2J"]


def compile_tex(path: Path) -> str:
    """pdflatex the file in its folder; return the names of the files TeX opened (from its -recorder list)."""
    if shutil.which("pdflatex") is None:
        pytest.skip(NO_PDFLATEX)
    done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", "-recorder", path.name],
                          cwd=path.parent, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:]
    assert path.with_suffix(".pdf").stat().st_size > 1000
    return path.with_suffix(".fls").read_text()


# ----------------------------------------------------------------- escaping
def test_latex_text_escapes_every_special_character():
    assert latex_text(r"\input{/etc/passwd}") == r"\textbackslash{}input\{/etc/passwd\}"
    assert latex_text("#_$%&{}~^\\") == r"\#\_\$\%\&\{\}\textasciitilde{}\textasciicircum{}\textbackslash{}"
    assert latex_text("a<b>c|d\"e") == r"a\textless{}b\textgreater{}c\textbar{}d\textquotedbl{}e"
    assert latex_text("[x]") == "{[}x{]}" and latex_text("--") == "-{}-{}"
    assert latex_text("é≈🙂") == "é[U+2248][U+1F642]"  # no pdflatex glyph beyond Latin Extended-A
    assert latex_text("\x1b]0;t\x07\n") == r"\textbackslash{}x1b{]}0;t\textbackslash{}x07\textbackslash{}n"
    for name in HOSTILE:  # no TeX syntax survives: every backslash begins one of the commands the table writes
        escaped = latex_text(name)
        for command in ("textbackslash{}", "textasciitilde{}", "textasciicircum{}", "textless{}", "textgreater{}", "textbar{}",
                        "textquotedbl{}", "textasciigrave{}", "textquotesingle{}", "#", "$", "%", "&", "_", "{", "}"):
            escaped = escaped.replace("\\" + command, "")
        assert "\\" not in escaped and "{" not in escaped.replace("{[}", "").replace("{]}", "").replace("-{}", "")


# ----------------------------------------------------------------- a synthetic board of hostile names (no shared data)
@pytest.fixture(scope="module")
def hostile_board(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    rng = np.random.default_rng(5)
    runs = folder / "runs"
    runs.mkdir()
    lines = [f"q{q} 0 d{d} {int(rng.integers(0, 2))}" for q in range(30) for d in range(12)]
    gold = folder / "qrels.txt"
    gold.write_text("\n".join(lines) + "\n")
    for i, name in enumerate(HOSTILE):
        safe_name = name.replace("/", "_") + ".trec"
        rows = []
        for q in range(30):
            scores = rng.random(12) + 0.1 * i
            rows += [f"q{q} Q0 d{d} {r + 1} {s:.6f} x" for r, (d, s) in enumerate(sorted(enumerate(scores), key=lambda t: -t[1]))]
        (runs / safe_name).write_text("\n".join(rows) + "\n")
    board = build_leaderboard(str(runs), str(gold), progress=False)
    assert len(board.entries) == len(HOSTILE) and not board.rejected
    return folder, runs, gold, board


def test_hostile_names_compile_as_text(hostile_board, tmp_path):
    _, _, _, board = hostile_board
    rows = overview_rows(board)
    rows[0] = replace(rows[0], name=r"\input{/etc/passwd}")  # a run name no file name can hold (it has a slash)
    target = tmp_path / "board.tex"
    target.write_text(latex_module.leaderboard_latex(board, rows, label="tab:x_$#"))
    text = target.read_text()
    assert r"\input" not in text and r"\textbackslash{}input\{/etc/passwd\}" in text
    opened = compile_tex(target)
    assert not [line for line in opened.splitlines() if line.endswith("passwd")]  # TeX never opened /etc/passwd
    assert r"\toprule" in text and r"\bottomrule" in text and "randomised Tukey HSD, alpha 0.05" in text


def test_cli_writes_every_export_with_manifests_in_one_transaction(hostile_board, tmp_path, capsys):
    _, runs, gold, _ = hostile_board
    figures = tmp_path / "figs"
    figures.mkdir()
    tex, table = tmp_path / "t.tex", tmp_path / "t.csv"
    args = ["leaderboard", str(runs), "--gold", str(gold), "--latex", str(tex), "--csv", str(table), "--figures", str(figures),
            "--highlight", "2", "--permutations", "200", "--bootstrap", "200"]
    assert main(args) == 0, capsys.readouterr().err
    written = sorted(p.name for p in figures.iterdir())
    assert written == sorted(f"{n}.{e}{m}" for n in ("topics", "heatmap") for e in ("png", "pdf") for m in ("", ".manifest.json"))
    assert (figures / "topics.png").read_bytes()[:4] == b"\x89PNG" and (figures / "heatmap.pdf").read_bytes()[:5] == b"%PDF-"
    manifest = json.loads(Path(f"{tex}.manifest.json").read_text())
    assert manifest["command"] == "leaderboard" and manifest["export"]["highlight"] == overview_rows(hostile_board[3])[1].name
    parsed = list(csv.DictReader(io.StringIO(table.read_text())))
    assert len(parsed) == len(HOSTILE) and {"rank_low", "letters", "tied_with_top"} <= set(parsed[0])
    assert any(r["run"] == "'=HYPERLINK(1)" for r in parsed)  # inert in a spreadsheet
    compile_tex(tex)
    before = {p: p.read_bytes() for p in (tex, table)}
    (figures / "topics.png").unlink()
    capsys.readouterr()
    assert main(args) == 2 and "exists" in capsys.readouterr().err  # nothing overwritten without --force ...
    assert not (figures / "topics.png").exists() and {p: p.read_bytes() for p in before} == before  # ... and nothing written
    assert main(args + ["--force"]) == 0 and (figures / "topics.png").exists()


def test_pdf_figures_are_reproducible(hostile_board, tmp_path):
    _, _, _, board = hostile_board
    from evalkit.report.topic_figures import board_figures

    first, second = board_figures(board, board.entries[0].name), board_figures(board, board.entries[0].name)
    assert first[1] == second[1] and first[3] == second[3]


def test_bad_export_names_refused_before_any_work(hostile_board, tmp_path, capsys):
    _, runs, gold, _ = hostile_board
    for extra, message in ((["--latex", str(tmp_path / "t.txt")], "NAME.tex"), (["--figures", str(tmp_path / "none")], "does not exist"),
                           (["--latex", str(tmp_path / "t.tex"), "--group-by", "(a|aa)+$x"], "does not match")):
        assert main(["leaderboard", str(runs), "--gold", str(gold), *extra]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err
        assert not (tmp_path / "t.tex").exists()


def test_team_rows_are_each_teams_best_run(hostile_board):
    from evalkit.judging.groups import groups_of

    _, _, _, board = hostile_board
    pattern = "^[a-z=]|^."  # a team per first character: the pool's grouping, on the file names
    rows = overview_rows(board, group_by=pattern)
    teams = groups_of([e.file for e in board.entries], [e.name for e in board.entries], pattern)
    best = {}
    for entry, team in zip(board.entries, teams):  # entries are in rank order: the first of a team is its best
        best.setdefault(team, entry.name)
    assert [(r.team, r.name) for r in rows] == list(best.items())
    assert sum(r.runs_in_team for r in rows) == len(board.entries)
    assert [r.rank for r in rows] == list(range(1, len(rows) + 1))


def test_write_overview_api(hostile_board, tmp_path):
    _, _, _, board = hostile_board
    written = write_overview(board, {"command": "test"}, csv=str(tmp_path / "b.csv"))
    assert written == [str(tmp_path / "b.csv")] and Path(f"{tmp_path / 'b.csv'}.manifest.json").exists()


# ----------------------------------------------------------------- the real 4b test leaderboard
@pytest.mark.realdata
def test_real_4b_leaderboard_table_compiles(tmp_path):
    runs, gold = shared_or_skip(CT4B / "runs"), shared_or_skip(GOLD_4B["test"])
    tex = tmp_path / "overview.tex"
    assert main(["leaderboard", str(runs), "--gold", str(gold), "--glob", "*_test*", "--latex", str(tex),
                 "--group-by", "(?<=other-teams/)[^_]+|^airwaves", "--group-on", "path"]) == 0
    text = tex.read_text()
    assert r"\textbf{MRR@5}" in text and "sourcesniffers (2) & sourcesniffers\\_final\\_test$^\\dagger$" in text
    assert "best run of each of 6 teams (19 runs)" in text
    compile_tex(tex)
