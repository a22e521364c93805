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

from evalkit.data.corpus import Corpus, Queries  # noqa: E402
from evalkit.data import Run  # noqa: E402
from evalkit.pipelines.engine import LOCAL, EngineOptions  # noqa: E402
from evalkit.pipelines.run import get_engine  # noqa: E402
from evalkit.core.errors import UsageError  # noqa: E402
from evalkit.io.formats.trec_run import format_trec_run  # noqa: E402
from evalkit.pipelines.registry import load_system  # noqa: E402
from evalkit.pipelines.stages import Labeler  # noqa: E402

from support.tiny_models import SAMPLE_ABSTRACTS, tiny_bert  # noqa: E402

pytestmark = pytest.mark.neural  # runs torch models (tiny local checkpoints)

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
    corpus, queries, first = data
    return format_trec_run(system.rerank(corpus, queries, first, depth=10, engine=engine or LOCAL), tag="ce")


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
    from evalkit.pipelines import engine as engines  # the unit loop and its checkpoints, shared by Ray and the local workers

    local = rerank(tiny, data, None)
    saved = []
    real_save = engines.ChunkStore.save

    def save_then_crash(self, key, values):
        real_save(self, key, values)
        saved.append(key)
        if len(saved) == 3:
            raise KeyboardInterrupt  # the driver is interrupted after three finished units

    monkeypatch.setattr(engines.ChunkStore, "save", save_then_crash)
    with pytest.raises(KeyboardInterrupt):
        rerank(tiny, data, get_engine("ray", EngineOptions(concurrency=1, chunk_batches=1)))
    monkeypatch.setattr(engines.ChunkStore, "save", real_save)
    engine = get_engine("ray", EngineOptions(concurrency=1, chunk_batches=1))
    resumed = rerank(tiny, data, engine)
    assert resumed == local
    assert engine.stats.from_checkpoint == 3 and engine.stats.computed == 5  # fewer model calls, same output


def test_clear_errors(ray_session):
    with pytest.raises(UsageError, match="GPUs"):
        get_engine("ray", EngineOptions(num_gpus=1))
    with pytest.raises(UsageError, match="unknown engine"):
        get_engine("spark")


