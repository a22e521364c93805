"""DocT5Query on a tiny random T5: fine-tuning, save/load, seeded expansion, the resumable JSONL cache, BM25 retrieval."""
from __future__ import annotations

import importlib.util
import json

import pytest

from evalkit.data.corpus import Corpus, Queries
from evalkit.data import Qrels
from evalkit.core.errors import InputError, UsageError
from evalkit.systems._models.modelio import weights_sha256
from evalkit.pipelines.registry import describe_options, get_system_class, load_system
from evalkit.systems import doc2query_model
from evalkit.systems.doct5query import DEFAULT_MODEL, DocT5Query, read_expansions
from support.tiny_models import tiny_t5

pytestmark = pytest.mark.neural  # runs torch models (tiny local checkpoints)

DOCS = [
    {"_id": "d1", "title": "Sea level", "text": "Sea level rise is accelerating because of melting ice sheets."},
    {"_id": "d2", "title": "Vitamin D", "text": "Vitamin D supplementation reduces the risk of fractures in older adults."},
    {"_id": "d3", "title": "Coral", "text": "Coral reefs bleach when ocean temperatures rise."},
    {"_id": "d4", "title": "Vaccine", "text": "The vaccine showed 95 percent efficacy in the clinical trial."},
    {"_id": "d5", "title": "Arctic", "text": "Arctic sea ice extent reached a record low in September."},
]
CORPUS = Corpus.from_records(DOCS, id_field="_id")
QUERIES = Queries(["q1", "q2", "q3"], ["ice sheets are melting", "vitamin D prevents fractures", "reefs bleach"])
QRELS = Qrels.from_dict({"q1": {"d1": 1, "d5": 1}, "q2": {"d2": 1, "d4": 0}, "q3": {"d3": 1}, "q9": {"d1": 1}})
SMALL = {"num_expansions": 3, "max_new_tokens": 8, "generation_batch_size": 2, "epochs": 4, "batch_size": 2, "lr": 3e-3}




@pytest.fixture(scope="module")
def t5_path(tmp_path_factory):
    return tiny_t5(tmp_path_factory.mktemp("tiny-t5") / "t5", texts=[d["text"] for d in DOCS])


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EVALKIT_CACHE", str(tmp_path / "cache"))


@pytest.fixture
def calls(monkeypatch):
    """Records the document ids of every generation batch."""
    seen: list[list[str]] = []
    real = doc2query_model.generate_expansions

    def recording(model, tokenizer, doc_ids, texts, **kwargs):
        for ids, expansions in real(model, tokenizer, doc_ids, texts, **kwargs):
            seen.append(ids)
            yield ids, expansions

    monkeypatch.setattr(doc2query_model, "generate_expansions", recording)
    return seen


def system(t5_path, **options) -> DocT5Query:
    return DocT5Query(model=t5_path, **{**SMALL, **options})


def write_lines(path, records, tail: str = "") -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + tail)


def test_registered_with_documented_options():
    assert get_system_class("doct5query") is DocT5Query
    options = {name: default for name, _, default, _ in describe_options(DocT5Query)}
    assert options["model"] == DEFAULT_MODEL == "castorini/doc2query-t5-base-msmarco"
    assert options["prefix"] == "Generate tweet: " and options["num_expansions"] == 5
    assert (options["top_k"], options["top_p"], options["no_repeat_ngram_size"], options["max_new_tokens"]) == (50, 0.95, 2, 64)
    assert {"analyzer", "k1", "b", "expansions_path", "seed", "lr", "epochs", "batch_size"} <= set(options)


def test_training_pairs_are_relevant_documents_with_their_queries(t5_path):
    pairs = system(t5_path).training_pairs(CORPUS, QUERIES, QRELS)
    # grade 0 (q2, d4) and the query missing from QUERIES (q9) are left out
    assert sorted(pairs) == sorted([
        ("Generate tweet: Sea level Sea level rise is accelerating because of melting ice sheets.", "ice sheets are melting"),
        ("Generate tweet: Arctic Arctic sea ice extent reached a record low in September.", "ice sheets are melting"),
        ("Generate tweet: Vitamin D Vitamin D supplementation reduces the risk of fractures in older adults.", "vitamin D prevents fractures"),
        ("Generate tweet: Coral Coral reefs bleach when ocean temperatures rise.", "reefs bleach"),
    ])
    with pytest.raises(UsageError, match="no relevant"):
        system(t5_path).fit(CORPUS, QUERIES, Qrels.from_dict({"qx": {"d1": 1}}))


