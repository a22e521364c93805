"""The local engine's worker processes: the same bytes as the in-process run, small work kept here, clear errors."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sentence_transformers")

from evalkit.data.corpus import Corpus, Queries  # noqa: E402
from evalkit.core.errors import UsageError  # noqa: E402
from evalkit.io.formats.trec_run import format_trec_run  # noqa: E402
from evalkit.pipelines.config import engine_choice, parse_config  # noqa: E402
from evalkit.pipelines.engine import LOCAL, EngineOptions, Work  # noqa: E402
from evalkit.pipelines.registry import load_system  # noqa: E402
from evalkit.pipelines.workers import LocalEngine, plan  # noqa: E402

from support.tiny_models import SAMPLE_ABSTRACTS, tiny_bert  # noqa: E402

pytestmark = pytest.mark.neural  # runs torch models (tiny local checkpoints) in spawned processes

TEXTS = SAMPLE_ABSTRACTS
CE = dict(max_length=48, eval_batch_size=2, show_progress=False, device="cpu")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> str:
    return tiny_bert(tmp_path_factory.mktemp("tiny-bert"), texts=TEXTS)


@pytest.fixture(scope="module")
def engine():
    engine = LocalEngine(EngineOptions(workers=2, threads=1))
    yield engine
    engine.close()


@pytest.fixture
def data():
    corpus = Corpus.from_records([{"_id": f"d{i}", "title": f"Study {i}", "text": t} for i, t in enumerate(TEXTS)], id_field="_id")
    queries = Queries(["q1", "q2", "q3"], ["melting ice and sea level", "vitamin D and fractures", "coral bleaching"])
    return corpus, queries


def test_plan_shares_the_cores():
    assert plan(EngineOptions(), cores=2) == (2, 1)
    assert plan(EngineOptions(), cores=16) == (16, 1)
    assert plan(EngineOptions(workers=4), cores=16) == (4, 4)
    assert plan(EngineOptions(workers=1), cores=2) == (1, 2)
    assert plan(EngineOptions(workers=3, threads=2), cores=2) == (3, 2)


def test_reranking_in_worker_processes_is_byte_identical(tiny, data, engine, monkeypatch, tmp_path):
    import torch

    monkeypatch.setenv("EVALKIT_CACHE", str(tmp_path / "cache"))
    corpus, queries = data
    from evalkit.data import Run

    first = Run.from_scores({q: {f"d{i}": float((i * 7 + j) % 11) for i in range(len(TEXTS))} for j, q in enumerate(queries.ids)})
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the workers' thread count: the same arithmetic
    try:
        system = load_system("cross-encoder", model=tiny, **CE)
        here = format_trec_run(system.rerank(corpus, queries, first, depth=12, engine=LOCAL), tag="ce")
        spread = format_trec_run(system.rerank(corpus, queries, first, depth=12, engine=engine), tag="ce")
    finally:
        torch.set_num_threads(threads)
    assert spread == here
    assert engine.stats.computed == 18 and engine.stats.chunks == 18  # 36 pairs, one 2-pair batch per unit
    assert engine.stats.worker_cpu_seconds > 0


def test_dense_encoding_in_worker_processes_is_identical(tiny, data, engine):
    import torch

    corpus, _ = data
    system = load_system("dense", model=tiny, query_prefix="", passage_prefix="", batch_size=1, embedding_cache="none", device="cpu")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        here = system.corpus_embeddings(corpus, engine=LOCAL)
        computed = engine.stats.computed
        spread = system.corpus_embeddings(corpus, engine=engine)
    finally:
        torch.set_num_threads(threads)
    assert engine.stats.computed == computed + len(TEXTS)  # the same owner class, a new owner: shipped again
    assert np.array_equal(here, spread)


class Doubler:
    """A picklable owner whose work is trivial."""

    name = "doubler"

    def double(self, values):
        return [2 * v for v in values]

    def fail(self, values):
        raise UsageError("bad item 3")


def test_small_work_and_unshippable_owners_stay_here(engine):
    before = engine.stats.computed
    assert list(engine.run(Work(Doubler().double, ([1, 2, 3],), batch_size=1))) == [2, 4, 6]  # under 4 batches per worker

    class Local(Doubler):  # defined in a function: cannot be pickled, so it runs here
        pass

    assert list(engine.run(Work(Local().double, (list(range(40)),), batch_size=2))) == [2 * v for v in range(40)]
    assert list(engine.run(Work(Doubler().double, (list(range(40)),), batch_size=2, processes=False)))[-1] == 78
    assert engine.stats.computed == before
    assert list(engine.run(Work(Doubler().double, (list(range(40)),), batch_size=2))) == [2 * v for v in range(40)]
    assert engine.stats.computed == before + 20


def test_a_failing_unit_is_one_clear_error_and_the_workers_carry_on(engine):
    with pytest.raises(UsageError, match="bad item 3"):
        engine.run(Work(Doubler().fail, (list(range(40)),), batch_size=2))
    pool = engine._pool
    assert list(engine.run(Work(Doubler().double, (list(range(40)),), batch_size=2)))[:3] == [0, 2, 4]
    assert engine._pool is pool  # the same workers


def test_engine_options_belong_to_their_engine():
    config = parse_config({"name": "x", "stages": [{"name": "bm25", "system": "bm25"}], "engine": {"name": "local", "workers": 1}})
    assert engine_choice(config)[1].workers == 1
    assert engine_choice(config, threads=2)[1].threads == 2
    with pytest.raises(UsageError, match="need the ray engine"):
        engine_choice(config, concurrency=3)
    with pytest.raises(UsageError, match="need the local engine"):
        engine_choice(config, "ray", workers=2)
    with pytest.raises(UsageError, match="must be a whole number from 0"):
        LocalEngine(EngineOptions(workers=-1))
    assert LocalEngine(EngineOptions(workers=1)).describe()["workers"] == 1
