"""Every stage kind in one pipeline, fitted and run through ``evalkit run`` on tiny local models.

BM25 -> dense (fitted) + RRF -> cross-encoder (fitted) -> RankGPT (tiny causal LM,
alpha fusion) -> NLI verifier labels: the models are random, so only the plumbing
is checked (fitting order, depths, manifest, labels file), not the quality.
"""
from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")
pytest.importorskip("sentence_transformers")

from support.helpers import run_cli  # noqa: E402
from support.tiny_models import tiny_bert, tiny_causal_lm  # noqa: E402

pytestmark = pytest.mark.neural  # runs torch models (tiny local checkpoints)

DOCS = [
    ("d0", "Sea level", "Sea level rise is accelerating because of melting ice sheets."),
    ("d1", "Vitamin D", "Vitamin D supplementation reduces the risk of fractures in older adults."),
    ("d2", "Coal", "CO2 emissions from coal plants increased global temperatures."),
    ("d3", "Vaccines", "The vaccine showed 95 percent efficacy in the clinical trial."),
    ("d4", "Arctic", "Arctic sea ice extent reached a record low in September."),
    ("d5", "Genes", "Gene expression in tumour cells is regulated by microRNA."),
    ("d6", "Coral", "Coral reefs bleach when ocean temperatures rise."),
    ("d7", "Statins", "Statins lower cholesterol and cardiovascular risk."),
    ("d8", "Sleep", "Sleep deprivation impairs memory consolidation."),
    ("d9", "Exercise", "Exercise improves insulin sensitivity in diabetes."),
]
TRAIN = {"t1": ("melting ice raises the sea", "d0"), "t2": ("vitamin d and broken bones", "d1"),
         "t3": ("coal burning warms the planet", "d2"), "t4": ("reefs bleach in warm water", "d6")}
