"""How fast is `evalkit score` against one-shot scripts using pytrec_eval, ranx and ir_measures, and against this
machine's floor?

Builds synthetic TREC runs (N queries x 100 docs, graded qrels with 1-5
relevant documents per query), then times each tool as a whole cold process
(python start-up, imports, reading both files, computing MRR@10, Recall@100,
nDCG@10 and MAP, printing the means). Every tool runs once per round, in a
rotating order, for ``--repeat`` rounds; best and median are printed with
their ratios. Also times `evalkit score` on a real 1,446-query CheckThat! 4b run.

The floor is what any Python scorer of these files pays before computing
anything: python start-up, ``import numpy`` (the one library evalkit needs to
score) and reading the bytes of both files (``open(path, "rb").read()``),
as a process of its own, under the environment evalkit's command line sets
for itself (one OpenBLAS thread, no huge pages). evalkit / floor near 1 means
nothing is left to cut but the computing itself. ``floor-reads`` reads the
same bytes 1 MiB at a time into one buffer, as evalkit reads a large run it
scores without a manifest (evalkit/io/streamed.py): the lower floor of that.

    python bench/score_speed.py [--sizes 10000 50000] [--repeat 5]

pytrec_eval has no reciprocal-rank cutoff; its script computes ``recip_rank``
over the full list (the same work or less). Numbers are printed, never asserted.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data" / "checkthat2025-4b"

FLOOR = """
import sys, numpy
for path in sys.argv[1:]:
    with open(path, "rb") as handle:
        handle.read()
"""
# The same bytes read 1 MiB at a time into one buffer: no fresh memory to fault in and zero (a 177 MB run: 0.03 s
# instead of 0.08-0.15 s). evalkit's command reads a large run so where it shows no manifest (evalkit/io/streamed.py),
# so this is the floor of what it does there: printed beside the floor above, its ratio too.
FLOOR_READS = """
import sys, numpy
buffer = bytearray(1 << 20)
for path in sys.argv[1:]:
    with open(path, "rb", buffering=0) as handle:
        while handle.readinto(buffer):
            pass
"""
FLOORS = ("floor", "floor-reads")
# the environment evalkit's command line gives itself before numpy loads (evalkit/cli/__init__.py)
FLOOR_ENV = {"NUMPY_MADVISE_HUGEPAGE": "0", "OPENBLAS_NUM_THREADS": "1"}
PEERS = {
    "pytrec_eval": """
import sys, pytrec_eval
run, qrels = {}, {}
with open(sys.argv[1]) as f:
    for line in f:
        q, _, d, _, s, _ = line.split()
        run.setdefault(q, {})[d] = float(s)
with open(sys.argv[2]) as f:
    for line in f:
        q, _, d, g = line.split()
        qrels.setdefault(q, {})[d] = int(g)
res = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank", "recall.100", "ndcg_cut.10", "map"}).evaluate(run)
for m in ("recip_rank", "recall_100", "ndcg_cut_10", "map"):
    print(m, sum(v[m] for v in res.values()) / len(res))
""",
    "ranx": """
import sys
from ranx import Qrels, Run, evaluate
run = Run.from_file(sys.argv[1], kind="trec")
qrels = Qrels.from_file(sys.argv[2], kind="trec")
print(evaluate(qrels, run, ["mrr@10", "recall@100", "ndcg@10", "map"]))
""",
    "ir_measures": """
