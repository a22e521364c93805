"""Collection and query readers: every format on inline files and on the real collections."""
from __future__ import annotations

import json
import pickle

import pytest

from support.helpers import SHARED, shared_or_skip
from evalkit.io.formats.collections import detect_collection as detect, read_corpus, read_queries
from evalkit.core.errors import InputError, UsageError


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_beir_jsonl_corpus_and_queries(tmp_path):
    jsonl = '{"_id": "d1", "title": "Sea", "text": "level rise", "metadata": {}}\n\n{"_id": "d2", "title": "", "text": "ice"}\n'
    corpus = read_corpus(write(tmp_path, "c.jsonl", jsonl))
    assert corpus.ids == ["d1", "d2"] and corpus.fields == {"title": ["Sea", ""], "text": ["level rise", "ice"]}
    assert corpus.text(0) == "Sea level rise" and corpus.source.format == "beir-jsonl"
    queries = read_queries(write(tmp_path, "q.jsonl", '{"_id": "q1", "text": "sea?", "metadata": {"d1": [{"label": "SUPPORT"}]}}\n'))
    assert queries.as_dict() == {"q1": "sea?"} and queries.metadata == {"q1": {"d1": [{"label": "SUPPORT"}]}}


def test_table_aliases_and_mapping(tmp_path):
    tsv = write(tmp_path, "c.tsv", "cord_uid\ttitle\tabstract\tjournal\tsource_x\nab12\tMasks\tThey work.\tBMJ\tPMC\n")
    corpus = read_corpus(tsv)
    assert corpus.fields == {"title": ["Masks"], "text": ["They work."], "journal": ["BMJ"], "source": ["PMC"]}
    csv = write(tmp_path, "c.csv", 'paper,summary,headline\np1,"a, quoted body",T\n')
    mapped = read_corpus(csv, columns=["id=paper", "text=summary", "title=headline"])
    assert mapped.ids == ["p1"] and mapped.fields["text"] == ["a, quoted body"] and mapped.fields["title"] == ["T"]
    with pytest.raises(InputError, match="c.csv:2: no id column"):
        read_corpus(csv)
    with pytest.raises(UsageError, match="FIELD=COLUMN"):
        read_corpus(csv, columns=["text"])


def test_4b_query_file_takes_post_id_not_cord_uid(tmp_path):
    queries = read_queries(write(tmp_path, "q.tsv", "post_id\ttweet_text\tcord_uid\n7\tmasks work #covid\tab12\n"))
    assert queries.ids == ["7"] and queries.texts == ["masks work #covid"]


def test_parquet(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "c.parquet"
    pq.write_table(pa.table({"doc_id": ["a", "b"], "title": ["x", "y"], "abstract": ["1", "2"]}), path)
    assert read_corpus(path).fields == {"title": ["x", "y"], "text": ["1", "2"]}


def test_pickle_needs_trust(tmp_path):
    import pandas as pd

    path = tmp_path / "collection.pkl"
    pd.DataFrame({"cord_uid": ["u1"], "title": ["t"], "abstract": ["a"], "authors": ["X, Y."]}).to_pickle(path)
    with pytest.raises(UsageError, match="collection.pkl: is a pickle; unpickling runs code.*--trust-pickle"):
        read_corpus(path)
    corpus = read_corpus(path, trust_pickle=True)
    assert corpus.ids == ["u1"] and corpus.fields["authors"] == ["X, Y."]
    raw = tmp_path / "list.pkl"
    raw.write_bytes(pickle.dumps([1, 2]))
    with pytest.raises(InputError, match="holds a list, not a table"):
        read_corpus(raw, trust_pickle=True)


def test_trec_sgml_and_smart(tmp_path):
    sgml = write(tmp_path, "docs.sgml",
                 "<DOC>\n<DOCNO> D-1 </DOCNO>\n<TITLE>Heat</TITLE>\n<TEXT>waves <b>kill</b></TEXT>\n</DOC>\n<DOC><DOCNO>D-2</DOCNO>cold</DOC>\n")
    corpus = read_corpus(sgml)
    assert corpus.ids == ["D-1", "D-2"] and corpus.fields["title"] == ["Heat", ""] and corpus.fields["text"] == ["waves kill", "cold"]
    smart = write(tmp_path, "q.qry", ".I 1\n.T\nLens\n.W\n the crystalline lens\n in humans.\n.X\n3 4\n.I 2\n.W\nblood oxygen\n")
    queries = read_queries(smart)
    assert queries.ids == ["1", "2"] and queries.texts == ["the crystalline lens in humans.", "blood oxygen"]


def test_id_text(tmp_path):
    corpus = read_corpus(write(tmp_path, "x.docs", "MED-1\tstatin breast cancer\nMED-2\tvitamin d\n"))
    assert corpus.ids == ["MED-1", "MED-2"] and corpus.fields == {"text": ["statin breast cancer", "vitamin d"]}


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("dup.jsonl", '{"_id": "d1", "text": "a"}\n{"_id": "d1", "text": "b"}\n', "dup.jsonl:2: duplicate document id 'd1' (first on line 1)"),
        ("empty.jsonl", '{"_id": "d1", "text": "a"}\n{"_id": "d2", "title": " ", "text": ""}\n', "empty.jsonl:2: document 'd2' has no text"),
        ("bad.jsonl", '{"_id": "d1", "text": "a"}\n{"_id": "d2", \n', "bad.jsonl:2: not valid JSON"),
        ("noid.jsonl", '{"title": "x", "text": "a"}\n', "noid.jsonl:1: no id column"),
        ("fields.tsv", "doc_id\ttext\nd1\ta\textra\n", "fields.tsv:2: expected 2 tab-separated fields as in the header, found 3"),
        ("nothing.jsonl", "\n\n", "nothing.jsonl: no documents found"),
    ],
)
def test_bad_collections(tmp_path, name, text, message):
    with pytest.raises(InputError) as info:
        read_corpus(write(tmp_path, name, text))
    assert message in info.value.one_line()


