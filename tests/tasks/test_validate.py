"""`evalkit validate`: every problem as FILE:LINE, a verdict, exit 0/1/2 -- on the real 4b runs and inline cases."""
from __future__ import annotations

import gzip
import io
import zipfile

import pytest

from support.helpers import CT4B, GOLD_4B, run_cli, shared_or_skip
from evalkit.cli import main
from evalkit.tasks.submissions import expectations_for, validate_file
from evalkit.submission.references import load_collection_ids, split_in_name

RUNS = CT4B / "runs"
OTHER = RUNS / "other-teams"


@pytest.fixture(scope="module")
def all_splits():
    """Expectations with the three real splits and the 4b collection (train + dev cord_uids)."""
    golds = [shared_or_skip(GOLD_4B[s]) for s in ("train", "dev", "test")]
    return expectations_for("checkthat2025-4b", query_files=golds, collection_files=golds[:2])


@pytest.mark.realdata
def test_collection_is_union_of_train_and_dev_gold():
    ids, note = load_collection_ids([shared_or_skip(GOLD_4B["train"]), GOLD_4B["dev"]])
    assert len(ids) == 7718
    assert note.startswith("7,718 collection ids")


@pytest.mark.realdata
def test_repeated_ids_in_ysong_colbertv2(all_splits):
    problems = validate_file(OTHER / "ysong_colbertv2_dev.tsv", all_splits)
    assert not problems.valid
    assert set(problems.counts()) == {"repeated id"}
    assert problems.counts()["repeated id"] == 710
    assert problems.facts["split"] == "dev"
    first = problems.lines()[0]
    assert first == f"{OTHER / 'ysong_colbertv2_dev.tsv'}:3: post_id '69' lists 'r58aohnu' 2 times (positions 1, 2)"


@pytest.mark.realdata
@pytest.mark.parametrize("name,column", [("lucthiery_bm25_top75_test.tsv", "bm25_topk"), ("lucthiery_granite_top75_test.tsv", "retrieved")])
def test_75_ids_and_wrong_columns_in_lucthiery(all_splits, name, column):
    problems = validate_file(OTHER / name, all_splits)
    counts = problems.counts()
    assert counts["list length"] == 1446 and counts["header"] == 3
    lines = problems.lines()
    assert any(f"the id lists are in column {column!r}; it must be named 'preds'" in line for line in lines)
    assert any(":1: header is " in line and "expected exactly 'post_id<TAB>preds'" in line for line in lines)
    assert any("extra column(s)" in line and "'tweet_text'" in line for line in lines)
    assert f"{OTHER / name}:2: post_id '1' has 75 ids, expected exactly 5" in lines
    assert problems.facts["split"] == "test"


@pytest.mark.realdata
def test_file_named_dev_holding_test_queries(all_splits):
    path = RUNS / "airwaves" / "E5_HN_All__dev_TOP100.tsv"
    problems = validate_file(path, all_splits)
    assert problems.facts["split"] == "test"
    wrong = [p.message for p in problems.errors if p.kind == "wrong split"]
    assert wrong == ["the file name says 'dev' but its query ids are the test split (1446 of 1446 test queries)"]
    assert problems.counts()["list length"] == 1446  # a TOP100 ranking, not a 5-id submission


@pytest.mark.realdata
def test_dev_named_file_against_dev_gold_only():
    """With only the dev gold, the test queries show up as unknown and the dev queries as missing."""
    path = RUNS / "airwaves" / "E5_HN_All__dev_TOP100.tsv"
    expectations = expectations_for("checkthat2025-4b", query_files=[shared_or_skip(GOLD_4B["dev"])], depth=100)
    problems = validate_file(path, expectations)
    counts = problems.counts()
    assert counts["unknown query"] == 1446 - 151 and counts["missing query"] == 1400 - 151
    assert "list length" not in counts  # --depth 100 accepted


