"""Fusing two runs: `evalkit fuse` (native numpy) vs a plain ranx script, cold (fresh processes) and warm (in process).

Runs: two real CheckThat! 4b dev runs from ../shared/data when present (1,400 queries, top 100 and top 10),
else two synthetic TREC runs written by this script (same shape, scored, with ties). Cold: each side is a
fresh process, as a user runs it, best of N. Warm: both libraries already imported and compiled, the runs
already read, best of N fusion calls. Prints seconds and ratios; asserts nothing.

    python bench/fuse_speed.py [--repeats 3] [--method rrf] [--norm min-max] [--synthetic]
"""
from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
AIRWAVES = REPO.parent / "shared" / "data" / "checkthat2025-4b" / "runs" / "airwaves"
REAL_RUNS = [AIRWAVES / "E5_base_setup_dev_TOP100.tsv", AIRWAVES / "predictions_BM25_dev_TOP10.tsv"]

RANX_SCRIPT = """
import ast, csv, sys
from ranx import Run, fuse
def read(path):
    out = {}
    if path.endswith(".tsv"):  # CheckThat! 4b: post_id, preds (a ranked list): score n - position
        with open(path, newline="") as handle:
            for row in csv.DictReader(handle, delimiter="\\t"):
                ids = list(dict.fromkeys(ast.literal_eval(row["preds"])))
                out[row["post_id"]] = {d: float(len(ids) - i) for i, d in enumerate(ids)}
    else:  # TREC run
        with open(path) as handle:
            for line in handle:
                q, _, d, _, s, _ = line.split()
                out.setdefault(q, {})[d] = float(s)
    return Run(out)
method, norm, out = sys.argv[1], sys.argv[2], sys.argv[3]
fused = fuse([read(p) for p in sys.argv[4:]], norm=None if norm == "none" else norm, method=method)
fused.save(out, kind="trec")
"""


def synthetic_runs(folder: Path, queries: int = 1400, seed: int = 0) -> list[Path]:
    """Two scored TREC runs shaped like the 4b dev runs (top 100 and top 10 of 8,000 documents, 1-decimal scores: ties)."""
    rng = random.Random(seed)
    paths = []
    for name, depth in (("dense", 100), ("bm25", 10)):
        lines = []
        for q in range(queries):
            docs = rng.sample(range(8000), depth)
            scores = sorted((round(rng.uniform(0, 30), 1) for _ in docs), reverse=True)
            lines += [f"q{q} Q0 doc{d} {i + 1} {s} {name}" for i, (d, s) in enumerate(zip(docs, scores))]
        path = folder / f"{name}.trec"
        path.write_text("\n".join(lines) + "\n")
        paths.append(path)
    return paths


def best_of(command: list[str], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if done.returncode != 0:
            sys.exit(f"failed: {' '.join(command)}\n{done.stderr[-2000:]}")
    return min(times)


def best_call(function, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def warm(paths: list[Path], method: str, norm: str | None, repeats: int) -> tuple[float, float]:
    """(evalkit.fusion.fuse, ranx.fuse) seconds per call with everything imported, compiled and read."""
    sys.path.insert(0, str(REPO))
    from evalkit import fusion
    from evalkit.fusion import ranx_backend
    from evalkit.io.reading import read_run

    runs = [read_run(p) for p in paths]
    queries = fusion.query_union(runs, allow_partial=True)
    ours = best_call(lambda: fusion.fuse(runs, method, norm, allow_partial=True), repeats)
    with ranx_backend.quiet_numba():
        from ranx import fuse as ranx_fuse

        ranx_runs = [ranx_backend.to_ranx(r, queries) for r in runs]
        ranx_method = fusion.get_method(method).ranx_name
        ranx_fuse(ranx_runs, norm=norm, method=ranx_method)  # compile (or load numba's cache)
        theirs = best_call(lambda: ranx_fuse(ranx_runs, norm=norm, method=ranx_method), repeats)
    return ours, theirs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--method", default="rrf")
    parser.add_argument("--norm", default="min-max")
    parser.add_argument("--synthetic", action="store_true", help="synthetic runs even when the real ones are present")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        real = not args.synthetic and all(p.exists() for p in REAL_RUNS)
        paths = REAL_RUNS if real else synthetic_runs(folder)
        ranx_script = folder / "ranx_fuse.py"
        ranx_script.write_text(RANX_SCRIPT)
        ours = best_of([sys.executable, "-m", "evalkit", "fuse", *map(str, paths), "--method", args.method, "--norm", args.norm,
                        "--out", str(folder / "evalkit.trec"), "--force"], args.repeats)
        ranx_name = {"combsum": "sum", "combmnz": "mnz", "combmax": "max", "combmin": "min", "combmed": "med", "combanz": "anz"}.get(args.method, args.method)
        theirs = best_of([sys.executable, str(ranx_script), ranx_name, args.norm, str(folder / "ranx.trec"), *map(str, paths)], args.repeats)
        warm_ours, warm_theirs = warm(paths, args.method, None if args.norm == "none" else args.norm, max(args.repeats, 5))
    what = f"two real 4b dev runs ({paths[0].name}, {paths[1].name})" if real else "two synthetic runs (1,400 queries, top 100 and top 10)"
    print(f"{what}, {args.method} / {args.norm}")
    print(f"cold, fresh processes reading the files and writing a TREC run, best of {args.repeats}:")
    print(f"  evalkit fuse (native numpy) : {ours:7.3f} s")
    print(f"  ranx script (numba)         : {theirs:7.3f} s")
    print(f"  ratio ranx / evalkit        : {theirs / ours:7.1f}x")
    print(f"warm, in process (imported, compiled, runs read), best of {max(args.repeats, 5)}:")
    print(f"  evalkit.fusion.fuse         : {warm_ours:7.3f} s")
    print(f"  ranx.fuse                   : {warm_theirs:7.3f} s")
    print(f"  ratio ranx / evalkit        : {warm_theirs / warm_ours:7.1f}x")


if __name__ == "__main__":
    main()