def test_fit_trains_saves_and_loads(t5_path, tmp_path):
    model = system(t5_path, epochs=6)
    before = model.model_identity()["weights_sha256"]
    model.fit(CORPUS, QUERIES, QRELS)
    assert len(model.losses) == 6 and model.losses[-1] < model.losses[0]
    assert model.model_identity()["fitted"] and model.model_identity()["weights_sha256"] != before
    expansions = model.expand(CORPUS)

    folder = model.save(tmp_path / "saved")
    saved = json.loads((folder / "evalkit-system.json").read_text())
    assert saved["system"] == "doct5query" and saved["options"]["model"] == t5_path
    assert saved["state"]["fitted"] and saved["state"]["training_pairs"] == 4
    assert (folder / "model" / "config.json").exists()

    loaded = DocT5Query.load(folder)
    assert loaded.options == model.options and loaded.losses == model.losses
    loaded_model, loaded_tokenizer = loaded._load_model()
    assert weights_sha256(loaded_model, loaded_tokenizer) == saved["state"]["weights_sha256"]
    assert loaded.expand(CORPUS) == expansions  # same key: served from the cache file
    loaded.options.expansions_path = str(tmp_path / "fresh.jsonl")
    assert loaded.expand(CORPUS) == expansions  # regenerated from the loaded weights


def test_unfitted_save_keeps_only_options(t5_path, tmp_path):
    folder = system(t5_path, seed=7).save(tmp_path / "plain")
    assert not (folder / "model").exists()
    loaded = DocT5Query.load(folder)
    assert loaded.options.seed == 7 and loaded.model_identity()["fitted"] is False
    with pytest.raises(UsageError, match="not a saved evalkit system"):
        DocT5Query.load(tmp_path)


def test_expansions_are_seeded_per_document(t5_path, tmp_path, calls):
    first = system(t5_path, expansions_path=str(tmp_path / "a.jsonl")).expand(CORPUS)
    assert list(first) == CORPUS.ids and all(len(e) == 3 and all(isinstance(x, str) for x in e) for e in first.values())
    assert calls == [["d1", "d2"], ["d3", "d4"], ["d5"]]
    # another batching gives the same expansions: each (document, j) samples from its own generator
    again = system(t5_path, expansions_path=str(tmp_path / "b.jsonl"), generation_batch_size=3).expand(CORPUS)
    assert again == first
    other = system(t5_path, expansions_path=str(tmp_path / "c.jsonl"), seed=1).expand(CORPUS)
    assert other != first
    assert doc2query_model.row_seed(42, "d1", 0) != doc2query_model.row_seed(42, "d1", 1)


def test_default_cache_is_keyed_and_reused(t5_path, tmp_path, calls):
    first = system(t5_path).expand(CORPUS)
    files = sorted((tmp_path / "cache" / "doct5query").glob("*.jsonl"))
    assert len(files) == 1 and len(read_expansions(files[0])[0]) == 5
    settings = json.loads(files[0].with_name(files[0].name + ".settings.json").read_text())
    assert settings["corpus"] == CORPUS.fingerprint() and settings["seed"] == 42 and settings["num_expansions"] == 3
    calls.clear()
    assert system(t5_path).expand(CORPUS) == first and calls == []
    system(t5_path, num_expansions=2).expand(CORPUS)
    assert len(list((tmp_path / "cache" / "doct5query").glob("*.jsonl"))) == 2 and calls


