"""irds:<dataset id>: gold, queries and corpora read through ir_datasets, never a mock of it.

Two ways to have a dataset offline, both ir_datasets' own: a dataset registered from local files through its registry
(``ir_datasets.registry.register`` with its Beir* components over ``LocalDownload``s), in this process; and a prepared
ir_datasets home (``IR_DATASETS_HOME``) holding the cache files ir_datasets itself writes for ``beir/scifact/test``
(its qrels and queries), so the real id works in a separate ``evalkit`` process.
"""
from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from support.helpers import SHARED, run_cli, shared_or_skip

ir_datasets = pytest.importorskip("ir_datasets")

import evalkit  # noqa: E402
from evalkit.core.errors import UsageError  # noqa: E402
from evalkit.io.formats.collections import read_corpus, read_queries  # noqa: E402

SCIFACT = SHARED / "scifact"


@pytest.fixture(autouse=True)
def irds_home(tmp_path, monkeypatch):
    """ir_datasets keeps what it builds (docstores, caches) in its home: a fresh one per test, never the user's."""
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "irds-home-of-test"))


def write_tiny(folder: Path) -> dict[str, Path]:
    """A small BEIR-layout dataset: 3 queries, 6 documents, graded judgments."""
    folder.mkdir(parents=True, exist_ok=True)
    corpus = folder / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"_id": f"d{i}", "title": f"title {i}", "text": f"text of document {i}"}) + "\n"
                              for i in range(6)))
    queries = folder / "queries.jsonl"
    queries.write_text("".join(json.dumps({"_id": f"q{i}", "text": f"query {i}"}) + "\n" for i in range(3)))
    qrels = folder / "test.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq0\td0\t2\nq0\td3\t1\nq1\td1\t1\nq1\td4\t0\nq2\td5\t2\n")
    return {"corpus": corpus, "queries": queries, "qrels": qrels}


def register_beir(files: dict[str, Path]) -> str:
    """Register ``files`` under a fresh id through ir_datasets' registry (its own classes over local files)."""
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.datasets.beir import BeirDocs, BeirQrels, BeirQueries, BeirTitleDoc
    from ir_datasets.formats import GenericQuery
    from ir_datasets.util import LocalDownload

    name = f"evalkit-test/{uuid.uuid4().hex[:8]}"
    dataset = Dataset(
        BeirDocs(name, LocalDownload(files["corpus"]), BeirTitleDoc),
        BeirQueries(name, LocalDownload(files["queries"]), GenericQuery),
        BeirQrels(LocalDownload(files["qrels"]), qrels_defs={}),
    )
    ir_datasets.registry.register(name, dataset)
    return name


@pytest.fixture
def tiny(tmp_path):
    files = write_tiny(tmp_path / "tiny")
    return register_beir(files), files


RUN = {"q0": {"d0": 3.0, "d1": 2.0, "d3": 1.0}, "q1": {"d4": 5.0, "d1": 4.0}, "q2": {"d2": 1.0, "d5": 0.5}}


def test_a_registered_dataset_scores_as_the_same_file(tiny):
    name, files = tiny
    from_file = evalkit.score(RUN, str(files["qrels"]), task="trec", metrics="ndcg@10 map mrr recall@5 bpref")
    from_irds = evalkit.score(RUN, f"irds:{name}", task="trec", metrics="ndcg@10 map mrr recall@5 bpref")
    assert from_irds.means == from_file.means
    gold = next(entry for entry in from_irds.manifest["inputs"] if entry["role"] == "gold")
    assert gold["path"] == f"irds:{name}" and gold["dataset"] == name and gold["ir_datasets"] == ir_datasets.__version__
    lines = "".join(f"{q} 0 {d} {g}\n" for q, d, g in (("q0", "d0", 2), ("q0", "d3", 1), ("q1", "d1", 1), ("q1", "d4", 0), ("q2", "d5", 2)))
    import hashlib

    assert gold["sha256"] == hashlib.sha256(lines.encode()).hexdigest()  # what was read, as TREC qrels lines