@pytest.mark.realdata
def test_comma_separated_dajahn(all_splits):
    problems = validate_file(OTHER / "dajahn_traditional_dev.csv", all_splits)
    assert [p.kind for p in problems.errors] == ["delimiter"]
    assert problems.errors[0].line == 1


@pytest.mark.realdata
@pytest.mark.parametrize(
    "name,split",
    [
        ("sourcesniffers_final_test.zip", "test"),
        ("maustrian3_neural_reranking_test.zip", "test"),
        ("lucthiery_hybrid_test.tsv", "test"),
        ("paperquest_bm25_dev.tsv", "dev"),
        ("ysong_openai_embedding_dev.tsv", "dev"),
    ],
)
def test_real_valid_submissions(all_splits, name, split):
    problems = validate_file(OTHER / name, all_splits)
    assert problems.valid and not problems.items, problems.lines()
    assert problems.facts["split"] == split


@pytest.mark.realdata
def test_double_quotes_are_a_warning(all_splits):
    problems = validate_file(OTHER / "frricter_submission_dev.tsv", all_splits)
    assert problems.valid
    assert [p.kind for p in problems.warnings] == ["quotes"]


@pytest.mark.realdata
def test_declared_split_disagreeing_with_content():
    golds = [shared_or_skip(GOLD_4B[s]) for s in ("dev", "test")]
    expectations = expectations_for("checkthat2025-4b", query_files=golds, split="dev")
    problems = validate_file(OTHER / "lucthiery_hybrid_test.tsv", expectations)
    assert "its query ids are the test split (1446 of 1446 test queries), not dev as declared" in problems.first(1)


@pytest.mark.realdata
def test_cli_exit_codes_and_verdict(tmp_path):
    dev = shared_or_skip(GOLD_4B["dev"])
    good = run_cli("validate", OTHER / "paperquest_bm25_dev.tsv", "--task", "checkthat2025-4b", "--gold", dev,
                   "--collection-ids", GOLD_4B["train"], "--collection-ids", dev)
    assert good.returncode == 0, good.stderr
    assert good.stdout.strip().splitlines() == [
        f"VALID: {OTHER / 'paperquest_bm25_dev.tsv'} is a valid checkthat2025-4b submission; split dev (1400 of 1400 dev queries); "
        "1400 queries read, 5 ids per query required; ids checked against 7,718 collection ids from "
        "subtask4b_query_tweets_train.tsv, subtask4b_query_tweets_dev.tsv"
    ]
    bad = run_cli("validate", OTHER / "ysong_colbertv2_dev.tsv", "--gold", dev, "--limit", "0")  # task from the header
    assert bad.returncode == 1
    lines = bad.stdout.strip().splitlines()
    assert len(lines) == 711 and all(line.startswith(f"{OTHER / 'ysong_colbertv2_dev.tsv'}:") for line in lines[:-1])
    assert lines[-1].startswith("INVALID: ") and "710 problems (repeated id: 710)" in lines[-1]
    capped = run_cli("validate", OTHER / "ysong_colbertv2_dev.tsv", "--limit", "3")
    assert len(capped.stdout.splitlines()) == 5 and "707 more repeated id problems not shown" in capped.stdout
    assert "query set not checked" in capped.stdout

    for args, message in [
        ((tmp_path / "missing.tsv", "--task", "checkthat2025-4b"), "missing.tsv: no such file"),
        ((OTHER / "paperquest_bm25_dev.tsv", "--task", "nope"), "unknown task 'nope'"),
        ((OTHER / "paperquest_bm25_dev.tsv", "--gold", tmp_path / "none.tsv"), "none.tsv: no such file"),
        ((OTHER / "paperquest_bm25_dev.tsv", "--gold", dev, "--split", "test"), "--split 'test' is not one of the given query sets (dev)"),
        ((OTHER / "paperquest_bm25_dev.tsv", "--task", "trec"), "task 'trec' has no official submission format"),
    ]:
        result = run_cli("validate", *args)
        assert result.returncode == 2 and result.stderr.strip().count("\n") == 0 and message in result.stderr, result.stderr