def test_unknown_format_and_missing_file(tmp_path):
    with pytest.raises(UsageError, match="cannot tell the collection format"):
        read_corpus(write(tmp_path, "x.txt", "just words\n"))
    with pytest.raises(InputError, match="no such file"):
        read_corpus(tmp_path / "absent.jsonl")
    with pytest.raises(UsageError, match="unknown collection format"):
        read_corpus(write(tmp_path, "c.jsonl", '{"_id": "d", "text": "a"}\n'), fmt="xml")


def test_detect():
    assert detect("a.pkl", b"") == "pickle" and detect("x", b"PAR1...") == "parquet"
    assert detect("x", b'\xef\xbb\xbf{"_id"') == "beir-jsonl" and detect("x", b".I 1\n") == "smart"
    assert detect("x.gz", b"<doc>") == "trec-sgml" and detect("x", b"post_id,tweet_text") == "table" and detect("x", b"a\tb") == "id-text"
    assert detect("x", b"paper\tbody", id_column="Paper") == "table" and detect("x.csv", b"a;b") == "table"


def test_collection_formats_are_registered_like_run_and_gold_formats(cli):
    from evalkit.io.formats import formats

    names = [f.name for f in formats("collection")]
    assert names == ["pickle", "parquet", "beir-jsonl", "trec-sgml", "smart", "table", "id-text"]  # sniffing order
    listed = cli("formats")
    assert listed.returncode == 0 and all(f"\n{name} " in listed.stdout for name in names)
    assert listed.stdout.startswith("trec-qrels ")  # run and gold formats first, as before
    systems = cli("systems")
    assert "collection and query formats: " + ", ".join(names) in systems.stdout


@pytest.mark.realdata
@pytest.mark.parametrize(
    "corpus, queries, n_docs, n_queries, fmt",
    [
        ("scifact/corpus.jsonl", "scifact/queries.jsonl", 5183, 1109, "beir-jsonl"),
        ("medline/MED.ALL", "medline/MED.QRY", 1033, 30, "trec-sgml"),
        ("nfcorpus/test.docs", "nfcorpus/test.all.queries", 3162, 325, "id-text"),
    ],
)
def test_real_collections(corpus, queries, n_docs, n_queries, fmt):
    docs = read_corpus(shared_or_skip(SHARED / corpus))
    assert len(docs) == n_docs and docs.source.format == fmt and docs.source.sha256
    assert len(read_queries(SHARED / queries)) == n_queries


@pytest.mark.realdata
def test_real_4b_query_file():
    queries = read_queries(shared_or_skip(SHARED / "checkthat2025-4b/queries/subtask4b_query_tweets_dev.tsv"))
    assert len(queries) == 1400 and queries.ids[0] == "16"


@pytest.mark.realdata
def test_scifact_metadata_keeps_evidence():
    queries = read_queries(shared_or_skip(SHARED / "scifact/queries.jsonl"))
    labels = {e["label"] for meta in queries.metadata.values() for items in meta.values() for e in items}
    assert labels == {"SUPPORT", "CONTRADICT"}
    assert json.dumps(queries.metadata["2"])  # plain data, never objects
