"""evalkit pool: the depth-k pool against a plain computation, unique contributions, the seeded order, the judging sheet
and its round trip to qrels, hostile group patterns and names."""
from __future__ import annotations

import json
import random

import pytest

import evalkit
from evalkit.data import Run
from evalkit.core.errors import InputError
from evalkit.judging.pool import build_pool
from evalkit.judging.sheet import sheet_text
from support.helpers import CT4B, GOLD_4B, run_cli, shared_or_skip


# ----------------------------------------------------------------- a plain reference computation
def top_k_by_hand(run: dict, depth: int) -> dict[str, set[str]]:
    """The documents at ranks 1..depth of each query: scores descending, ties by doc id descending (byte order), a list in
    list order; a repeated document counts once and its repeat still takes a rank. Plain Python, no evalkit code."""
    out = {}
    for query, ranking in run.items():
        if isinstance(ranking, dict):
            by_id = sorted(ranking.items(), key=lambda x: x[0].encode(), reverse=True)  # ids descending, byte-wise
            ordered = [d for d, _ in sorted(by_id, key=lambda x: -x[1])]  # then scores descending (a stable sort)
        else:
            ordered = list(ranking)
        out[query] = set(ordered[:depth])
    return out


def pool_by_hand(runs: dict[str, dict], groups: dict[str, str], depth: int):
    holders: dict[tuple[str, str], set[str]] = {}
    for name, run in runs.items():
        for query, docs in top_k_by_hand(run, depth).items():
            for doc in docs:
                holders.setdefault((query, doc), set()).add(name)
    unique_run = {name: sum(1 for h in holders.values() if h == {name}) for name in runs}
    unique_group = {g: sum(1 for h in holders.values() if {groups[r] for r in h} == {g}) for g in set(groups.values())}
    return holders, unique_run, unique_group


def random_runs(seed: int, n_runs: int = 6):
    rng = random.Random(seed)
    runs = {}
    for r in range(n_runs):
        run = {}
        for q in range(rng.randint(3, 8)):
            docs = [f"d{rng.randint(0, 25)}" for _ in range(rng.randint(0, 14))]
            if r % 3 == 2:  # a list run, repeats and all
                run[f"q{q}"] = docs
            else:  # scores with ties (few distinct values)
                run[f"q{q}"] = {d: float(rng.randint(0, 3)) for d in docs}
        runs[f"{'abc'[r % 3]}team_run{r}"] = run
    return runs


def as_runs(runs: dict[str, dict]) -> list[Run]:
    return [evalkit.as_run(run, name=name) for name, run in runs.items()]


def pool_as_sets(pool):
    holders = {}
    for pair, members in enumerate(pool.retrieved_by()):
        key = (pool.query_ids[pool.pair_query[pair]], pool.doc_ids[pool.pair_doc[pair]])
        holders[key] = {pool.runs[r] for r in members}
    return holders


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("depth", [1, 3, 10])
def test_pool_equals_a_plain_computation(seed, depth):
    runs = random_runs(seed)
    groups = {name: name.split("_")[0] for name in runs}
    pool = build_pool(as_runs(runs), depth, [groups[n] for n in runs])
    holders, unique_run, unique_group = pool_by_hand(runs, groups, depth)
    assert pool_as_sets(pool) == holders
    assert pool.size == len(holders)
    assert dict(zip(pool.runs, pool.unique_per_run().tolist())) == unique_run
    assert pool.unique_per_group() == unique_group
    assert dict(zip(pool.runs, pool.placed_per_run().tolist())) == {
        n: sum(len(d) for d in top_k_by_hand(r, depth).values()) for n, r in runs.items()}
    sizes = dict(zip(pool.query_ids.tolist(), pool.sizes_per_query().tolist()))
    assert sizes == {q: sum(1 for (qq, _) in holders if qq == q) for q in {q for q, _ in holders}}
    for group in unique_group:
        queries, docs = pool.group_pairs(group)
        assert set(zip(queries.tolist(), docs.tolist())) == {k for k, h in holders.items() if {groups[r] for r in h} == {group}}