def test_queries_and_documents_stream_into_the_collection_readers(tiny):
    name, files = tiny
    queries, same = read_queries(f"irds:{name}"), read_queries(files["queries"])
    assert queries.ids == same.ids and queries.texts == same.texts
    corpus, same_corpus = read_corpus(f"irds:{name}"), read_corpus(files["corpus"])
    assert corpus.ids == same_corpus.ids and corpus.fields["text"] == same_corpus.fields["text"]
    assert corpus.fields["title"] == same_corpus.fields["title"]
    assert corpus.source.path == f"irds:{name}" and len(corpus.source.sha256) == 64


def test_errors_are_one_line(tmp_path):
    with pytest.raises(UsageError, match="knows no dataset of that id"):
        evalkit.score(RUN, "irds:no-such/dataset-at-all")
    with pytest.raises(UsageError, match="write a dataset id"):
        evalkit.score(RUN, "irds:")
    # a part that must be downloaded by hand: ir_datasets raises FileNotFoundError after its message
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.datasets.beir import BeirQrels
    from ir_datasets.util import LocalDownload

    manual = f"evalkit-test/manual-{uuid.uuid4().hex[:8]}"
    ir_datasets.registry.register(manual, Dataset(BeirQrels(LocalDownload(tmp_path / "absent.tsv", "put the file here"),
                                                            qrels_defs={})))
    with pytest.raises(UsageError, match="needs a file you download yourself"):
        evalkit.score(RUN, f"irds:{manual}")
    # a download that fails (a closed port on this machine): one line, not a traceback
    from ir_datasets.util.download import Download, RequestsDownload

    offline = f"evalkit-test/offline-{uuid.uuid4().hex[:8]}"
    source = Download([RequestsDownload("http://127.0.0.1:9/qrels.tsv")], cache_path=str(tmp_path / "cache.tsv"))
    ir_datasets.registry.register(offline, Dataset(BeirQrels(source, qrels_defs={})))
    with pytest.raises(UsageError, match="could not read it"):
        evalkit.score(RUN, f"irds:{offline}")


def test_a_dataset_without_judgments_says_so(tiny, tmp_path):
    name, files = tiny
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.datasets.beir import BeirQueries
    from ir_datasets.formats import GenericQuery
    from ir_datasets.util import LocalDownload

    only_queries = f"evalkit-test/queries-{uuid.uuid4().hex[:8]}"
    ir_datasets.registry.register(only_queries, Dataset(BeirQueries(only_queries, LocalDownload(files["queries"]), GenericQuery)))
    with pytest.raises(UsageError, match="has no judgments"):
        evalkit.score(RUN, f"irds:{only_queries}")


def test_the_command_line_names_the_extra_when_ir_datasets_is_missing(tmp_path):
    code = ("import sys; sys.modules['ir_datasets'] = None\n"
            "from evalkit.cli import entry_point\n"
            "sys.argv = ['evalkit', 'score', 'run.trec', 'irds:beir/scifact/test']\nentry_point()\n")
    (tmp_path / "run.trec").write_text("1 Q0 d1 1 1.0 r\n")
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().count("\n") == 0 and "evalkit-ir[datasets]" in done.stderr and "Traceback" not in done.stderr


@pytest.fixture
def scifact_home(tmp_path):
    """An ir_datasets home prepared as ir_datasets leaves it after reading beir/scifact/test's qrels and queries."""
    qrels = shared_or_skip(SCIFACT / "qrels" / "test.tsv")
    home = tmp_path / "irds-home"
    (home / "beir" / "scifact").mkdir(parents=True)
    (home / "beir" / "scifact" / "test.qrels").symlink_to(qrels)
    (home / "beir" / "scifact" / "queries.json").symlink_to(SCIFACT / "queries.jsonl")
    return home


def scifact_run(path: Path) -> Path:
    """A seeded run over the SciFact test claims: some relevant abstracts among random ones, with ties."""
    import random

    rng = random.Random(7)
    rows = [line.split("\t") for line in (SCIFACT / "qrels" / "test.tsv").read_text().splitlines()[1:]]
    docs = [json.loads(line)["_id"] for line in (SCIFACT / "corpus.jsonl").read_text().splitlines()]
    relevant: dict[str, list[str]] = {}
    for query, doc, _ in rows:
        relevant.setdefault(query, []).append(doc)
    with path.open("w") as out:
        for query in sorted(relevant):
            pool = set(rng.sample(docs, 40)) | {d for d in relevant[query] if rng.random() < 0.7}
            for rank, doc in enumerate(sorted(pool, key=lambda _: rng.random()), start=1):
                out.write(f"{query} Q0 {doc} {rank} {round(rng.random() * 5, 1)} seeded\n")
    return path


