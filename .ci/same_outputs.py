"""Every output of evalkit's commands, kept so that two commits can be compared byte for byte (a refactor's check).

    python .ci/same_outputs.py run OUT [--repo DIR] [--python PY]   # run the steps on a checkout (default: this one)
    python .ci/same_outputs.py compare A B                          # every file of A equal to B's (normalised), zips too

A commit before this script existed is run with ``--repo`` (a worktree of it) and ``--python`` (a Python with that
tree installed).

The steps: score (table, JSON, trec_eval, --out with --per-query), compare, leaderboard (JSON, Markdown, HTML and its
JSON), fuse, report (Markdown + HTML), run (a system and a TOML config), submit, validate, pool, competition bundle /
run / check, the CI gate over the shipped baseline, demo, the listings, and the Python API; on the shipped examples
and, where ``../shared/data`` is beside the checkout, on real CheckThat! 4b runs (those steps are left out without it).

Allowed to differ, and nothing else: a manifest's ``created`` time and the seconds a step took, a time stamp in a
text, the temporary folder a competition run scores in, the checkout's and the Python's own paths (written as
``<repo>`` and ``<python>``), the hashes of outputs that carry a time (worker.json, demo.manifest.json), and in a
competition bundle the files of evalkit's own source that its scoring program carries (and so that program's
hash). Prints the differing files; exit 1 if any.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLE_RUN, EXAMPLE_GOLD = "gold/examples/tweets_run.tsv", "gold/examples/tweets_gold.tsv"
DEV_GOLD = "shared/queries/subtask4b_query_tweets_dev.tsv"
E5, BASE, BM25 = ("lb/9_intfloat-e5-large-v2_lr7e-6_HN_MNRL_20250527_092105_dev.tsv", "lb/E5_base_setup_dev_TOP100.tsv",
                  "lb/predictions_BM25_dev_TOP10.tsv")


def steps(real: bool) -> list[tuple[str, list[str]]]:
    """``(name, evalkit arguments)`` in order; the real-data ones only with ``real``."""
    r, g = EXAMPLE_RUN, EXAMPLE_GOLD
    out = [
        ("score", ["score", r, g]),
        ("score-json", ["score", r, g, "-o", "json", "-m", "P@1,nDCG@10,AP"]),
        ("score-trec", ["score", r, g, "-o", "trec_eval"]),
        ("score-out", ["score", r, g, "-o", "json", "--out", "score.json", "--per-query", "perq.tsv"]),
        ("compare", ["compare", g, r, r, "--permutations", "200", "--bootstrap", "200", "--seed", "7", "-o", "json"]),
        ("fuse", ["fuse", r, r, "--out", "fused.trec"]),
        ("run", ["run", "bm25", "--corpus", "systems/examples/collection.jsonl", "--queries", "systems/examples/tweets.tsv",
                 "--out", "runs/bm25.trec"]),
        ("run-config", ["run", "systems/configs/bm25.toml", "--corpus", "systems/examples/collection.jsonl", "--queries",
                        "systems/examples/tweets.tsv", "--out", "runs/bm25c.trec"]),
        ("submit", ["submit", "fused.trec", "--task", "checkthat2025-4b", "--out", "sub.tsv"]),
        ("validate", ["validate", "sub.tsv", "--task", "checkthat2025-4b", "--gold", g]),
        ("demo", ["demo", "--out-dir", "demo"]),
        ("tasks", ["tasks"]), ("metrics", ["metrics"]), ("formats", ["formats"]), ("systems", ["systems"]),
    ]
    if not real:
        return out
    board = ["leaderboard", "lb", "-g", DEV_GOLD, "--permutations", "300", "--bootstrap", "200", "--seed", "5", "--allow-partial"]
    return out + [
        ("score-real", ["score", "shared/runs/airwaves/E5_HN_All__dev_TOP100.tsv", DEV_GOLD, "-o", "json", "-m", "R@10,nDCG@10"]),
        ("compare-real", ["compare", DEV_GOLD, E5, BASE, BM25, "--permutations", "500", "--bootstrap", "300", "--seed", "3",
                          "-o", "json", "--out", "cmp.json", "--per-query", "cmpq.tsv"]),
        ("leaderboard", [*board, "-o", "json", "--out", "board.json"]),
        ("leaderboard-md", [*board, "-o", "markdown", "--html", "board.html", "--json", "page.json"]),
        ("fuse-real", ["fuse", E5, BASE, "--method", "combsum", "--norm", "min-max", "--out", "fused2.trec"]),
        ("report", ["report", DEV_GOLD, E5, BASE, BM25, "--seed", "1", "--out", "rep/report.md", "--html", "rep/report.html"]),
        ("pool", ["pool", "-k", "5", "--out", "pool.tsv", E5, BASE, BM25, "--seed", "4"]),
        ("bundle", ["competition", "bundle", "checkthat2025-4b", "--phase", f"dev:{DEV_GOLD}", "--start", "dev=2025-01-01",
                    "--end", "dev=2025-02-01", "--out", "comp/ct.zip", "--no-self-test"]),
        ("submit-real", ["submit", BASE, "--task", "checkthat2025-4b", "--queries", DEV_GOLD, "--out", "subm.zip"]),
        ("competition-run", ["competition", "run", "comp/ct.zip", "subm.zip", "--phase", "dev", "--out", "comprun"]),
        ("competition-check", ["competition", "check", "comp/ct.zip"]),
        ("check", ["check", "--baseline", "bench/baselines/checkthat2025-4b.json"]),
    ]


API = """
import evalkit, pandas as pd
print(evalkit.score({"q1": {"a": 1.0, "b": 0.5, "c": 0.5}, "q2": {"b": 2.0}}, {"q1": {"a": 1, "c": 1}, "q2": {"b": 1, "z": 2}},
                    metrics=["nDCG@10", "AP", "RR"]))
