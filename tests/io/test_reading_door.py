"""One door to read a run (evalkit.io.reading): its ways are strategies behind it, and every way scores alike.

A run read against its gold may be judged from its file, judged from its bytes or read whole; whichever ways are
allowed, the scores, warnings and tag are the general reader's, and no module but the door chooses a way.
"""
from __future__ import annotations

import ast
import itertools
import random

import numpy as np
import pytest

from evalkit.api import score
from evalkit.core.errors import UsageError
from evalkit.io import reading
from evalkit.io.prejudged import DeferredRun
from evalkit.native import kernels
from support.helpers import REPO

METRICS = ["mrr@10", "ndcg@10", "map", "recall@100", "P@5", "bpref", "num_rel_ret"]
WAYS = [ways for n in range(1, 4) for ways in itertools.combinations(reading.RUN_WAYS, n) if reading.READ_WHOLE in ways]


def _files(tmp_path, rows: int, seed: int = 0) -> tuple[str, str]:
    rng = random.Random(seed)
    queries = [f"q{i}" for i in range(40)]
    gold = [f"{q} 0 d{rng.randrange(rows // 20)} {rng.choice([0, 1, 2])}" for q in queries for _ in range(12)]
    gold = list(dict.fromkeys(" ".join(line.split()[:3]) for line in gold))
    lines, per_query = [], rows // len(queries)
    for q in queries[:-2]:
        for d in rng.sample(range(rows // 20), per_query):
            lines.append(f"{q} Q0 d{d} 0 {rng.choice(['1', '0.5', '0.25', str(rng.random())])} tag")
    (tmp_path / "gold.txt").write_text("\n".join(f"{line} {rng.choice([0, 1, 2])}" for line in gold) + "\n")
    (tmp_path / "run.txt").write_text("\n".join(lines) + "\n")
    return str(tmp_path / "run.txt"), str(tmp_path / "gold.txt")


@pytest.mark.skipif(not kernels.COMPILED, reason="the judged ways need the compiled kernel")
@pytest.mark.parametrize("rows", [3_000, 60_000])  # under and over the 1 MiB from which a run is judged from its file
def test_every_way_scores_as_reading_the_run_whole(tmp_path, rows):
    run_path, gold_path = _files(tmp_path, rows)
    gold = reading.read_qrels(gold_path)
    whole = reading.read_run(run_path, against=gold, ways=(reading.READ_WHOLE,))
    assert not isinstance(whole, DeferredRun)
    expected = score(whole, gold, metrics=METRICS, allow_partial=True)
    for ways in WAYS:
        run = reading.read_run(run_path, against=gold, ways=ways)
        got = score(run, gold, metrics=METRICS, allow_partial=True)
        assert got.warnings == expected.warnings and run.tag == whole.tag and run.name == whole.name, ways
        assert run.source == whole.source, ways
        for metric in expected.means:
            a = got.task_score.evaluation.per_query[metric]
            b = expected.task_score.evaluation.per_query[metric]
            assert np.array_equal(a, b, equal_nan=True), (ways, metric)
        judged = isinstance(run, DeferredRun)
        assert judged == (reading.JUDGED_FROM_BYTES in ways or (reading.JUDGED_FROM_FILE in ways and rows > 10_000)), ways
        assert (rows > 10_000) == (tmp_path.joinpath("run.txt").stat().st_size > 1 << 20)
        assert run.doc_ids.tolist() == whole.doc_ids.tolist()  # the rows, read when asked for


@pytest.mark.skipif(not kernels.COMPILED, reason="the judged ways need the compiled kernel")
def test_a_large_plain_run_is_judged_from_its_file_only_where_that_way_is_allowed(tmp_path, monkeypatch):
    run_path, gold_path = _files(tmp_path, 60_000)
    gold = reading.read_qrels(gold_path)
    calls: list[str] = []
    for kernel in ("judge_file", "judge_run"):
        real = getattr(kernels, kernel)
        monkeypatch.setattr(kernels, kernel, lambda *args, _real=real, _name=kernel, **kwargs: calls.append(_name) or _real(*args, **kwargs))
    reading.read_run(run_path, against=gold)
    reading.read_run(run_path, against=gold, ways=(reading.JUDGED_FROM_BYTES, reading.READ_WHOLE))
    reading.read_run(run_path, against=gold, ways=(reading.READ_WHOLE,))
    assert calls == ["judge_file", "judge_run"]


def test_an_unknown_way_is_one_line():
    example = REPO / "gold" / "examples" / "tweets_run.tsv"
    with pytest.raises(UsageError, match="unknown way to read a run: sideways"):
        reading.read_run(example, ways=("sideways", reading.READ_WHOLE))
    with pytest.raises(UsageError, match="unknown way to read a run: sideways \\(known: judged-from-file"):
        reading.read_run(example, ways="sideways")
    assert reading.read_run(example, ways=reading.READ_WHOLE).to_lists() == reading.read_run(example).to_lists()


def test_in_memory_inputs_take_the_in_memory_door():
    from evalkit.io import in_memory

    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [1.0, 2.0]})
    for given in (frame, {"q": {"a": 1.0, "b": 2.0}}):
        a, b = reading.as_run(given), in_memory.run_from(given)
        assert a.to_scores() == b.to_scores() == {"q": {"b": 2.0, "a": 1.0}}
    assert reading.as_qrels({"q": {"a": 1}}).to_dict() == in_memory.qrels_from({"q": {"a": 1}}).to_dict()


def _calls(path, names: set[str]) -> list[str]:
    tree = ast.parse(path.read_text())
    return [f"{path.relative_to(REPO)}:{node.lineno}" for node in ast.walk(tree) if isinstance(node, ast.Call)
            and (getattr(node.func, "attr", None) in names or getattr(node.func, "id", None) in names)]


def test_no_module_but_the_door_chooses_a_way():
    """The judged ways are taken in evalkit/io/reading.py alone; the formats registry reads no file."""
    from evalkit.io import formats

    door = REPO / "evalkit" / "io" / "reading.py"
    choosing = [hit for path in sorted((REPO / "evalkit").rglob("*.py")) if path != door
                for hit in _calls(path, {"read_against", "read_streamed"})]
    assert not choosing, choosing
    assert not hasattr(formats, "read_run") and not hasattr(formats, "read_qrels")
