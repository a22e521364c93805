"""Cold fusion of two real CheckThat! 4b dev runs: `evalkit fuse` (native numpy) vs a plain ranx script.

Each side is a fresh process, as a user runs it; best of N. Prints seconds and the ratio; asserts nothing.

    python bench/fuse_speed.py [--repeats 3] [--method rrf] [--norm min-max]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
AIRWAVES = REPO.parent / "shared" / "data" / "checkthat2025-4b" / "runs" / "airwaves"
RUNS = [AIRWAVES / "E5_base_setup_dev_TOP100.tsv", AIRWAVES / "predictions_BM25_dev_TOP10.tsv"]

RANX_SCRIPT = """
import ast, csv, sys
from ranx import Run, fuse
def read(path):
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\\t"))
    out = {}
    for row in rows:
        ids = list(dict.fromkeys(ast.literal_eval(row["preds"])))
        out[row["post_id"]] = {d: float(len(ids) - i) for i, d in enumerate(ids)}
    return Run(out)
method, norm, out = sys.argv[1], sys.argv[2], sys.argv[3]
fused = fuse([read(p) for p in sys.argv[4:]], norm=norm, method=method)
fused.save(out, kind="trec")
"""


def best_of(command: list[str], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if done.returncode != 0:
            sys.exit(f"failed: {' '.join(command)}\n{done.stderr[-2000:]}")
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--method", default="rrf")
    parser.add_argument("--norm", default="min-max")
    args = parser.parse_args()
    missing = [p for p in RUNS if not p.exists()]
    if missing:
        sys.exit(f"real runs not found: {missing[0]} (needs ../shared/data beside the checkout)")
    with tempfile.TemporaryDirectory() as tmp:
        ranx_script = Path(tmp) / "ranx_fuse.py"
        ranx_script.write_text(RANX_SCRIPT)
        ours = best_of([sys.executable, "-m", "evalkit", "fuse", *map(str, RUNS), "--method", args.method, "--norm", args.norm,
                        "--out", str(Path(tmp) / "evalkit.trec"), "--force"], args.repeats)
        ranx_name = {"combsum": "sum", "combmnz": "mnz"}.get(args.method, args.method)
        theirs = best_of([sys.executable, str(ranx_script), ranx_name, args.norm, str(Path(tmp) / "ranx.trec"), *map(str, RUNS)], args.repeats)
    print(f"two 4b dev runs ({RUNS[0].name}, {RUNS[1].name}), {args.method} / {args.norm}, best of {args.repeats} cold processes")
    print(f"  evalkit fuse (native numpy): {ours:6.2f} s")
    print(f"  ranx script (numba)        : {theirs:6.2f} s")
    print(f"  ratio ranx / evalkit       : {theirs / ours:6.1f}x")


if __name__ == "__main__":
    main()