def test_pool_follows_the_ranking_rule_at_the_cutoff():
    """Equal scores at the cutoff: doc ids descending (trec_eval); a list keeps its order; a repeat takes a rank."""
    scored = Run.from_scores({"q": {"a": 1.0, "b": 1.0, "c": 1.0, "z": 0.5}}, name="s")
    listed = Run.from_lists({"q": ["x", "x", "y", "w"]}, name="l")
    pool = build_pool([scored, listed], 2)
    assert pool_as_sets(pool) == {("q", "c"): {"s"}, ("q", "b"): {"s"}, ("q", "x"): {"l"}}
    assert pool.unique_per_run().tolist() == [2, 1]


def test_pool_does_not_depend_on_the_order_of_runs_or_lines():
    runs = random_runs(3)
    names = list(runs)
    one = build_pool(as_runs(runs), 5)
    shuffled = {n: runs[n] for n in reversed(names)}
    two = build_pool(as_runs(shuffled), 5)
    assert pool_as_sets(one) == pool_as_sets(two)
    assert sheet_text(one, 7) == sheet_text(two, 7)


def test_seeded_order_is_stable_and_seeded():
    runs = {f"t{r}_run": {f"q{q}": {f"d{(q * 7 + r * 3 + i) % 40}": float(i) for i in range(12)} for q in range(5)} for r in range(4)}
    pool = build_pool(as_runs(runs), 10)
    sheet = sheet_text(pool, 42)
    assert sheet == sheet_text(build_pool(as_runs(dict(reversed(list(runs.items())))), 10), 42)  # run order: same sheet
    assert sheet != sheet_text(pool, 43)  # another seed, another order
    rows = [line.split("\t") for line in sheet.splitlines()[1:]]
    queries = [r[0] for r in rows]
    assert queries == sorted(queries)  # queries in byte order, each query's rows together
    assert [int(r[3]) for r in rows if r[0] == "q0"] == list(range(1, queries.count("q0") + 1))
    by_query = [r[1] for r in rows if r[0] == "q0"]
    assert by_query != sorted(by_query) and by_query != sorted(by_query, reverse=True)  # not an id or a run order
    # adding a run only interleaves its new documents: the documents already pooled keep their relative order
    bigger = dict(runs, extra_run={"q0": {"zz1": 1.0, "zz2": 2.0}})
    rows2 = [line.split("\t") for line in sheet_text(build_pool(as_runs(bigger), 10), 42).splitlines()[1:]]
    assert [r[1] for r in rows2 if r[0] == "q0" and not r[1].startswith("zz")] == by_query
    # BLAKE2b of (seed; query, document): the same order on every machine and Python version
    pinned = sheet_text(build_pool([Run.from_lists({"q": list("abcdef")}, name="r")], 6), 42)
    assert [line.split("\t")[1] for line in pinned.splitlines()[1:]] == ["f", "a", "b", "d", "e", "c"]


# ----------------------------------------------------------------- the judging sheet and its round trip
def graded(sheet: str, grade=lambda q, d: (len(q) + len(d)) % 3, delimiter: str = "\t") -> tuple[str, dict]:
    """The sheet with every relevance cell filled by ``grade``, and the qrels it should read as."""
    import csv
    import io

    rows = list(csv.reader(io.StringIO(sheet), delimiter=delimiter))
    expected: dict = {}
    for row in rows[1:]:
        row[2] = str(grade(row[0], row[1]))
        expected.setdefault(row[0], {})[row[1]] = int(row[2])
    out = io.StringIO()
    csv.writer(out, delimiter=delimiter, lineterminator="\n").writerows(rows)
    return out.getvalue(), expected


@pytest.mark.parametrize("suffix", [".tsv", ".csv"])
@pytest.mark.parametrize("blind", [False, True])
def test_sheet_round_trip_to_qrels(tmp_path, suffix, blind):
    runs = random_runs(5)
    # ids a TSV or a CSV must quote: a comma, a quote, a tab, a leading '=' (a formula to a spreadsheet)
    runs["hostile_run"] = {"q1": ["d,1", 'd"2', "d\t3", "=HYPERLINK(1)", "-5"], "q,9": ["x"]}
    made = evalkit.pool(*[evalkit.as_run(r, name=n) for n, r in runs.items()], depth=4, blind=blind)
    path = tmp_path / f"pool{suffix}"
    made.save(path)
    header = path.read_text().splitlines()[0]
    assert header.split("\t" if suffix == ".tsv" else ",") == (
        ["query_id", "doc_id", "relevance", "pool_position"] + ([] if blind else ["n_runs", "n_groups", "runs", "groups"]))
    with pytest.raises(InputError, match="not graded yet"):
        evalkit.read_qrels(path)  # empty as written
    text, expected = graded(path.read_text(), delimiter="\t" if suffix == ".tsv" else ",")
    path.write_text(text)
    qrels = evalkit.read_qrels(path)
    assert qrels.source.format == "judging-sheet"
    assert qrels.to_dict() == expected
    assert sum(len(v) for v in expected.values()) == made.pool.size
    manifest = json.loads((tmp_path / f"pool{suffix}.manifest.json").read_text())
    assert manifest["command"] == "pool" and manifest["seed"] == 42 and manifest["options"]["pool_size"] == made.pool.size