import sys, ir_measures
from ir_measures import RR, R, nDCG, AP
run = ir_measures.read_trec_run(sys.argv[1])
qrels = ir_measures.read_trec_qrels(sys.argv[2])
print(ir_measures.calc_aggregate([RR@10, R@100, nDCG@10, AP], qrels, run))
""",
}


def make_data(folder: Path, n_queries: int, depth: int = 100, n_docs: int = 500_000, seed: int = 0) -> tuple[Path, Path]:
    rng = np.random.default_rng(seed)
    run_path, qrels_path = folder / f"run_{n_queries}.trec", folder / f"qrels_{n_queries}.txt"
    if run_path.exists() and qrels_path.exists():
        return run_path, qrels_path
    with open(run_path, "w") as run, open(qrels_path, "w") as qrels:
        for q in range(n_queries):
            docs = rng.choice(n_docs, size=depth, replace=False)
            scores = np.sort(rng.random(depth))[::-1]
            run.write("".join(f"q{q} Q0 d{d} {r + 1} {s:.6f} bench\n" for r, (d, s) in enumerate(zip(docs, scores))))
            n_rel = int(rng.integers(1, 6))
            judged = np.concatenate([rng.choice(docs, size=min(n_rel, 3), replace=False), rng.choice(n_docs, size=n_rel, replace=False)])
            qrels.write("".join(f"q{q} 0 d{d} {int(rng.integers(1, 3))}\n" for d in np.unique(judged)))
    return run_path, qrels_path


def timed(command: list[str], env: dict[str, str] | None = None) -> tuple[float, str]:
    """Wall seconds of one cold process, and what it printed."""
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"{command[:3]} failed:\n{result.stderr[-2000:]}")
    return elapsed, result.stdout


def commands(run: Path, qrels: Path, folder: Path) -> dict[str, list[str]]:
    out = {"evalkit": [sys.executable, "-m", "evalkit", "score", str(run), str(qrels), "--task", "trec",
                       "--metrics", "mrr@10 recall@100 ndcg@10 map", "--output", "tsv"]}
    for name, code in zip(FLOORS, (FLOOR, FLOOR_READS)):
        floor = folder / f"{name}.py"
        floor.write_text(code)
        out[name] = [sys.executable, str(floor), str(run), str(qrels)]
    for name, code in PEERS.items():
        script = folder / f"peer_{name}.py"
        script.write_text(code)
        out[name] = [sys.executable, str(script), str(run), str(qrels)]
    return out


def load() -> str:
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def bench_size(size: int, folder: Path, repeat: int, env: dict[str, str]) -> None:
    run, qrels = make_data(folder, size)
    cmds = commands(run, qrels, folder)
    envs = {name: {**env, **FLOOR_ENV} if name in FLOORS else env for name in cmds}
    timed(cmds["ranx"], env)  # warm numba's on-disk cache once so ranx is not charged for its first JIT
    times: dict[str, list[float]] = {name: [] for name in cmds}
    names = list(cmds)
    print(f"\n{size:,} queries x 100 docs ({run.stat().st_size / 1e6:.0f} MB run), {repeat} rounds; {load()}")
    for round_ in range(repeat):
        for name in names[round_ % len(names):] + names[: round_ % len(names)]:  # a rotating order: no tool always first
            seconds, printed = timed(cmds[name], envs[name])
            times[name].append(seconds)
            if name == "evalkit":
                values = " ".join(line.replace("\t", " ") for line in printed.splitlines()[1:])
    best = {name: min(v) for name, v in times.items()}
    median = {name: statistics.median(v) for name, v in times.items()}
    print(f"  {'':<12} {'best':>7}   {'median':>7}")
    for name in sorted(cmds, key=best.get):
        print(f"  {name:<12} {best[name]:6.2f} s  {median[name]:6.2f} s")
    peer = min((v, k) for k, v in best.items() if k not in ("evalkit", *FLOORS))[1]
    peer_median = min((v, k) for k, v in median.items() if k not in ("evalkit", *FLOORS))[1]
    print(f"  evalkit / floor:              {best['evalkit'] / best['floor']:.2f} (best)  {median['evalkit'] / median['floor']:.2f} (median)")
    print(f"  evalkit / floor-reads:        {best['evalkit'] / best['floor-reads']:.2f} (best)  "
          f"{median['evalkit'] / median['floor-reads']:.2f} (median)")
    print(f"  fastest peer / evalkit:       {best[peer] / best['evalkit']:.2f}x ({peer}, best)  "
          f"{median[peer_median] / median['evalkit']:.2f}x ({peer_median}, median)")
    print(f"  evalkit's means: {values}; {load()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "evalkit-bench")
    args = parser.parse_args()
    args.data.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    # the peers run from installed packages, byte-compiled by pip; an editable evalkit has no .pyc until it is
    # first imported, and never where PYTHONDONTWRITEBYTECODE is set (as on this project's machines): compile it
    # once, as an install would, so that no process is charged for compiling evalkit's source
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "evalkit")], check=True, env=env, capture_output=True)

    for size in args.sizes:
        bench_size(size, args.data, args.repeat, env)

    real_run = SHARED / "runs" / "airwaves" / "E5_base_setup_test_TOP100.tsv"
    real_gold = SHARED / "queries" / "subtask4b_query_tweets_test_gold.tsv"
    if real_run.exists():
        command = [sys.executable, "-m", "evalkit", "score", str(real_run), str(real_gold)]
        seconds = min(timed(command, env)[0] for _ in range(args.repeat))
        print(f"\nreal 4b run (1,446 queries x 100 ids), cold `evalkit score`: {seconds:.3f} s")


if __name__ == "__main__":
    main()
