"""Progress of long steps (evalkit.core.progress): a bar on a terminal, plain lines at most every few seconds or per tenth
in a pipe or a file, never carriage returns there; the long steps of the systems (training) go through it."""
from __future__ import annotations

import io
import subprocess
import sys
import textwrap

import pytest

from evalkit.core import progress as progress_module
from evalkit.core.progress import Progress, line_of


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def plain(total, desc="ce fit, phase 2 of 4", unit="batch", **keywords):
    stream, clock = io.StringIO(), Clock()
    return Progress(total=total, desc=desc, unit=unit, stream=stream, clock=clock, **keywords), stream, clock


@pytest.fixture(autouse=True)
def auto_mode(monkeypatch):
    monkeypatch.delenv(progress_module.ENV, raising=False)


def test_a_pipe_gets_a_line_per_tenth_at_most_every_few_seconds():
    bar, stream, clock = plain(1000)
    assert bar.mode == "plain"  # a StringIO is no terminal
    for _ in range(1000):  # 0.1 s a batch: 100 s in all
        clock.now += 0.1
        bar.update(1)
    bar.set_postfix(loss="0.4127")
    bar.close()
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue()
    assert len(lines) == 11, lines  # 10%, 20%, ... 100%, then done
    assert lines[0] == "[evalkit] ce fit, phase 2 of 4: 100/1,000 batch (10%), 10.0 batch/s, 0:10 elapsed, ~1:30 left"
    assert lines[-1] == "[evalkit] ce fit, phase 2 of 4: done, 1,000/1,000 batch (100%), 10.0 batch/s, 1:40 elapsed, loss 0.4127"


def test_fast_updates_are_bounded_by_the_minimum_interval():
    bar, stream, clock = plain(10)
    for _ in range(10):  # a tenth every 1 s: one line per 5 s at most
        clock.now += 1.0
        bar.update(1)
    bar.close()
    lines = stream.getvalue().splitlines()
    assert [line.split(": ", 1)[1].split(" (")[0] for line in lines] == ["5/10 batch", "10/10 batch", "done, 10/10 batch"]


def test_a_short_step_prints_nothing():
    bar, stream, clock = plain(10_000)
    for _ in range(10_000):
        clock.now += 0.0004  # 4 s in all
        bar.update(1)
    bar.close()
    assert stream.getvalue() == ""


def test_a_step_without_total_prints_a_heartbeat():
    bar, stream, clock = plain(None, desc="bm25 queries", unit="query")
    for _ in range(100):
        clock.now += 1.0
        bar.update(1)
    bar.close()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 4 and lines[0] == "[evalkit] bm25 queries: 30 query, 1.0 query/s, 0:30 elapsed", lines


def test_slow_steps_show_seconds_per_unit():
    assert line_of("x", 2, 10, "epoch", 120.0) == "[evalkit] x: 2/10 epoch (20%), 60.0 s/epoch, 2:00 elapsed, ~8:00 left"


def test_disabled_and_forced_modes(monkeypatch):
    bar, stream, clock = plain(10, enabled=False)
    clock.now = 100.0
    bar.update(10)
    bar.close()
    assert stream.getvalue() == "" and bar.mode == "off"
    monkeypatch.setenv(progress_module.ENV, "off")
    assert Progress(total=3, stream=io.StringIO()).mode == "off"
    monkeypatch.setenv(progress_module.ENV, "bar")
    stream = io.StringIO()
    with Progress(total=3, desc="x", stream=stream) as forced:
        forced.update(3)
    assert forced.mode == "bar" and "\r" in stream.getvalue()  # tqdm, as on a terminal


def test_a_terminal_gets_a_bar():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    with Progress(total=5, desc="encoding", unit="batch", stream=stream) as bar:
        bar.update(5)
    assert bar.mode == "bar" and "encoding" in stream.getvalue()


def test_iterating_closes_and_counts():
    bar, stream, clock = plain(None)
    bar.iterable = range(7)
    assert list(bar) == list(range(7)) and bar.n == 7 and bar.closed