@pytest.mark.realdata
def test_scifact_by_its_ir_datasets_id_gives_the_files_figures_byte_for_byte(scifact_home, tmp_path):
    run = scifact_run(tmp_path / "run.trec")
    env = {"IR_DATASETS_HOME": str(scifact_home)}
    gold_file = str(SCIFACT / "qrels" / "test.tsv")
    for output in ("tsv", "trec_eval"):
        by_id = run_cli("score", run, "irds:beir/scifact/test", "--task", "beir", "-o", output, env=env)
        by_file = run_cli("score", run, gold_file, "--task", "beir", "-o", output, env=env)
        assert by_id.returncode == 0 == by_file.returncode, by_id.stderr + by_file.stderr
        assert by_id.stdout == by_file.stdout
    by_id = json.loads(run_cli("score", run, "irds:beir/scifact/test", "--task", "beir", "-o", "json", env=env).stdout)
    by_file = json.loads(run_cli("score", run, gold_file, "--task", "beir", "-o", "json", env=env).stdout)
    id_gold, file_gold = (next(e for e in d["manifest"]["inputs"] if e["role"] == "gold") for d in (by_id, by_file))
    assert id_gold["dataset"] == "beir/scifact/test" and id_gold["path"] == "irds:beir/scifact/test"
    for data in (by_id, by_file):
        data.pop("manifest")
    assert by_id == by_file  # the same figures; only the manifest's source differs


@pytest.mark.realdata
def test_an_ir_datasets_id_picks_its_profile_and_says_why(scifact_home, tmp_path):
    run = scifact_run(tmp_path / "run.trec")
    done = run_cli("score", run, "irds:beir/scifact/test", env={"IR_DATASETS_HOME": str(scifact_home)})
    assert done.returncode == 0, done.stderr
    assert "task beir: the evaluation profile of ir_datasets id beir/scifact/test (its pattern beir/*)" in done.stdout
    plain = run_cli("score", run, str(SCIFACT / "qrels" / "test.tsv"), "-m", "ndcg@10 recall@100")
    figure = next(line for line in plain.stdout.splitlines() if line.startswith("nDCG@10"))
    assert figure.split()[1] in done.stdout  # no SciFact claim id is an abstract id: BEIR's rule changes nothing here


@pytest.mark.realdata
def test_pool_and_run_take_dataset_queries_and_corpus(tmp_path):
    """SciFact registered through ir_datasets' registry: BM25 over irds: corpus and queries equals BM25 over the files."""
    pytest.importorskip("rank_bm25")
    shared_or_skip(SCIFACT / "corpus.jsonl")
    name = register_beir({"corpus": SCIFACT / "corpus.jsonl", "queries": SCIFACT / "queries.jsonl",
                          "qrels": SCIFACT / "qrels" / "test.tsv"})
    corpus, same = read_corpus(f"irds:{name}"), read_corpus(SCIFACT / "corpus.jsonl")
    assert corpus.ids == same.ids and corpus.fields["text"] == same.fields["text"] and len(corpus) == 5183
    queries = read_queries(f"irds:{name}")
    assert queries.as_dict() == read_queries(SCIFACT / "queries.jsonl").as_dict()


def without_manifest(text: str) -> dict:
    """A JSON output without its source: the manifest, and the gold named as given."""
    data = json.loads(text)
    data.pop("manifest", None)
    data.pop("gold", None)
    return data