frame = pd.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "b"], "score": [1.0, 1.0, 3.0]})
print(evalkit.score(frame, {"q1": {"b": 1}, "q2": {"b": 1}}))
print(evalkit.compare({"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}, {"q1": {"a": 1.0}, "q2": {"x": 1.0}, "q3": {"c": 1.0}},
                      {"q1": {"x": 1.0}, "q2": {"b": 1.0}, "q3": {"c": 1.0}}, names=["a", "b"]))
run, gold = evalkit.read_run("gold/examples/tweets_run.tsv"), evalkit.read_qrels("gold/examples/tweets_gold.tsv")
print(run.name, len(run.doc_ids), evalkit.score(run, gold), evalkit.fuse(run, run).name)
"""


def run_steps(out: Path, python: str, repo: Path = REPO) -> None:
    if out.exists():
        shutil.rmtree(out)
    work = out / "work"
    work.mkdir(parents=True)
    links = {"gold": repo / "gold", "systems": repo / "systems", "bench": repo / "bench"}
    shared = repo.parent / "shared" / "data" / "checkthat2025-4b"
    real = shared.is_dir()
    if real:
        links["shared"] = shared
        (work / "lb").mkdir()
        runs = sorted(shared.glob("runs/airwaves/*_dev.tsv")) + [shared / "runs/airwaves/E5_base_setup_dev_TOP100.tsv"]
        runs += sorted(shared.glob("runs/airwaves/predictions_*_dev_TOP10.tsv")) + sorted(shared.glob("runs/other-teams/*_dev*"))
        for path in runs:
            (work / "lb" / path.name).symlink_to(path)
    for name, target in links.items():
        (work / name).symlink_to(target)
    for folder in ("runs", "rep", "comp"):
        (work / folder).mkdir()
    env = {**os.environ, "PYTHONHASHSEED": "0", "MPLBACKEND": "Agg", "SOURCE_DATE_EPOCH": "1700000000", "EVALKIT_PROGRESS": "off"}
    for number, (name, args) in enumerate(steps(real), start=1):
        done = subprocess.run([python, "-m", "evalkit", *args], cwd=work, env=env, capture_output=True)
        stem = out / f"{number:02d}-{name}"
        stem.with_suffix(".out").write_bytes(done.stdout)
        stem.with_suffix(".err").write_bytes(done.stderr)
        stem.with_suffix(".rc").write_text(f"{done.returncode}\n")
    api = subprocess.run([python, "-c", API], cwd=work, env=env, capture_output=True)
    (out / "99-api.out").write_bytes(api.stdout)
    (out / "99-api.err").write_bytes(api.stderr)
    for link in [*links, *(["lb"] if real else [])]:
        path = work / link
        if path.is_symlink():
            path.unlink()
        elif path.is_dir():
            shutil.rmtree(path)
    (out / "paths.json").write_text(json.dumps({"repo": str(repo), "python": python}) + "\n")
    print(f"{len(steps(real))} steps (real data: {'yes' if real else 'no'}) into {out}")


TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?")
# the temporary folders a competition run and a bundle work in (tempfile's folder: TMPDIR, else the system's)
SCRATCH = re.compile(re.escape(os.path.join(tempfile.gettempdir(), "evalkit-")) + r"[A-Za-z0-9_-]+")
HEX = re.compile(r"^[0-9a-f]{64}$")
PROGRAM = "scoring_program.zip"  # a bundle's scoring program carries evalkit's own source: its hash differs with it


def _json_fields(value, hashes: bool):
    if isinstance(value, dict):
        return {k: "X" if k in ("created", "timings", PROGRAM) or k.endswith("seconds") or k.startswith("elapsed")
                or k.endswith(".manifest.json") else _json_fields(v, hashes) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_fields(v, hashes) for v in value]
    if isinstance(value, str) and hashes and HEX.match(value):
        return "X"
    return value


def normalised(path: Path, paths: dict) -> bytes:
    """The file with what may differ between two runs of one tree (the module docstring) replaced."""
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw
    for key in ("repo", "python"):
        text = text.replace(paths[key], f"<{key}>")
    text = TIME.sub("TIME", SCRATCH.sub("<scratch>", text))
    if path.suffix == ".json":
        try:
            return json.dumps(_json_fields(json.loads(text), path.name in ("worker.json", "demo.manifest.json")), indent=1).encode()
        except ValueError:
            pass
    text = re.sub(r"\b[0-9]+(\.[0-9]+)? s\b", "N s", text) if path.suffix in (".err", ".out") else text
    return text.encode()


def zip_members(data: bytes, prefix: str = "") -> dict[str, bytes]:
    members = {}
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for name in archive.namelist():
            body = archive.read(name)
            if name.endswith(".zip"):
                members.update(zip_members(body, f"{prefix}{name}!"))
            elif not (name.startswith("evalkit/") or "!evalkit/" in f"{prefix}{name}"):  # evalkit's own source
                if name.endswith(".json"):
                    body = re.sub(rb'"(created|scoring_program\.zip)": *"[^"]*"', rb'"\1": "X"', body)
                members[prefix + name] = body
    return members


def compare(a: Path, b: Path) -> int:
    paths_a, paths_b = (json.loads((d / "paths.json").read_text()) for d in (a, b))
    names_a = {p.relative_to(a) for p in a.rglob("*") if p.is_file() and p.name != "paths.json"}
    names_b = {p.relative_to(b) for p in b.rglob("*") if p.is_file() and p.name != "paths.json"}
    differing = [f"only in {a}: {n}" for n in sorted(names_a - names_b)] + [f"only in {b}: {n}" for n in sorted(names_b - names_a)]
    for name in sorted(names_a & names_b):
        if name.suffix == ".zip":
            first, second = zip_members((a / name).read_bytes()), zip_members((b / name).read_bytes())
            if first != second:
                differing.append(f"{name}: members {sorted(k for k in set(first) | set(second) if first.get(k) != second.get(k))}")
        elif normalised(a / name, paths_a) != normalised(b / name, paths_b):
            differing.append(str(name))
    for line in differing:
        print("differs:", line)
    print(f"{len(names_a & names_b)} files compared: {'identical' if not differing else f'{len(differing)} differ'}")
    return 1 if differing else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run")
    run.add_argument("out", type=Path)
    run.add_argument("--repo", type=Path, default=REPO)
    run.add_argument("--python", default=sys.executable)
    both = sub.add_parser("compare")
    both.add_argument("a", type=Path)
    both.add_argument("b", type=Path)
    args = parser.parse_args()
    if args.command == "run":
        run_steps(args.out.resolve(), args.python, args.repo.resolve())
        return 0
    return compare(args.a, args.b)


if __name__ == "__main__":
    sys.exit(main())