def test_stderr_a_pipe_in_a_real_process():
    """A child whose stderr is a pipe: plain lines, no carriage return, no tqdm bar, at most one a tenth (and done)."""
    code = textwrap.dedent("""
        import time
        import evalkit.core.progress as p
        p.MIN_SECONDS = 0.02
        for _ in p.progress(range(200), desc="fit", unit="batch"):
            time.sleep(0.002)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert "\r" not in done.stderr and "it/s]" not in done.stderr
    assert 2 <= len(lines) <= 11 and all(line.startswith("[evalkit] fit: ") for line in lines), lines
    assert lines[-1].startswith("[evalkit] fit: done, 200/200 batch (100%)")


def test_a_command_to_a_pipe_shows_no_bar(tmp_path):
    """`evalkit leaderboard` with stderr a pipe: no carriage-return bar (a short step prints nothing)."""
    (tmp_path / "runs").mkdir()
    (tmp_path / "qrels.txt").write_text("".join(f"q{q} 0 d{q} 1\n" for q in range(20)))
    for r in range(5):
        (tmp_path / "runs" / f"r{r}.trec").write_text("".join(f"q{q} Q0 d{(q + r) % 20} 1 1 r{r}\n" for q in range(20)))
    done = subprocess.run([sys.executable, "-m", "evalkit", "leaderboard", "runs", "--gold", "qrels.txt", "--permutations", "200",
                           "--bootstrap", "200"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "\r" not in done.stderr and "reading" not in done.stderr


def test_the_systems_long_loops_use_the_helper():
    """Every training and encoding loop of the shipped systems goes through evalkit.core.progress, none through tqdm itself."""
    from support.helpers import REPO

    for path in sorted((REPO / "systems").rglob("*.py")) + sorted((REPO / "evalkit").rglob("*.py")):
        if "progress" in path.parts:
            continue
        text = path.read_text()
        assert "from tqdm" not in text and "import tqdm" not in text, path
        assert 'print(f"\\r' not in text, path


@pytest.mark.neural
def test_cross_encoder_training_shows_phase_step_and_rate(tmp_path, monkeypatch, capsys):
    pytest.importorskip("torch")
    pytest.importorskip("sentence_transformers")
    import random

    from support.tiny_models import SAMPLE_ABSTRACTS, tiny_bert

    from evalkit.data.corpus import Corpus, Queries
    from evalkit.data import Qrels, Run
    from evalkit.pipelines.registry import load_system

    texts = SAMPLE_ABSTRACTS[:12]
    corpus = Corpus.from_records([{"_id": f"d{i}", "title": f"Study {i}", "text": t} for i, t in enumerate(texts)], id_field="_id")
    queries = Queries(["q1", "q2"], ["melting ice and sea level", "vitamin D and fractures"])
    qrels = Qrels.from_dict({"q1": {"d0": 1}, "q2": {"d1": 1}})
    rng = random.Random(0)
    first = Run.from_scores({q: {f"d{i}": rng.random() for i in range(len(texts))} for q in queries.ids}, name="first")
    monkeypatch.setattr(progress_module, "MIN_SECONDS", 0.0)
    monkeypatch.setattr(progress_module, "HEARTBEAT_SECONDS", 0.0)
    model = tiny_bert(tmp_path / "tiny", texts=texts)  # the test's own checkpoint (transformers' bars while it saves)
    capsys.readouterr()
    system = load_system("cross-encoder", model=model, max_length=32, batch_size=4, lr=1e-3,
                         show_progress=False, device="cpu", phases=[{"epochs": 1}, {"epochs": 2}])
    system.fit(corpus, queries, qrels, first_stage=first)
    err = capsys.readouterr().err
    assert "\r" not in err, err  # no "Loading weights" bar either (quiet_library_bars)
    assert "[evalkit] cross-encoder fit, phase 1 of 2 train BCE: " in err, err
    assert "[evalkit] cross-encoder fit, phase 2 of 2 train BCE: done, " in err and " batch/s" in err and "epoch 2/2" in err, err