# ------------------------------------------------------------------ inline cases
QUERIES = "post_id\ttweet_text\n1\tfirst\n2\tsecond\n3\tthird\n4\tfourth\n"
COLLECTION = "\n".join(["a", "b", "c", "d", "e", "f", "g"]) + "\n"
GOOD = "post_id\tpreds\n1\t['a', 'b', 'c', 'd', 'e']\n2\t['b', 'c', 'd', 'e', 'f']\n3\t['g', 'a', 'b', 'c', 'd']\n4\t['a', 'c', 'e', 'g', 'b']\n"
BROKEN = (
    "post_id\tpreds\tscore\n"  # 1: extra column
    "1\t['a', 'b', 'c', 'd', 'e']\t1\n"  # 2: fine
    "2\t['a', 'b', 'c']\t1\n"  # 3: three ids
    "2\t['a', 'b', 'c', 'd', 'e']\t1\n"  # 4: duplicate query
    "9\t['a', 'a', 'b', 'c', 'zz']\t1\n"  # 5: repeated id, unknown id, unknown query
    "3\ta b c d e\t1\n"  # 6: not a list
    "5\t['a', 'b']\n"  # 7: two fields, two ids, unknown query
)


@pytest.fixture
def refs(tmp_path):
    (tmp_path / "test_queries.tsv").write_text(QUERIES)
    (tmp_path / "ids.txt").write_text(COLLECTION)
    return expectations_for("checkthat2025-4b", query_files=[tmp_path / "test_queries.tsv"], collection_files=[tmp_path / "ids.txt"])


def test_inline_every_problem_found(tmp_path, refs):
    path = tmp_path / "broken_test.tsv"
    path.write_text(BROKEN)
    problems = validate_file(path, refs)
    found = {(p.line, p.kind) for p in problems.errors}
    assert found == {
        (1, "header"),
        (3, "list length"),
        (4, "duplicate query"),
        (5, "repeated id"),
        (5, "unknown id"),
        (5, "unknown query"),
        (6, "preds"),
        (7, "fields"),
        (7, "list length"),
        (7, "unknown query"),
        (None, "missing query"),
    }
    assert f"{path}: post_id '4' of the test split is missing" in problems.lines()
    assert f"{path}:5: post_id '9': 'zz' not in the collection" in problems.lines()


def test_inline_good_file_and_containers(tmp_path, refs):
    plain = tmp_path / "good.tsv"
    plain.write_text(GOOD)
    assert validate_file(plain, refs).valid

    def zipped(name: str, members: dict[str, str]):
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            for member, text in members.items():
                archive.writestr(member, text)
        path = tmp_path / name
        path.write_bytes(buffer.getvalue())
        return validate_file(path, refs)

    assert zipped("ok.zip", {"predictions.tsv": GOOD}).valid
    folder = zipped("folder.zip", {"sub/predictions.tsv": GOOD})
    assert [p.kind for p in folder.errors] == ["zip layout"] and "put predictions.tsv at the top level" in folder.errors[0].message
    two = zipped("two.zip", {"predictions.tsv": GOOD, "notes.txt": "x"})
    assert not two.valid and "zip holds 2 files" in two.first(1)
    renamed = zipped("renamed.zip", {"preds.tsv": GOOD})
    assert renamed.valid and "the official name is 'predictions.tsv'" in renamed.warnings[0].message

    gz = tmp_path / "good.tsv.gz"
    gz.write_bytes(gzip.compress(GOOD.encode()))
    assert validate_file(gz, refs).warnings[0].kind == "container"
    bom = tmp_path / "bom.tsv"
    bom.write_bytes(b"\xef\xbb\xbf" + GOOD.replace("\n", "\r\n").encode())
    result = validate_file(bom, refs)
    assert result.valid and [p.message.split(" (")[0] for p in result.warnings] == ["starts with a UTF-8 byte order mark", "Windows"]
    latin = tmp_path / "latin.tsv"
    latin.write_bytes(GOOD.encode().replace(b"'g'", b"'\xe9'"))
    result = validate_file(latin, refs)
    assert (4, "encoding") in {(p.line, p.kind) for p in result.errors}