@pytest.mark.slow
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
    noise = [line for line in ray_run.stderr.splitlines() if any(mark in line for mark in ("INFO", "WARNING", ".cc:", "warn", "ray/"))]
    assert noise == [], noise  # Ray's own lines (core_worker.cc errors, INFO, warnings) only with EVALKIT_RAY_VERBOSE=1
    assert (tmp_path / "ray.trec").read_bytes() == (tmp_path / "local.trec").read_bytes()
    manifest = json.loads((tmp_path / "ray.trec.manifest.json").read_text())
    assert manifest["options"]["engine"]["name"] == "ray"
    bad = subprocess.run([*base, "--out", "x.trec", "--ray-actors", "2"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "need the ray engine" in bad.stderr


def pipeline_outputs(config_text: str, corpus, queries, engine) -> dict[str, str]:
    """Every stage's run (and labels) of a pipeline, as the bytes evalkit writes."""
    from evalkit.io.formats.trec_run import labels_tsv
    from evalkit.pipelines.runner import Pipeline
    from evalkit.pipelines.config import parse_config

    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    runs = Pipeline(parse_config(tomllib.loads(config_text))).run(corpus, queries, engine=engine or LOCAL)
    out = {name: format_trec_run(run, tag=name) for name, run in runs.items()}
    out.update({f"{name}.labels": labels_tsv(run) for name, run in runs.items() if run.labels is not None})
    return out


@pytest.mark.slow
def test_every_model_stage_on_ray_equals_local(tiny, tmp_path_factory, ray_session, tmp_path, monkeypatch):
    """BM25 -> DocT5Query + dense -> RRF -> cross-encoder -> NLI labels (and a label_claim plugin): the same bytes."""
    from support.tiny_models import tiny_t5

    monkeypatch.setenv("EVALKIT_CACHE", str(tmp_path / "cache"))
    t5 = tiny_t5(tmp_path_factory.mktemp("tiny-t5"), texts=TEXTS)
    nli = tiny_bert(tmp_path_factory.mktemp("tiny-nli"), texts=TEXTS, num_labels=3)
    corpus = Corpus.from_records([{"_id": f"d{i}", "title": f"Study {i}", "text": t} for i, t in enumerate(TEXTS)], id_field="_id")
    queries = Queries([f"q{i}" for i in range(6)], ["melting ice and sea level", "vitamin D and fractures", "coral bleaching",
                                                   "statins", "sleep and memory", "ice"])
    config = f'''
[[stages]]
name = "bm25"
system = "bm25"
k = 10
options = {{ analyzer = "simple" }}
[[stages]]
name = "d2q"
system = "doct5query"
k = 10
options = {{ model = "{t5}", num_expansions = 2, max_new_tokens = 6, generation_batch_size = 2, analyzer = "simple", device = "cpu" }}
[[stages]]
name = "dense"
system = "dense"
k = 10
options = {{ model = "{tiny}", query_prefix = "", passage_prefix = "", chunking = "chunks", chunk_size = 16, chunk_overlap = 4, batch_size = 4, embedding_cache = "none", device = "cpu" }}
[[stages]]
name = "rrf"
fuse = ["bm25", "d2q", "dense"]
method = "rrf"
[[stages]]
name = "ce"
system = "cross-encoder"
depth = 8
options = {{ model = "{tiny}", max_length = 48, eval_batch_size = 4, show_progress = false, device = "cpu" }}
[[stages]]
name = "labels"
system = "nli-verifier"
depth = 5
options = {{ model = "{nli}", label_map = ["0=Supports", "1=Refutes", "2=Not Enough Information"], max_length = 48, batch_size = 4, device = "cpu" }}
'''  # noqa: E501 (TOML inline tables stay on one line)
    local = pipeline_outputs(config, corpus, queries, None)
    monkeypatch.setenv("EVALKIT_CACHE", str(tmp_path / "ray-cache"))  # nothing cached: DocT5Query generates again
    engine = get_engine("ray", EngineOptions(concurrency=2, chunk_batches=1))
    distributed = pipeline_outputs(config, corpus, queries, engine)
    assert distributed.keys() == local.keys() and "labels.labels" in local
    for name in local:
        assert distributed[name] == local[name], name
    # every model stage went through the engine: windows, expansions, pairs, probabilities; BM25 as query blocks
    assert set(engine.stats.items) == {"hits", "generate", "embed_sequences", "score_pairs", "probability_matrix"}
    assert engine.stats.items["generate"] == 12 and engine.stats.items["hits"] == 2 * 6 and engine.stats.from_checkpoint == 0


def keyword_labeler() -> Labeler:
    """A third-party style labeler implementing label_claim only (distributed in units of whole claims); defined
    in a function so Ray ships the class by value (an installed plugin is imported by the workers instead)."""

    class KeywordLabeler(Labeler):
        name = "keyword-labeler"

        def label_claim(self, claim, texts):
            return ["Supports" if "ice" in t else "Refutes" if "risk" in t else "NEI" for t in texts]

    return KeywordLabeler()


@pytest.mark.parametrize("strategy", ["one-step", "batched"])
def test_labelers_on_ray_equal_local(strategy, ray_session, tmp_path, monkeypatch):
    """The LLM verifier's prompts (through an OpenAI-compatible server) and a label_claim plugin, local vs Ray."""
    from support.fake_llm_server import FakeChatServer
    from support.helpers import sibling_tests

    cases = sibling_tests("tasks/test_verification.py")
    data, oracle = cases.data, cases.oracle

    corpus, queries, run, _ = data(4, 9)
    with FakeChatServer(oracle) as server:
        for cache in ("local", "ray"):  # separate answer caches: the Ray actors really ask the server
            monkeypatch.setenv("EVALKIT_CACHE", str(tmp_path / cache))
            engine = get_engine("ray", EngineOptions(concurrency=2, chunk_batches=1)) if cache == "ray" else LOCAL
            labelers = [load_system("llm-verifier", backend="openai", model="fake", base_url=server.base_url, strategy=strategy, retry_wait=0.01,
                                    batch_pairs=3, min_nei_share=0.2), keyword_labeler()]
            outputs = []
            for labeler in labelers:
                outputs.append(labeler.label(corpus, queries, run, depth=7, engine=engine).labels.tolist())
            if cache == "local":
                local, asked = outputs, len(server.requests)
            else:
                assert outputs == local
                assert len(server.requests) == 2 * asked
                assert engine.stats.items == {"strategy_labels": 28, "label_claims": 28}


def test_rankgpt_on_ray_equals_local(ray_session, tmp_path, monkeypatch):
    """RankGPT's sliding windows, whole queries per unit, through an OpenAI-compatible server; alpha fusion after."""
    from support.fake_llm_server import FakeChatServer
    from support.helpers import sibling_tests

    cases = sibling_tests("systems/test_rankgpt.py")
    corpus_queries_run, oracle = cases.corpus_queries_run, cases.oracle

    corpus, _, run = corpus_queries_run(23)
    queries = Queries([f"q{i}" for i in range(9)], [f"query {i}" for i in range(9)])
    run = Run.from_scores({q: {f"d{i:02d}": float((i * 5 + j) % 23) for i in range(23)} for j, q in enumerate(queries.ids)}, name="bm25")
    with FakeChatServer(oracle) as server:
        outputs = {}
        for cache in ("local", "ray"):
            monkeypatch.setenv("EVALKIT_CACHE", str(tmp_path / cache))
            system = load_system("rankgpt", backend="openai", model="fake", base_url=server.base_url, retry_wait=0.01,
                                 window=8, step=4, passage_words=3, fuse_alpha=0.4)
            engine = get_engine("ray", EngineOptions(concurrency=2, chunk_batches=1)) if cache == "ray" else LOCAL
            outputs[cache] = format_trec_run(system.rerank(corpus, queries, run, depth=20, engine=engine), tag="rankgpt")
            if cache == "local":
                asked = len(server.requests)
        assert outputs["ray"] == outputs["local"]
        assert len(server.requests) == 2 * asked and engine.stats.items == {"permute_queries": 9}