def test_resume_generates_only_missing_documents(t5_path, tmp_path, calls):
    reference = system(t5_path, expansions_path=str(tmp_path / "ref.jsonl")).expand(CORPUS)
    calls.clear()
    path = tmp_path / "interrupted.jsonl"
    # two finished lines, then a line cut off mid-write by a killed process
    write_lines(path, [{"id": "d1", "expansions": ["kept one"]}, {"id": "d4", "expansions": ["kept four"]}],
                tail='{"id": "d2", "expansions": ["half wri')
    resumed = system(t5_path, expansions_path=str(path)).expand(CORPUS)
    assert calls == [["d2", "d3"], ["d5"]]
    assert resumed["d1"] == ["kept one"] and resumed["d4"] == ["kept four"]
    assert {d: resumed[d] for d in ("d2", "d3", "d5")} == {d: reference[d] for d in ("d2", "d3", "d5")}
    lines = path.read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["d1", "d4", "d2", "d3", "d5"]
    calls.clear()
    assert system(t5_path, expansions_path=str(path)).expand(CORPUS) == resumed and calls == []


def test_bad_expansions_files(t5_path, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "d1", "expansions": ["a"]}\nnot json\n{"id": "d2", "expansions": []}\n')
    with pytest.raises(InputError, match=r"bad.jsonl:2: not a JSON line"):
        system(t5_path, expansions_path=str(path)).expand(CORPUS)
    write_lines(path, [{"id": "d1", "expansions": "one string"}])
    with pytest.raises(InputError, match=r"bad.jsonl:1: expected"):
        read_expansions(path)
    made = tmp_path / "made.jsonl"
    system(t5_path, expansions_path=str(made)).expand(CORPUS)
    with pytest.raises(UsageError, match=r"made.jsonl: expansions made with other settings \(seed\)"):
        system(t5_path, expansions_path=str(made), seed=3).expand(CORPUS)


def test_expansions_are_indexed_by_bm25(t5_path, tmp_path, calls):
    path = tmp_path / "given.jsonl"
    write_lines(path, [{"id": d, "expansions": ["zanzibar archipelago"] if d == "d3" else ["nothing here"]}
                       for d in CORPUS.ids])
    queries = Queries(["z", "v"], ["zanzibar", "vitamin fractures"])
    retriever = system(t5_path, expansions_path=str(path), analyzer="simple", k1=1.2, b=0.5)
    assert retriever.bm25().options.fields == ["title", "text", "expansions"]
    assert (retriever.bm25().options.k1, retriever.bm25().options.b) == (1.2, 0.5)
    run = retriever.retrieve(CORPUS, queries, k=3)
    assert calls == [] and run.name == "doct5query"
    assert run.to_lists() == {"z": ["d3"], "v": ["d2"]}
    plain = load_system("bm25", analyzer="simple").retrieve(CORPUS, queries, k=3)
    assert plain.to_lists()["z"] == []


@pytest.mark.parametrize("make", ["missing", "empty", "file"])
def test_bad_model_path_is_one_line(tmp_path, make):
    target = tmp_path / "model"
    if make == "empty":
        target.mkdir()
    elif make == "file":
        target.write_text("x")
    with pytest.raises(UsageError) as info:
        DocT5Query(model=str(target)).fit(CORPUS, QUERIES, QRELS)
    assert str(target) in str(info.value) and "\n" not in info.value.one_line()


def test_broken_model_folder_and_bad_options(tmp_path):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{not json")
    with pytest.raises(UsageError, match="cannot load seq2seq model"):
        DocT5Query(model=str(broken)).expand(CORPUS)
    # a T5 whose tokenizer is only a spiece.model (castorini/doc2query-t5-base-msmarco) without sentencepiece
    spiece = tmp_path / "spiece"
    spiece.mkdir()
    (spiece / "config.json").write_text(json.dumps({"model_type": "t5", "d_model": 8, "num_heads": 1, "d_kv": 8}))
    (spiece / "tokenizer_config.json").write_text('{"tokenizer_class": "T5Tokenizer"}')
    (spiece / "spiece.model").write_bytes(b"\x00not a sentencepiece model")
    with pytest.raises(UsageError, match="cannot load seq2seq model") as info:
        DocT5Query(model=str(spiece)).expand(CORPUS)
    if importlib.util.find_spec("sentencepiece") is None:
        assert "pip install sentencepiece protobuf" in info.value.one_line()
    with pytest.raises(UsageError, match="num_expansions"):
        DocT5Query(num_expansions=0)
    with pytest.raises(UsageError, match="top_p"):
        DocT5Query(top_p=1.5)
    with pytest.raises(UsageError, match="unknown option"):
        DocT5Query(beams=3)