CC_GOOD = ("claim_id,abstract_id,rank,label\n" + "".join(f"c1,a{i},{i},Supports\n" for i in range(1, 11))
           + "".join(f"c2,b{i},{i},Refutes\n" for i in range(1, 11)))


def test_climatecheck_inline(tmp_path):
    good = tmp_path / "good.csv"
    good.write_text(CC_GOOD)
    for task in ("climatecheck2025-retrieval", "climatecheck2025-verification"):
        assert validate_file(good, expectations_for(task)).valid
    bad = tmp_path / "bad.csv"
    rows = CC_GOOD.splitlines()
    rows[3] = "c1,a3,4,supports"  # rank out of row order + label spelling
    rows[5] = "c1,a1,5,Maybe"  # repeated abstract + unknown label
    rows[12] = "c2,b2,2,Refutes,extra"  # field count
    del rows[20]  # c2 has 9 rows
    rows.append("c1,a11,11,Supports")  # c1 continues after c2
    bad.write_text("\n".join(rows) + "\n")
    problems = validate_file(bad, expectations_for("climatecheck2025-verification"))
    found = {(p.line, p.kind) for p in problems.errors}
    assert found == {
        (4, "rank"),
        (4, "label"),
        (6, "repeated id"),
        (6, "label"),
        (13, "fields"),
        (21, "claim order"),
        (2, "list length"),
        (12, "list length"),
    }
    no_label = tmp_path / "nolabel.csv"
    no_label.write_text("claim_id,abstract_id,rank\n" + "".join(f"c1,a{i},{i}\n" for i in range(1, 11)))
    assert validate_file(no_label, expectations_for("climatecheck2025-retrieval")).valid
    assert "no 'label' column" in validate_file(no_label, expectations_for("climatecheck2025-verification")).first(1)
    tabbed = tmp_path / "tabbed.csv"
    tabbed.write_text(CC_GOOD.replace(",", "\t"))
    assert [p.kind for p in validate_file(tabbed, expectations_for("climatecheck2025-verification")).errors] == ["delimiter"]


def test_split_names_from_file_names():
    assert split_in_name("E5_HN_All__dev_TOP100.tsv") == "dev"
    assert split_in_name("subtask4b_query_tweets_test_gold.tsv") == "test"
    assert split_in_name("predictions_train_dev.tsv") is None
    assert split_in_name("latest.tsv") is None  # 'test' inside a word is no split


@pytest.mark.realdata
def test_in_process_main_returns_exit_codes(capsys):
    assert main(["validate", str(shared_or_skip(OTHER / "ysong_colbertv2_dev.tsv")), "--limit", "1"]) == 1
    assert "INVALID" in capsys.readouterr().out


def test_the_task_comes_from_the_gold_not_from_the_submission(tmp_path):
    """With --task auto and --gold, a file shaped like another task's submission is checked as the gold's task."""
    gold = tmp_path / "gold.tsv"
    gold.write_text("post_id\ttweet_text\tcord_uid\n1\ta tweet\tabc\n2\tanother\tdef\n")
    climate_shaped = tmp_path / "sub.csv"
    climate_shaped.write_text("claim_id,abstract_id,rank\n1,abc,1\n")
    done = run_cli("validate", climate_shaped, "--gold", gold)
    assert done.returncode == 1 and "not a valid checkthat2025-4b submission" in done.stdout and "task from the gold" in done.stdout
    guessed = run_cli("validate", climate_shaped)  # no gold, no --task: the header is a guess, and the verdict says so
    assert "guessed from the file's header" in guessed.stdout