TEST = {"q1": ("arctic ice at a record low", "d4"), "q2": ("statins and cholesterol", "d7")}


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_all_stage_kinds_fit_and_run_from_a_config(tmp_path):
    texts = [t for _, title, t in DOCS] + [q for q, _ in {**TRAIN, **TEST}.values()]
    encoder = tiny_bert(tmp_path / "encoder", texts=texts)
    nli = tiny_bert(tmp_path / "nli", texts=texts, num_labels=3)
    llm = tiny_causal_lm(tmp_path / "llm", texts=texts)
    corpus = write_jsonl(tmp_path / "corpus.jsonl", [{"_id": i, "title": title, "text": t} for i, title, t in DOCS])
    queries = write_jsonl(tmp_path / "queries.jsonl", [{"_id": q, "text": t} for q, (t, _) in {**TRAIN, **TEST}.items()])
    (tmp_path / "train.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t1\n" for q, (_, d) in TRAIN.items()))
    (tmp_path / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t1\n" for q, (_, d) in TEST.items()))
    config = tmp_path / "all.toml"
    config.write_text(f'''
name = "all-kinds"
seed = 3
[[stages]]
name = "bm25"
system = "bm25"
k = 10
options = {{ analyzer = "simple" }}
[[stages]]
name = "dense"
system = "dense"
k = 10
options = {{ model = "{encoder}", query_prefix = "", passage_prefix = "", chunking = "truncate", max_seq_length = 64, epochs = 1, train_batch_size = 2, n_hard_negatives = 1, embedding_cache = "none", device = "cpu" }}
save = "{tmp_path / 'saved-dense'}"
[[stages]]
name = "rrf"
fuse = ["bm25", "dense"]
method = "rrf"
[[stages]]
name = "ce"
system = "cross-encoder"
depth = 8
options = {{ model = "{encoder}", max_length = 64, epochs = 1, batch_size = 4, hard_negatives = 1, random_negatives = 1, show_progress = false, device = "cpu" }}
[[stages]]
name = "rankgpt"
system = "rankgpt"
depth = 5
options = {{ model = "{llm}", window = 3, step = 2, passage_words = 8, max_new_tokens = 12, fuse_alpha = 0.4, device = "cpu" }}
[[stages]]
name = "labels"
system = "nli-verifier"
depth = 3
options = {{ model = "{nli}", label_map = ["0=Supports", "1=Refutes", "2=Not Enough Information"], max_length = 64, device = "cpu" }}
''')  # noqa: E501 (TOML inline tables stay on one line)
    out = tmp_path / "run.trec"
    done = run_cli("run", config, "--corpus", corpus, "--queries", queries, "--train-queries", queries, "--train-qrels",
                   tmp_path / "train.tsv", "--gold", tmp_path / "test.tsv", "--out", out, "--report", tmp_path / "all.md",
                   env={"EVALKIT_CACHE": str(tmp_path / "cache")})
    assert done.returncode == 0, done.stderr[-3000:]
    err = done.stderr
    assert err.index("fitting dense") < err.index("running rrf on the training queries") < err.index("fitting ce")
    assert "fitting rankgpt" not in err and "running the 2 of 6 queries judged" in err
    assert (tmp_path / "saved-dense" / "evalkit-system.json").exists()
    lines = out.read_text().splitlines()
    assert {line.split()[0] for line in lines} == {"q1", "q2"}
    labels = (tmp_path / "run.trec.labels.tsv").read_text().splitlines()
    assert labels[0] == "query_id\tdoc_id\trank\tlabel" and len(labels) == 1 + 2 * 3
    assert {row.split("\t")[3] for row in labels[1:]} <= {"Supports", "Refutes", "Not Enough Information"}
    reranked = [line.split()[2] for line in (tmp_path / "run.ce.trec").read_text().splitlines() if line.startswith("q1 ")]
    fused = [line.split()[2] for line in (tmp_path / "run.rrf.trec").read_text().splitlines() if line.startswith("q1 ")]
    assert reranked[8:] == fused[8:] and sorted(reranked[:8]) == sorted(fused[:8])  # only the top depth moves
    manifest = json.loads((tmp_path / "run.trec.manifest.json").read_text())
    assert [s["name"] for s in manifest["options"]["config"]["stages"]] == ["bm25", "dense", "rrf", "ce", "rankgpt", "labels"]
    assert {e["role"] for e in manifest["inputs"]} == {"corpus", "queries", "train-queries", "train-qrels"}
    assert "all-kinds.rankgpt" in (tmp_path / "all.md").read_text() or "run.rankgpt" in (tmp_path / "all.md").read_text()
    seconds = manifest["options"]["stage_seconds"]  # where the time went: fits, training-query runs, runs
    assert {"fit dense", "fit ce", "run rankgpt", "run labels"} <= set(seconds) and all(v >= 0 for v in seconds.values())
    cpu = manifest["options"]["stage_cpu_seconds"]  # what it cost: CPU seconds of every process doing the work
    assert set(cpu) == set(seconds) and cpu["fit dense"] > 0 and manifest["options"]["command_seconds"] >= sum(seconds.values())
    assert "## Time per stage" in (tmp_path / "all.md").read_text() and "| fit ce |" in (tmp_path / "all.md").read_text()
    assert "time per stage (wall / CPU): " in err


def test_cli_reranks_a_run_file_with_one_system(tmp_path):
    encoder = tiny_bert(tmp_path / "encoder", texts=[t for _, _, t in DOCS])
    corpus = write_jsonl(tmp_path / "corpus.jsonl", [{"_id": i, "title": title, "text": t} for i, title, t in DOCS])
    queries = write_jsonl(tmp_path / "queries.jsonl", [{"_id": q, "text": t} for q, (t, _) in TEST.items()])
    first = tmp_path / "first.trec"  # another team's first stage: q1 only, three documents
    first.write_text("q1 Q0 d4 1 9.0 other\nq1 Q0 d0 2 8.0 other\nq1 Q0 d6 3 7.0 other\n")
    out = tmp_path / "ce.trec"
    done = run_cli("run", "cross-encoder", "--input", first, "--set", f"model={encoder}", "--set", "depth=2", "--set", "device=cpu",
                   "--corpus", corpus, "--queries", queries, "--out", out)
    assert done.returncode == 0, done.stderr
    assert "1 of 2 queries are not in" in done.stderr
    rows = [line.split() for line in out.read_text().splitlines()]
    assert {r[0] for r in rows} == {"q1"} and [r[2] for r in rows][2] == "d6"  # top 2 re-scored, the third stays third
    assert sorted(r[2] for r in rows[:2]) == ["d0", "d4"]
    inputs = json.loads((tmp_path / "ce.trec.manifest.json").read_text())["inputs"]
    assert [e["role"] for e in inputs] == ["corpus", "queries", "run:input"] and len(inputs[2]["sha256"]) == 64