def test_graded_sheet_scores_like_its_qrels(tmp_path):
    runs = random_runs(8)
    made = evalkit.pool(*[evalkit.as_run(r, name=n) for n, r in runs.items()], depth=5)
    sheet = tmp_path / "sheet.tsv"
    made.save(sheet)
    text, expected = graded(sheet.read_text())
    sheet.write_text(text)
    run = next(iter(runs.values()))
    ours = evalkit.score(run, sheet, metrics="map ndcg@10 p@5", allow_partial=True)
    assert ours.task == "trec"
    assert ours.means == evalkit.score(run, expected, metrics="map ndcg@10 p@5", allow_partial=True).means
    trec = tmp_path / "run.trec"
    trec.write_text("".join(f"{q} Q0 {d} 0 {s} r\n" for q, docs in run.items() for d, s in (docs.items() if isinstance(docs, dict)
                                                                                          else zip(docs, range(len(docs), 0, -1)))))
    done = run_cli("score", trec, sheet, "--metrics", "map", "--allow-partial", "--output", "json")
    assert done.returncode == 0, done.stderr


def test_half_graded_sheet_is_refused_with_its_line_and_count(tmp_path):
    sheet = tmp_path / "sheet.tsv"
    evalkit.pool({"q1": ["a", "b", "c"], "q2": ["d"]}, depth=3).save(sheet)
    lines = sheet.read_text().splitlines()
    filled = [lines[0]] + [line.replace("\t\t", "\t1\t", 1) for line in lines[1:3]] + lines[3:]
    sheet.write_text("\n".join(filled) + "\n")
    done = run_cli("score", sheet, sheet)  # any run: the gold is read first
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith(f"{sheet}:4: no relevance grade for document")
    assert "2 of 4 rows of this judging sheet are not graded yet" in done.stderr
    for bad, message in (("x", "relevance 'x' is not a number"), ("nan", "not a finite number")):
        sheet.write_text("\n".join([lines[0]] + [line.replace("\t\t", f"\t{bad}\t", 1) for line in lines[1:]]) + "\n")
        with pytest.raises(InputError, match=message):
            evalkit.read_qrels(sheet)
    sheet.write_text("\n".join([lines[0]] + [line.replace("\t\t", "\t1\t", 1) for line in lines[1:] + lines[1:2]]) + "\n")
    with pytest.raises(InputError, match="judged twice"):
        evalkit.read_qrels(sheet)
    sheet.write_text("\n".join([lines[0]] + [line.replace("\t\t", "\t-1\t", 1) for line in lines[1:]]) + "\n")
    assert set(evalkit.read_qrels(sheet).grades.tolist()) == {-1.0}  # -1: left unjudged on purpose


# ----------------------------------------------------------------- the command
def write_trec(path, run: dict) -> None:
    path.write_text("".join(f"{q} Q0 {d} 0 {s} tag\n" for q, docs in run.items() for d, s in docs.items()))


