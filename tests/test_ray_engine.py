"""The Ray engine on a local Ray instance: the same bytes as the local engine, a killed actor replaced,
an interrupted driver resumed from its checkpoints; clear errors."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("ray")
pytest.importorskip("torch")
pytest.importorskip("sentence_transformers")

from evalkit.corpus import Corpus, Queries  # noqa: E402
from evalkit.data import Run  # noqa: E402
from evalkit.engine import EngineOptions, get_engine  # noqa: E402
from evalkit.errors import UsageError  # noqa: E402
from evalkit.formats.trec_run import format_trec_run  # noqa: E402
from evalkit.registry import load_system  # noqa: E402

from tiny_models import SAMPLE_ABSTRACTS, tiny_bert  # noqa: E402

TEXTS = SAMPLE_ABSTRACTS[:12]
CE = dict(max_length=48, eval_batch_size=4, show_progress=False, device="cpu")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> str:
    return tiny_bert(tmp_path_factory.mktemp("tiny-bert"), texts=TEXTS)


@pytest.fixture(scope="module")
def ray_session():
    import ray

    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield ray
    ray.shutdown()


@pytest.fixture
def data():
    corpus = Corpus.from_records([{"_id": f"d{i}", "title": f"Study {i}", "text": t} for i, t in enumerate(TEXTS)], id_field="_id")
    queries = Queries(["q1", "q2", "q3"], ["melting ice and sea level", "vitamin D and fractures", "coral bleaching"])
    first = Run.from_scores({q: {f"d{i}": float((i * 7 + j) % 11) for i in range(len(TEXTS))} for j, q in enumerate(queries.ids)})
    return corpus, queries, first


def rerank(tiny, data, engine, cls=None):
    system = (cls or type(load_system("cross-encoder")))(model=tiny, **CE)
    system.engine = engine
    corpus, queries, first = data
    return format_trec_run(system.rerank(corpus, queries, first, depth=10), tag="ce")


def test_ray_run_is_byte_identical_to_local(tiny, data, ray_session, tmp_path, monkeypatch):
    monkeypatch.setenv("EVALKIT_CACHE", str(tmp_path / "cache"))
    local = rerank(tiny, data, None)
    engine = get_engine("ray", EngineOptions(concurrency=2, chunk_batches=1))
    distributed = rerank(tiny, data, engine)
    assert distributed == local
    assert engine.stats.chunks == 8 and engine.stats.computed == 8  # 30 pairs, units of one 4-pair batch
    assert engine.describe()["name"] == "ray" and engine.describe()["ray_version"]


def crashing_cross_encoder(marker: str):
    from evalkit.systems.cross_encoder import CrossEncoderReranker

    class Crashing(CrossEncoderReranker):
        """The real cross-encoder, whose actor dies on its first unit while the marker file exists."""

        def score_pairs(self, queries, texts):
            if os.path.exists(marker):
                os.remove(marker)
                os._exit(1)
            return super().score_pairs(queries, texts)

    return Crashing


def test_a_killed_actor_is_replaced_and_the_run_is_identical(tiny, data, ray_session, tmp_path, monkeypatch):
    monkeypatch.setenv("EVALKIT_CACHE", str(tmp_path / "cache"))
    local = rerank(tiny, data, None)
    marker = tmp_path / "kill-one-actor"
    marker.write_text("")
    engine = get_engine("ray", EngineOptions(concurrency=2, chunk_batches=1, checkpoint=False))
    Crashing = crashing_cross_encoder(str(marker))
    distributed = rerank(tiny, data, engine, Crashing)
    assert not marker.exists()  # an actor did die
    assert distributed == local


def test_an_interrupted_driver_resumes_from_checkpoints(tiny, data, ray_session, tmp_path, monkeypatch):
    monkeypatch.setenv("EVALKIT_CACHE", str(tmp_path / "cache"))
    from evalkit import ray_engine

    local = rerank(tiny, data, None)
    saved = []
    real_save = ray_engine.ChunkStore.save

    def save_then_crash(self, key, values):
        real_save(self, key, values)
        saved.append(key)
        if len(saved) == 3:
            raise KeyboardInterrupt  # the driver is interrupted after three finished units

    monkeypatch.setattr(ray_engine.ChunkStore, "save", save_then_crash)
    with pytest.raises(KeyboardInterrupt):
        rerank(tiny, data, get_engine("ray", EngineOptions(concurrency=1, chunk_batches=1)))
    monkeypatch.setattr(ray_engine.ChunkStore, "save", real_save)
    engine = get_engine("ray", EngineOptions(concurrency=1, chunk_batches=1))
    resumed = rerank(tiny, data, engine)
    assert resumed == local
    assert engine.stats.from_checkpoint == 3 and engine.stats.computed == 5  # fewer model calls, same output


def test_clear_errors(ray_session):
    with pytest.raises(UsageError, match="GPUs"):
        get_engine("ray", EngineOptions(num_gpus=1))
    with pytest.raises(UsageError, match="unknown engine"):
        get_engine("spark")


def test_cli_engine_ray_equals_local(tiny, tmp_path):
    import json

    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps({"_id": f"d{i}", "title": "", "text": t}) + "\n" for i, t in enumerate(TEXTS)))
    (tmp_path / "queries.tsv").write_text("q1\tmelting ice and sea level\nq2\tcoral bleaching\n")
    (tmp_path / "pipe.toml").write_text(
        '[[stages]]\nname = "bm25"\nsystem = "bm25"\nk = 8\n\n'
        f'[[stages]]\nname = "ce"\nsystem = "cross-encoder"\ndepth = 6\noptions = {{ model = "{tiny}", max_length = 48, '
        'eval_batch_size = 4, device = "cpu", show_progress = false }\n'
    )
    env = {**os.environ, "EVALKIT_CACHE": str(tmp_path / "cache")}
    base = [sys.executable, "-m", "evalkit", "run", "pipe.toml", "--corpus", "corpus.jsonl", "--queries", "queries.tsv"]
    local = subprocess.run([*base, "--out", "local.trec"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert local.returncode == 0, local.stderr
    ray_run = subprocess.run([*base, "--out", "ray.trec", "--engine", "ray", "--ray-actors", "2", "--ray-num-cpus", "1"],
                             cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert ray_run.returncode == 0, ray_run.stderr[-3000:]
    assert (tmp_path / "ray.trec").read_bytes() == (tmp_path / "local.trec").read_bytes()
    manifest = json.loads((tmp_path / "ray.trec.manifest.json").read_text())
    assert manifest["options"]["engine"]["name"] == "ray"
    bad = subprocess.run([*base, "--out", "x.trec", "--ray-actors", "2"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "need --engine ray" in bad.stderr