@pytest.mark.realdata
def test_run_compare_leaderboard_pool_and_a_bundle_take_dataset_ids(scifact_home, tmp_path):
    """The commands that take a gold, queries or a corpus read an irds: id as they read the same data as a file."""
    pytest.importorskip("rank_bm25")
    env = {"IR_DATASETS_HOME": str(scifact_home)}
    gold_id, gold_file, queries_file = "irds:beir/scifact/test", str(SCIFACT / "qrels" / "test.tsv"), str(SCIFACT / "queries.jsonl")
    corpus = str(SCIFACT / "corpus.jsonl")
    by_id = run_cli("run", "bm25", "--corpus", corpus, "--queries", gold_id, "--gold", gold_id, "--out", tmp_path / "a.trec", env=env)
    by_file = run_cli("run", "bm25", "--corpus", corpus, "--queries", queries_file, "--gold", gold_file, "--out", tmp_path / "b.trec",
                      env=env)
    assert by_id.returncode == 0 == by_file.returncode, by_id.stderr + by_file.stderr
    assert (tmp_path / "a.trec").read_bytes() == (tmp_path / "b.trec").read_bytes()
    assert "task beir: the evaluation profile of ir_datasets id beir/scifact/test" in by_id.stdout
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "bm25.trec").write_bytes((tmp_path / "a.trec").read_bytes())
    scifact_run(runs / "seeded.trec")
    compared = [run_cli("compare", gold, runs / "bm25.trec", runs / "seeded.trec", "--task", "beir", env=env).stdout
                for gold in (gold_id, gold_file)]
    assert compared[0] == compared[1] and "bm25" in compared[0]
    boards = [run_cli("leaderboard", runs, "-g", gold, "--task", "beir", "-o", "json", env=env) for gold in (gold_id, gold_file)]
    assert boards[0].returncode == 0, boards[0].stderr
    assert without_manifest(boards[0].stdout) == without_manifest(boards[1].stdout)
    sheets = []
    for name, queries in (("id", gold_id), ("file", queries_file)):
        done = run_cli("pool", runs / "bm25.trec", runs / "seeded.trec", "-k", "3", "--queries", queries, "--out", tmp_path / f"{name}.tsv",
                       env=env)
        assert done.returncode == 0, done.stderr
        sheets.append((tmp_path / f"{name}.tsv").read_text())
    assert sheets[0] == sheets[1] and "query_text" in sheets[0].splitlines()[0]
    bundle = tmp_path / "bundle.zip"
    built = run_cli("competition", "bundle", "beir", "--phase", f"test:{gold_id}", "--out", bundle, env=env)
    assert built.returncode == 0, built.stderr
    import zipfile

    with zipfile.ZipFile(bundle) as archive:
        names = archive.namelist()
        assert "reference_data_0_test.zip" in names
        manifest = json.loads(archive.read("evalkit-manifest.json"))
    assert any(entry.get("dataset") == "beir/scifact/test" for entry in manifest["inputs"])


def test_a_composite_id_is_the_union_of_its_parts_with_prefixed_ids(tmp_path, monkeypatch):
    """irds:beir/cqadupstack reads its 12 forums; here two registered forums stand in for them (evalkit's table, not
    ir_datasets, is what is replaced), and the profile macro-averages over the forums."""
    from evalkit.io.datasets import irds

    first = register_beir(write_tiny(tmp_path / "android"))
    second_files = write_tiny(tmp_path / "english")
    second_files["qrels"].write_text("query-id\tcorpus-id\tscore\nq0\td1\t1\nq1\td2\t1\nq2\td3\t1\n")
    second = register_beir(second_files)
    monkeypatch.setitem(irds.COMPOSITES, "evalkit-test/two-forums", (first, second))
    qrels = evalkit.read_qrels("irds:evalkit-test/two-forums")
    prefixes = {first.rsplit("/", 1)[1], second.rsplit("/", 1)[1]}
    assert {q.split("/")[0] for q in qrels.query_ids.tolist()} == prefixes
    corpus = read_corpus("irds:evalkit-test/two-forums")
    assert len(corpus) == 12 and {d.split("/")[0] for d in corpus.ids} == prefixes
    a, b = sorted(prefixes, key=lambda p: p != first.rsplit("/", 1)[1])
    run = {f"{a}/q0": {f"{a}/d0": 1.0}, f"{a}/q1": {f"{a}/d1": 1.0}, f"{a}/q2": {f"{a}/d5": 1.0},
           f"{b}/q0": {f"{b}/x": 1.0}, f"{b}/q1": {f"{b}/x": 1.0}, f"{b}/q2": {f"{b}/x": 1.0}}

    from evalkit.tasks import get_task

    class TwoForums(type(get_task("beir-cqadupstack"))):
        name = "two-forums"
        subcollections = (a, b)

    result = TwoForums().score(evalkit.as_run(run), qrels, None)
    per_forum = [evalkit.score({q: d for q, d in run.items() if q.startswith(p + "/")}, qrels, task="beir", missing="skip", allow_partial=True).official
                 for p in (a, b)]
    assert result.official_value == pytest.approx(sum(per_forum) / 2)
