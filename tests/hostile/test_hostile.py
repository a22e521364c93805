"""Hostile inputs: each is refused with ONE line on stderr, exit code 2, no traceback, the folder unchanged,
within a 2 GiB address-space limit and a time bound (or, where the input is legitimate, handled correctly).

Every case runs the real CLI in a subprocess under ``resource.RLIMIT_AS``.
"""
from __future__ import annotations

import functools
import gzip
import hashlib
import io
import json
import os
import resource
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path
from typing import Callable

import pytest

MEMORY_LIMIT = 2 << 30
TIME_LIMIT = 60

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\nq2 0 d4 0\n"
RUN = "q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\nq2 Q0 d4 1 3.0 r\nq2 Q0 d3 2 2.5 r\n"
CORPUS = "".join(json.dumps({"_id": f"d{i}", "title": "", "text": f"sea level rise {i} ice"}) + "\n" for i in range(1, 6))
QUERIES = "q1\tsea level\nq2\tice melt\n"


def limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def evalkit(*args, cwd: Path, env: dict | None = None, timeout: int = TIME_LIMIT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "evalkit", *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=timeout,
        preexec_fn=limit_memory, env={**os.environ, **(env or {})},
    )


def snapshot(folder: Path) -> dict[str, str]:
    """Every entry under ``folder`` with a digest of regular files (FIFOs and devices by kind only)."""
    state = {}
    for path in sorted(folder.rglob("*")):
        if path.is_fifo():
            state[str(path)] = "fifo"
        elif path.is_file():
            state[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
        else:
            state[str(path)] = "dir" if path.is_dir() else "other"
    return state


def write(folder: Path, name: str, content: str | bytes) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


def base_files(folder: Path) -> None:
    write(folder, "gold.qrels", QRELS)
    write(folder, "run.trec", RUN)
    write(folder, "corpus.jsonl", CORPUS)
    write(folder, "queries.tsv", QUERIES)


def baseline(folder: Path, **fields) -> Path:
    entry = {"name": "r", "task": "trec", "gold": "gold.qrels", "run": "run.trec", "metric": "nDCG@10", "expected": 0.5}
    entry.update(fields.pop("entry", {}))
    data = {"evalkit_baseline": 1, "tolerance": 0.001, "entries": [entry], **fields}
    return write(folder, "base.json", json.dumps(data).replace('"__NaN__"', "NaN").replace('"__Inf__"', "Infinity"))


def fifo(folder: Path, name: str) -> Path:
    path = folder / name
    os.mkfifo(path)
    return path


@functools.lru_cache(maxsize=None)
def gzip_bomb_bytes(size: int) -> bytes:
    """Compressed once per size for the whole module (compressing 1 GiB is most of a bomb test's time)."""
    engine = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = b"q1 Q0 d1 1 1.0 r\n" * (1 << 16)
    parts = [engine.compress(chunk) for _ in range(size // len(chunk) + 1)]
    return b"".join(parts) + engine.flush()


def gzip_bomb(folder: Path, name: str, size: int = (1 << 30) + (64 << 20)) -> Path:
    """A small gzip file that decompresses to more than the 1 GiB default limit."""
    return write(folder, name, gzip_bomb_bytes(size))


@functools.lru_cache(maxsize=None)
def zip_bomb_bytes(size: int) -> bytes:
    buffer = io.BytesIO()
    chunk = b"\0" * (1 << 20)
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        with archive.open("run.trec", "w", force_zip64=True) as member:
            for _ in range(size // len(chunk) + 1):
                member.write(chunk)
    return buffer.getvalue()


def zip_bomb(folder: Path, name: str, size: int = (1 << 30) + (64 << 20)) -> Path:
    """A zip whose one member inflates past the 1 GiB default limit."""
    return write(folder, name, zip_bomb_bytes(size))


def deep_json(depth: int = 100_000) -> str:
    return "[" * depth + "]" * depth


def toml_config(folder: Path, stage: str, top: str = "") -> Path:
    return write(folder, "cfg.toml", f'{top}\n[[stages]]\nname = "bm25"\nsystem = "bm25"\n\n{stage}\n')


def run_args(config: str | Path = "cfg.toml", *extra) -> tuple:
    return ("run", config, "--corpus", "corpus.jsonl", "--queries", "queries.tsv", "--out", "out.trec", *extra)


# name -> (setup(folder) -> CLI args, text the one line must contain)
CASES: dict[str, tuple[Callable[[Path], tuple], str]] = {
    # --- the CI gate: non-finite or negative values never pass
    "baseline tolerance NaN": (lambda f: ("check", "--baseline", baseline(f, tolerance="__NaN__")), "tolerance"),
    "baseline tolerance Infinity": (lambda f: ("check", "--baseline", baseline(f, tolerance="__Inf__")), "finite"),
    "baseline tolerance negative": (lambda f: ("check", "--baseline", baseline(f, tolerance=-0.5)), "negative"),
    "baseline tolerance text": (lambda f: ("check", "--baseline", baseline(f, tolerance="abc")), "not a number"),
    "baseline expected NaN": (lambda f: ("check", "--baseline", baseline(f, entry={"expected": "__NaN__"})), "finite"),
    "baseline expected -Infinity": (lambda f: ("check", "--baseline", write(f, "base.json", json.dumps(
        {"entries": [{"task": "trec", "gold": "gold.qrels", "run": "run.trec", "metric": "P@1", "expected": 0}]}
    ).replace(": 0}", ": -Infinity}"))), "finite"),
    "baseline expected true": (lambda f: ("check", "--baseline", baseline(f, entry={"expected": True})), "not a number"),
    "check --tolerance nan": (lambda f: ("check", "--baseline", baseline(f), "--tolerance", "nan"), "finite"),
    "check --tolerance inf": (lambda f: ("check", "--baseline", baseline(f), "--tolerance", "inf"), "finite"),
    "check --tolerance -1": (lambda f: ("check", "--baseline", baseline(f), "--tolerance", "-1"), ">= 0"),
    "baseline nested 100k deep": (lambda f: ("check", "--baseline", write(f, "base.json", deep_json())), "nested too deeply"),
    "baseline run is /dev/zero": (lambda f: ("check", "--baseline", baseline(f, entry={"run": "/dev/zero"})), "not a regular file"),
    "baseline run is a FIFO": (lambda f: (fifo(f, "pipe"), "check", "--baseline", baseline(f, entry={"run": "pipe"}))[1:], "not a regular file"),
    # --- bounded reads
    "gzip bomb run": (lambda f: ("score", gzip_bomb(f, "run.trec.gz"), "gold.qrels"), "larger than the input limit"),
    "zip bomb run": (lambda f: ("score", zip_bomb(f, "run.zip"), "gold.qrels"), "larger than the input limit"),
    "gzip bomb gold": (lambda f: ("score", "run.trec", gzip_bomb(f, "gold.qrels.gz")), "larger than the input limit"),
    "gzip bomb validate": (lambda f: ("validate", gzip_bomb(f, "sub.tsv.gz"), "--task", "checkthat2025-4b"), "larger than the input limit"),
    "zip bomb validate": (lambda f: ("validate", zip_bomb(f, "sub.zip"), "--task", "checkthat2025-4b"), "larger than the input limit"),
    "input over --max-input-size": (lambda f: ("--max-input-size", "20", "score", "run.trec", "gold.qrels"), "larger than the input limit"),
    "bad --max-input-size": (lambda f: ("--max-input-size", "lots", "score", "run.trec", "gold.qrels"), "input size limit"),
    "/dev/zero as run": (lambda f: ("score", "/dev/zero", "gold.qrels"), "not a regular file"),
    "/dev/zero as gold": (lambda f: ("score", "run.trec", "/dev/zero"), "not a regular file"),
    "/dev/zero as TOML run=": (lambda f: run_args(toml_config(f, '[[stages]]\nname = "x"\nrun = "/dev/zero"')), "not a regular file"),
    "/dev/zero as corpus": (lambda f: ("run", "bm25", "--corpus", "/dev/zero", "--queries", "queries.tsv", "--out", "o.trec"), "not a regular file"),
    "FIFO as run": (lambda f: ("score", fifo(f, "run.fifo"), "gold.qrels"), "not a regular file"),
    "FIFO as gold": (lambda f: ("score", "run.trec", fifo(f, "gold.fifo")), "not a regular file"),
    "FIFO as validate file": (lambda f: ("validate", fifo(f, "sub.fifo"), "--task", "checkthat2025-4b"), "not a regular file"),
    "FIFO as corpus": (lambda f: ("run", "bm25", "--corpus", fifo(f, "c.fifo"), "--queries", "queries.tsv", "--out", "o.trec"), "not a regular file"),
    "FIFO as queries": (lambda f: ("run", "bm25", "--corpus", "corpus.jsonl", "--queries", fifo(f, "q.fifo"), "--out", "o.trec"), "not a regular file"),
    "FIFO as TOML config": (lambda f: run_args(fifo(f, "cfg.fifo")), "not a regular file"),
    "truncated gzip": (lambda f: ("score", write(f, "r.gz", gzip.compress(RUN.encode())[:-12]), "gold.qrels"), "gzip"),
    # --- TREC SGML corpus: strict, linear
    "SGML <DOC> without </DOC>": (lambda f: ("run", "bm25", "--corpus", write(f, "c.trec", "<DOC><DOCNO>d1</DOCNO>a</DOC>\n<DOC><DOCNO>d2</DOCNO>b\n"
                                  "<DOC><DOCNO>d3</DOCNO>c</DOC>\n<DOC><DOCNO>d4</DOCNO>d</DOC>\n"), "--queries", "queries.tsv", "--out", "o.trec"),
                                  "c.trec:3: <DOC> inside"),
    "SGML 200k unclosed <DOC>": (lambda f: ("run", "bm25", "--corpus", write(f, "c.trec", "<DOC>\n" * 200_000), "--queries", "queries.tsv",
                                 "--out", "o.trec"), "c.trec:2:"),
    "SGML stray </DOC>": (lambda f: ("run", "bm25", "--corpus", write(f, "c.trec", "<DOC><DOCNO>d1</DOCNO>a</DOC>\n</DOC>\n"), "--queries",
                          "queries.tsv", "--out", "o.trec"), "c.trec:2: </DOC> without"),
    "SGML <DOCNO> unclosed": (lambda f: ("run", "bm25", "--corpus", write(f, "c.trec", "<DOC>\n<DOCNO>d1\ntext</DOC>\n"), "--queries",
                              "queries.tsv", "--out", "o.trec"), "c.trec:1: <DOCNO> without </DOCNO>"),
    # --- fusion
    "fuse --weights nan,inf": (lambda f: ("fuse", "run.trec", write(f, "run2.trec", RUN), "--method", "wsum", "--weights", "nan,inf", "--out", "f.trec"),
                               "weight"),
    "fuse --weights 1,inf": (lambda f: ("fuse", "run.trec", write(f, "run2.trec", RUN), "--method", "wsum", "--weights", "1,inf", "--out", "f.trec"), "weight"),
    "fuse --rrf-k nan": (lambda f: ("fuse", "run.trec", write(f, "run2.trec", RUN), "--rrf-k", "nan", "--out", "f.trec"), "finite"),
    # --- tracebacks that must be one line
    "BEIR corpus line nested 100k deep": (lambda f: ("run", "bm25", "--corpus", write(f, "c.jsonl", CORPUS + deep_json() + "\n"), "--queries",
                                          "queries.tsv", "--out", "o.trec"), "nested too deeply"),
    "--collection-ids nested 100k deep": (lambda f: ("validate", write(f, "sub.tsv", "post_id\tpreds\n1\t['a']\n"), "--task", "checkthat2025-4b",
                                          "--collection-ids", write(f, "ids.jsonl", '{"a":' * 50_000 + "1" + "}" * 50_000 + "\n")), "nested too deeply"),
    "TOML k = \"abc\"": (lambda f: run_args(toml_config(f, '[[stages]]\nname = "d"\nsystem = "bm25"\nk = "abc"')), "k = 'abc'"),
    "TOML k = inf": (lambda f: run_args(toml_config(f, '[[stages]]\nname = "d"\nsystem = "bm25"\nk = inf')), "k = inf"),
    "TOML k = 0": (lambda f: run_args(toml_config(f, '[[stages]]\nname = "d"\nsystem = "bm25"\nk = 0')), "k = 0"),
    "TOML seed = nan": (lambda f: run_args(toml_config(f, "", "seed = nan")), "seed = nan"),
    "TOML seed = -1": (lambda f: run_args(toml_config(f, "", "seed = -1")), "seed = -1"),
    "TOML fuse = \"ab\"": (lambda f: run_args(toml_config(f, '[[stages]]\nname = "f"\nfuse = "ab"')), "fuse = 'ab'"),
    "TOML weights = [nan, 1]": (lambda f: run_args(toml_config(f, '[[stages]]\nname = "b2"\nsystem = "bm25"\n[[stages]]\nname = "f"\nfuse = ["bm25", "b2"]\n'
                                                               'method = "wsum"\nweights = [nan, 1.0]')), "weights"),
    "TOML options not a table": (lambda f: run_args(toml_config(f, '[[stages]]\nname = "d"\nsystem = "bm25"\noptions = 3')), "options must be a table"),
    "TOML stage name ../../x": (lambda f: run_args(toml_config(f, '[[stages]]\nname = "../../x"\nsystem = "bm25"'), "--gold", "gold.qrels",
                                                   "--report", "r.md"), "name '../../x'"),
    "TOML not valid": (lambda f: run_args(write(f, "cfg.toml", "[[stages]\nname=")), "not valid TOML"),
    "TOML nested 100k deep": (lambda f: run_args(write(f, "cfg.toml", "x = " + "[" * 100_000 + "]" * 100_000 + "\n")), "cfg.toml"),
    "evalkit run SOMEDIR": (lambda f: run_args((f / "somedir").mkdir() or "somedir"), "is a folder"),
    "load= with malformed evalkit-system.json": (lambda f: (write(f, "model/evalkit-system.json", "{not json"), run_args(toml_config(
        f, '[[stages]]\nname = "d"\nsystem = "bm25"\nload = "model"')))[1], "evalkit-system.json"),
    "load= with evalkit-system.json a list": (lambda f: (write(f, "model/evalkit-system.json", "[1, 2]"), run_args(toml_config(
        f, '[[stages]]\nname = "d"\nsystem = "bm25"\nload = "model"')))[1], "evalkit-system.json"),
    "load= with options for another system": (lambda f: (write(f, "model/evalkit-system.json", '{"options": {"no_such_option": 1}}'), run_args(
        toml_config(f, '[[stages]]\nname = "d"\nsystem = "bm25"\nload = "model"')))[1], "unknown option 'no_such_option'"),
    "compare --bootstrap 3000000": (lambda f: ("compare", "gold.qrels", "run.trec", write(f, "run2.trec", RUN), "--bootstrap", "3000000"), "--bootstrap"),
    "compare --permutations 10**12": (lambda f: ("compare", "gold.qrels", "run.trec", write(f, "run2.trec", RUN), "--permutations", str(10**12)),
                                      "--permutations"),
    "compare --seed -1": (lambda f: ("compare", "gold.qrels", "run.trec", write(f, "run2.trec", RUN), "--seed", "-1"), "--seed"),
    # --- outputs: checked before anything is written, never overwritten without --force
    "score --out X --per-query X": (lambda f: ("score", "run.trec", "gold.qrels", "--out", "X", "--per-query", "X"), "named twice"),
    "compare --out X --per-query X": (lambda f: ("compare", "gold.qrels", "run.trec", write(f, "run2.trec", RUN), "--out", "X", "--per-query", "X"),
                                      "named twice"),
    "score --out the gold file": (lambda f: ("score", "run.trec", "gold.qrels", "--out", "gold.qrels", "--force"), "also an input"),
    "score --out sidecar exists": (lambda f: (write(f, "s.txt.manifest.json", "{}"), ("score", "run.trec", "gold.qrels", "--out", "s.txt"))[1], "exists"),
    "submit over an existing manifest": (lambda f: (write(f, "sub.zip.manifest.json", "{}"), ("submit", write(f, "lists.tsv", "post_id\tpreds\n1\t['a']\n"),
                                         "--task", "checkthat2025-4b", "--out", "sub.zip", "--depth", "1"))[1], "exists"),
    "run over an existing manifest": (lambda f: (write(f, "out.trec.manifest.json", "{}"),
                                                 ("run", "bm25", "--corpus", "corpus.jsonl", "--queries", "queries.tsv", "--out", "out.trec"))[1], "exists"),
    "fuse over an existing manifest": (lambda f: (write(f, "f.trec.manifest.json", "{}"),
                                                  ("fuse", "run.trec", write(f, "run2.trec", RUN), "--out", "f.trec"))[1], "exists"),
    # --- silently accepted before
    "--relevance-level nan": (lambda f: ("score", "run.trec", "gold.qrels", "--relevance-level", "nan"), "finite"),
    "--relevance-level inf": (lambda f: ("score", "run.trec", "gold.qrels", "--relevance-level", "inf"), "finite"),
    "run --k 0": (lambda f: ("run", "bm25", "--corpus", "corpus.jsonl", "--queries", "queries.tsv", "--out", "o.trec", "--k", "0"), "--k must be positive"),
    "TSV corpus with text twice": (lambda f: ("run", "bm25", "--corpus", write(f, "c.tsv", "id\ttext\ttext\nd1\ta\tb\n"), "--queries", "queries.tsv",
                                   "--out", "o.trec"), "appears twice"),
    # --- values that the fast (>= 1 MiB) path once read as 0.0
    "score NaN in a large run": (lambda f: ("score", write(f, "big.trec", RUN * 20_000 + "q1 Q0 d9 9 nan r\n"), "gold.qrels"), "big.trec:80001"),
    "score NA grade in large qrels": (lambda f: ("score", "run.trec",
                                                 write(f, "big.qrels", "".join(f"q{i} 0 d{i} 1\n" for i in range(60_000)) + "q1 0 dx NA\n")),
                                      "big.qrels:60001"),
    # --- containers
    "zip member escaping the archive": (lambda f: ("score", _zip_with(f, "../evil.trec"), "gold.qrels"), "outside the archive"),
    "run is a folder": (lambda f: ("score", (f / "d").mkdir() or "d", "gold.qrels"), "is a directory"),
}


def _zip_with(folder: Path, member: str) -> Path:
    path = folder / "evil.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(member, RUN)
    return path


@pytest.mark.parametrize("case", list(CASES))
def test_hostile_input_is_one_line_exit_2_nothing_written(case, tmp_path):
    setup, expected = CASES[case]
    base_files(tmp_path)
    args = setup(tmp_path)
    before = snapshot(tmp_path)
    done = evalkit(*args, cwd=tmp_path)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, (case, done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    assert len(lines) == 1, (case, done.stderr[-2000:])
    assert expected in lines[0], (case, lines[0])
    assert snapshot(tmp_path) == before, case


def test_undefined_score_never_passes_the_gate(tmp_path):
    """A ClimateCheck verification entry whose run has no labels is undefined now: an error, not "ok"."""
    write(tmp_path, "gold.csv", "claim_id,abstract_id,annotation\nc1,a1,Supports\nc1,a2,Not Enough Information\n")
    write(tmp_path, "pred.csv", "claim_id,abstract_id,rank\nc1,a1,1\n")
    base = write(tmp_path, "base.json", json.dumps({"entries": [{
        "task": "climatecheck2025-verification", "gold": "gold.csv", "run": "pred.csv", "metric": "official", "expected": 1.0}]}))
    done = evalkit("check", "--baseline", base, cwd=tmp_path)
    assert done.returncode == 2 and "undefined" in done.stderr, done.stdout + done.stderr


def test_concurrent_adds_keep_every_entry(tmp_path):
    base_files(tmp_path)
    for i in range(6):
        write(tmp_path, f"run{i}.trec", RUN)
    procs = [
        subprocess.Popen([sys.executable, "-m", "evalkit", "check", "--baseline", "base.json", "--add", "--task", "trec",
                          "--gold", "gold.qrels", "--run", f"run{i}.trec", "--name", f"r{i}"], cwd=tmp_path,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for i in range(6)
    ]
    codes = [p.wait(timeout=120) for p in procs]
    assert codes == [0] * 6, [p.stderr.read() for p in procs]
    entries = json.loads((tmp_path / "base.json").read_text())["entries"]
    assert sorted(e["name"] for e in entries) == [f"r{i}" for i in range(6)]
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no temporary or lock files left


def test_fused_extreme_scores_stay_finite(tmp_path):
    write(tmp_path, "a.trec", "q1 Q0 d1 1 1e308 a\nq1 Q0 d2 2 -1e308 a\nq1 Q0 d3 3 0 a\n")
    write(tmp_path, "b.trec", "q1 Q0 d1 1 -1.7e308 b\nq1 Q0 d2 2 1.7e308 b\nq1 Q0 d3 3 5 b\n")
    write(tmp_path, "gold.qrels", "q1 0 d1 1\n")
    for method in ("combsum", "wsum", "combmnz"):
        out = tmp_path / f"{method}.trec"
        done = evalkit("fuse", "a.trec", "b.trec", "--method", method, "--norm", "min-max", "--out", out, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        scores = [float(line.split()[4]) for line in out.read_text().splitlines()]
        assert all(abs(s) < float("inf") for s in scores), scores
        assert evalkit("score", out, "gold.qrels", cwd=tmp_path).returncode == 0


def test_large_legitimate_gzip_is_read(tmp_path):
    """The bound is on size, not on compression: a real gzip run well under the limit is read."""
    write(tmp_path, "gold.qrels", QRELS)
    write(tmp_path, "run.trec.gz", gzip.compress((RUN * 50_000).encode()))
    done = evalkit("score", "run.trec.gz", "gold.qrels", cwd=tmp_path)
    assert done.returncode == 0, done.stderr


def test_catalogue_size():
    assert len(CASES) >= 60
