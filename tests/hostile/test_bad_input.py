"""Every bad input gives one line ``FILE:LINE: problem``, exit code 2, no traceback, nothing written."""
from __future__ import annotations

import gzip
import io
import zipfile

import pytest

from support.helpers import run_cli

GOLD = "post_id\ttweet_text\tcord_uid\n1\tfirst tweet\tdocA\n2\tsecond tweet\tdocB\n"
GOOD_RUN = "post_id\tpreds\n1\t['docA', 'x']\n2\t['y', 'docB']\n"


def zip_bytes(members: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in members.items():
            archive.writestr(name, text)
    return buffer.getvalue()


BAD_RUNS = {
    "empty": (b"", "empty file"),
    "header_only": (b"post_id\tpreds\n", ":2: no data rows"),
    "missing_column": (b"post_id\tother\n1\tabc\n", ":1: missing column 'preds'"),
    "wrong_delimiter": (b"post_id preds\n1 ['docA']\n", ":1: header 'post_id preds' is not tab- or comma-separated"),
    "not_a_list": (b"post_id\tpreds\n1\tdocA docB\n", ":2: column 'preds' is not a list literal"),
    "non_string_items": (b"post_id\tpreds\n1\t['docA', 3]\n", ":2: column 'preds' holds an item that is not a string"),
    # were it run, the payload would create evalkit_pwned in the working folder (the malicious test runs in its own)
    "malicious": (b"post_id\tpreds\n1\t[__import__('os').system('touch evalkit_pwned')]\n", ":2: column 'preds' holds an item that is not a string"),
    "duplicate_query": (b"post_id\tpreds\n1\t['docA']\n1\t['docB']\n", ":3: query '1' appears twice (first on line 2)"),
    "field_count": (b"post_id\tpreds\n1\t['docA']\textra\n", ":2: expected 2 tab-separated fields"),
    "nan_score": (b"1 Q0 docA 1 nan tag\n2 Q0 docB 1 0.5 tag\n", ":1: score 'nan' is not a finite number"),
    "text_score": (b"1 Q0 docA 1 0.5 tag\n2 Q0 docB 1 high tag\n", ":2: score 'high' is not a number"),
    "trec_fields": (b"1 Q0 docA 1 0.5 tag\n2 Q0 docB 1 0.5\n", ":2: expected 6 whitespace-separated fields, found 5"),
    "non_utf8": (b"post_id\tpreds\n1\t['docA']\n2\t['d\xe9cB']\n", ":3: not UTF-8 text"),
    "zip_empty": (zip_bytes({}), "exactly one predictions file, found 0"),
    "zip_two": (zip_bytes({"a.tsv": GOOD_RUN, "b.tsv": GOOD_RUN}), "exactly one predictions file, found 2"),
    "zip_escape": (zip_bytes({"../predictions.tsv": GOOD_RUN}), "has a path outside the archive"),
    "broken_gzip": (b"\x1f\x8b\x08\x00garbage", "broken gzip data"),
    "gold_as_run": (GOLD.encode(), "looks like a gold/qrels file (checkthat-gold)"),
}


@pytest.fixture
def gold_file(tmp_path):
    path = tmp_path / "gold.tsv"
    path.write_text(GOLD)
    return path


def assert_clean_failure(result, expected: str, path=None):
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert expected in lines[0], lines[0]
    if path is not None:
        assert lines[0].startswith(str(path)), lines[0]


@pytest.mark.parametrize("case", sorted(BAD_RUNS))
def test_bad_run_files(case, tmp_path, gold_file):
    content, expected = BAD_RUNS[case]
    run = tmp_path / f"{case}.tsv"
    run.write_bytes(content)
    out, per_query = tmp_path / "out.json", tmp_path / "pq.tsv"
    result = run_cli("score", run, gold_file, "--out", out, "--per-query", per_query, "--output", "json")
    assert_clean_failure(result, expected, run)
    assert not out.exists() and not per_query.exists()
    assert not any(p.name.endswith(".tmp") for p in tmp_path.iterdir())


TREC_CASES = sorted(case for case, (content, _) in BAD_RUNS.items() if b" Q0 " in content)


def padding(line: str) -> bytes:
    """Valid lines of other queries that push a file past the pyarrow fast-path size."""
    from evalkit.io.formats.tables import FAST_PATH_BYTES

    return "".join(line.format(i=i) for i in range(FAST_PATH_BYTES // 10)).encode()


@pytest.mark.parametrize("case", TREC_CASES)
def test_bad_trec_run_files_past_the_fast_path_size(case, tmp_path, gold_file):
    """The TREC cases again, padded past FAST_PATH_BYTES: the pyarrow path refuses them with the same message."""
    content, expected = BAD_RUNS[case]
    run = tmp_path / f"{case}.trec"
    run.write_bytes(content + padding("zpad{i} Q0 x{i} 1 1.0 pad\n"))
    result = run_cli("score", run, gold_file, "--out", tmp_path / "out.json")
    assert_clean_failure(result, expected, run)
    assert not (tmp_path / "out.json").exists()


def test_malicious_literal_was_not_executed(tmp_path, gold_file):
    run = tmp_path / "m.tsv"
    run.write_bytes(BAD_RUNS["malicious"][0])
    result = run_cli("score", run, gold_file, cwd=tmp_path)  # the payload names a file of the working folder
    assert_clean_failure(result, BAD_RUNS["malicious"][1], run)
    assert not (tmp_path / "evalkit_pwned").exists()


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--metrics", "mrr@5 nosuch@3"], "unknown metric 'nosuch'"),
        (["--metrics", "mrr@0"], "the cutoff k must be a positive integer"),
        (["--metrics", "recall@-2"], "the cutoff k must be a positive integer"),
        (["--metrics", "bpref@10"], "metric Bpref takes no cutoff"),
        (["--task", "nosuchtask"], "unknown task 'nosuchtask'"),
        (["--format", "nosuchformat"], "unknown run format 'nosuchformat'"),
    ],
)
def test_bad_options(args, expected, tmp_path, gold_file):
    run = tmp_path / "run.tsv"
    run.write_text(GOOD_RUN)
    assert_clean_failure(run_cli("score", run, gold_file, *args), expected)


def test_missing_file(tmp_path, gold_file):
    assert_clean_failure(run_cli("score", tmp_path / "nope.tsv", gold_file), "no such file")


def test_bad_gold(tmp_path):
    run = tmp_path / "run.tsv"
    run.write_text(GOOD_RUN)
    gold = tmp_path / "gold.tsv"
    gold.write_text("post_id\ttweet_text\tcord_uid\n1\tt\tdocA\n1\tt\tdocB\n")
    assert_clean_failure(run_cli("score", run, gold), ":3: post_id '1' appears twice", gold)
    gold.write_text("q 0 d 1\nq 0 d 2\n")
    assert_clean_failure(run_cli("score", run, gold), ":2: the same (query, document) pair is judged twice", gold)
    gold.write_bytes(b"q 0 d 1\nq 0 d 2\n" + padding("zpad{i} 0 x{i} 0\n"))  # the pyarrow path
    assert_clean_failure(run_cli("score", run, gold), ":2: the same (query, document) pair is judged twice", gold)
    gold.write_bytes(b"q 0 d 1\nq 0 e NA\n" + padding("zpad{i} 0 x{i} 0\n"))
    assert_clean_failure(run_cli("score", run, gold), ":2: grade 'NA' is not a number", gold)


def test_existing_output_needs_force(tmp_path, gold_file):
    run = tmp_path / "run.tsv"
    run.write_text(GOOD_RUN)
    out = tmp_path / "out.json"
    out.write_text("keep me")
    assert_clean_failure(run_cli("score", run, gold_file, "--out", out), "exists; pass --force")
    assert out.read_text() == "keep me"
    assert run_cli("score", run, gold_file, "--out", out, "--force", "--output", "json").returncode == 0
    assert '"MRR@5"' in out.read_text()


def test_missing_output_folder(tmp_path, gold_file):
    run = tmp_path / "run.tsv"
    run.write_text(GOOD_RUN)
    assert_clean_failure(run_cli("score", run, gold_file, "--out", tmp_path / "no" / "out.json"), "does not exist")


@pytest.mark.parametrize(
    "transform",
    [
        lambda b: b"\xef\xbb\xbf" + b,  # BOM
        lambda b: b.replace(b"\n", b"\r\n"),  # CRLF
        lambda b: gzip.compress(b),
        lambda b: zip_bytes({"predictions.tsv": b.decode()}),
        lambda b: zip_bytes({"__MACOSX/._predictions.tsv": "junk", "predictions.tsv": b.decode()}),
    ],
    ids=["bom", "crlf", "gzip", "zip", "zip_macos"],
)
def test_accepted_variants(transform, tmp_path, gold_file):
    run = tmp_path / "run.bin"
    run.write_bytes(transform(GOOD_RUN.encode()))
    result = run_cli("score", run, gold_file, "--output", "tsv")
    assert result.returncode == 0, result.stderr
    assert "MRR@5\t0.750000" in result.stdout