def test_pool_command_outputs_and_force(tmp_path):
    a, b = tmp_path / "alpha_1.trec", tmp_path / "beta_1.trec"
    write_trec(a, {"q1": {"x": 3, "y": 2, "z": 1}, "q2": {"u": 1}})
    write_trec(b, {"q1": {"y": 3, "w": 2}, "q2": {"v": 1}})
    out, summary = tmp_path / "pool.tsv", tmp_path / "pool.json"
    done = run_cli("pool", a, b, "--depth", "2", "--group-by", "^[a-z]+", "--out", out, "--summary", summary)
    assert done.returncode == 0, done.stderr
    assert "depth-2 pool of 2 runs in 2 groups: 5 (query, document) pairs" in done.stdout
    figures = json.loads(summary.read_text())
    # q1: x and y (alpha), y and w (beta); q2: u (alpha), v (beta): 5 pairs, y shared
    assert figures["pool_size"] == 5 and {g["group"]: g["unique"] for g in figures["groups"]} == {"alpha": 2, "beta": 2}
    assert {r["run"]: (r["pooled"], r["unique"]) for r in figures["runs"]} == {"alpha_1": (3, 2), "beta_1": (3, 2)}
    assert out.with_name("pool.tsv.manifest.json").exists()
    again = run_cli("pool", a, b, "--depth", "2", "--out", out)
    assert again.returncode == 2 and "exists" in again.stderr and "Traceback" not in again.stderr
    assert run_cli("pool", a, b, "--depth", "2", "--out", out, "--force").returncode == 0
    onto_input = run_cli("pool", a, b, "--depth", "2", "--out", a, "--force")
    assert onto_input.returncode == 2 and "is also an input" in onto_input.stderr
    assert run_cli("pool", a, "--depth", "0", "--out", tmp_path / "x.tsv").returncode == 2
    md = run_cli("pool", a, b, "--depth", "2", "--out", tmp_path / "p.csv", "--summary", tmp_path / "p.md", "--blind")
    assert md.returncode == 0 and (tmp_path / "p.md").read_text().startswith("# Judging pool")
    assert (tmp_path / "p.csv").read_text().splitlines()[0] == "query_id,doc_id,relevance,pool_position"


@pytest.mark.realdata
def test_pool_of_real_4b_test_runs_and_the_misnamed_split():
    shared_or_skip(GOLD_4B["test"])
    runs = CT4B / "runs"
    paths = [runs / "other-teams" / "frricter_submission_test.tsv", runs / "other-teams" / "lucthiery_granite_top75_test.tsv",
             runs / "airwaves" / "predictions_SciBERT_test_TOP10.tsv", runs / "airwaves" / "E5_HN_All__test_TOP100.tsv"]
    made = evalkit.pool(*paths, depth=5, group_by=r"airwaves|(?<=other-teams/)[a-z]+", group_on="path")
    groups = ["frricter", "lucthiery", "airwaves", "airwaves"]
    holders: dict = {}
    for path, group in zip(paths, groups):
        for query, docs in evalkit.read_run(path).to_lists(5).items():
            for doc in docs:
                holders.setdefault((query, doc), set()).add(group)
    assert made.pool.size == len(holders)
    assert made.pool.unique_per_group() == {g: sum(1 for h in holders.values() if h == {g}) for g in set(groups)}
    # the file named _test_ holds the dev queries (see the data's README): said, not silently pooled
    assert any(note.startswith("E5_HN_All__test_TOP100: 151 of its 1,400 queries") for note in made.notes), made.notes


def test_sheet_carries_the_texts_assessors_read(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"_id": "a", "title": "Alpha", "text": "first, with \\"quotes\\"\\nand a line"}\n'
                      '{"_id": "b", "title": "", "text": "=1+1 looks like a formula"}\n')
    queries = tmp_path / "queries.tsv"
    queries.write_text("q1\tis alpha first?\n")
    sheet = tmp_path / "sheet.csv"
    made = evalkit.pool({"q1": ["a", "b", "zz"], "q2": ["a"]}, depth=3, queries=queries, corpus=corpus, blind=True)
    made.save(sheet)
    import csv

    rows = list(csv.DictReader(sheet.open(newline="")))
    assert list(rows[0]) == ["query_id", "doc_id", "relevance", "pool_position", "query_text", "doc_text"]
    texts = {(r["query_id"], r["doc_id"]): (r["query_text"], r["doc_text"]) for r in rows}
    assert texts[("q1", "a")] == ("is alpha first?", 'Alpha first, with "quotes"\nand a line')
    assert texts[("q1", "b")][1] == "'=1+1 looks like a formula" and texts[("q1", "zz")][1] == "" and texts[("q2", "a")][0] == ""
    assert any("1 of the 2 pooled queries have no text" in n for n in made.notes)
    assert any("1 of the 3 pooled documents are not in the collection" in n for n in made.notes)
    assert [e["role"] for e in made.manifest["inputs"]][-2:] == ["queries", "corpus"]
    text, expected = graded(sheet.read_text(), delimiter=",")
    sheet.write_text(text)
    assert evalkit.read_qrels(sheet).to_dict() == expected  # the text columns are read past
