"""How long every-pair comparisons take: a 20-run leaderboard with rank intervals, each procedure, and the peers.

1. Cold whole processes of `evalkit leaderboard` on 20 synthetic TREC runs x 1,500 queries x 10 documents
   (the default: randomised Tukey HSD, B = 10,000, and the bootstrap rank intervals, B = 10,000), against
   the same leaderboard with `--all-pairs none`; and on the real CheckThat! 4b test files when present.
2. In process, on the 20 x 1,500 matrix of per-query scores: evalkit.stats.allpairs.all_pairs for each procedure
   (randomised Tukey HSD with the compiled kernel and with its numpy twin).
3. Peers on the same matrix: scipy.stats.tukey_hsd (one-way and unpaired, what ranx calls), a plain Python loop
   of Sakai's randomised Tukey HSD (timed at B = 200, scaled to 10,000), and R's TukeyHSD(aov(score ~ system +
   topic)) where Rscript is installed (on 20 x 150: aov fits a dense QR, minutes at 1,500 queries).

Prints; asserts nothing. ``python bench/allpairs_speed.py [--repeats 3]``
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
CT4B = REPO.parent / "shared" / "data" / "checkthat2025-4b"
RUNS, QUERIES, DEPTH = 20, 1500, 10


def write_collection(folder: Path, seed: int = 1) -> Path:
    """A qrels file (one relevant document per query) and RUNS TREC runs of graded skill, DEPTH documents each."""
    rng = np.random.default_rng(seed)
    qrels = folder / "qrels.txt"
    qrels.write_text("".join(f"q{q} 0 d{q}_rel 1\n" for q in range(QUERIES)))
    runs = folder / "runs"
    runs.mkdir()
    for r in range(RUNS):
        skill = 0.35 + 0.02 * r
        lines = []
        for q in range(QUERIES):
            docs = [f"d{q}_{j}" for j in range(DEPTH)]
            if rng.random() < skill + 0.3:
                docs[min(int(rng.geometric(skill)) - 1, DEPTH - 1)] = f"d{q}_rel"
            lines += [f"q{q} Q0 {d} {i + 1} {DEPTH - i} run{r}\n" for i, d in enumerate(docs)]
        (runs / f"run{r:02d}.trec").write_text("".join(lines))
    return qrels


def cold(args: list[str], repeats: int) -> tuple[list[float], list[float]]:
    """Wall and CPU (user + system) seconds of ``repeats`` fresh processes: on a shared machine CPU time is the steadier one."""
    walls, cpus = [], []
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "evalkit", *args], capture_output=True, text=True, cwd=REPO)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if done.returncode != 0:
            sys.exit(f"failed: evalkit {' '.join(args)}\n{done.stderr[-2000:]}")
    return walls, cpus


def shown(timings: tuple[list[float], list[float]]) -> str:
    walls, cpus = timings
    return f"wall {min(walls):5.2f} s / {statistics.median(walls):5.2f} s   cpu {min(cpus):5.2f} s"


def best(function, repeats: int) -> float:
    """The least CPU time of ``repeats`` calls (this process, all threads)."""
    times = []
    for _ in range(repeats):
        start = time.process_time()
        function()
        times.append(time.process_time() - start)
    return min(times)


def matrix_of(folder: Path, qrels: Path):
    from evalkit.scoring.leaderboard import build_leaderboard
    from evalkit.stats.paired import align

    board = build_leaderboard(str(folder), str(qrels), pairs=None, progress=False)
    values = align([e.scored.score.evaluation for e in board.entries], board.metric, [e.name for e in board.entries])
    return values


def plain_loop(matrix: np.ndarray, permutations: int, seed: int = 1) -> np.ndarray:
    """Sakai's randomised Tukey HSD written as the book describes it: one shuffle per topic and replicate."""
    rng = np.random.default_rng(seed)
    k, n = matrix.shape
    ranges = np.empty(permutations)
    for b in range(permutations):
        shuffled = np.column_stack([matrix[rng.permutation(k), t] for t in range(n)])
        means = shuffled.mean(axis=1)
        ranges[b] = means.max() - means.min()
    return ranges


def r_tukey_seconds(matrix: np.ndarray) -> float | None:
    if shutil.which("Rscript") is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        np.savetxt(Path(tmp) / "m.csv", matrix, delimiter=",")
        script = Path(tmp) / "t.R"
        script.write_text(
            'm <- as.matrix(read.csv(commandArgs(TRUE)[1], header = FALSE)); k <- nrow(m); n <- ncol(m)\n'
            'd <- data.frame(score = as.vector(m), system = factor(rep(1:k, times = n)), topic = factor(rep(1:n, each = k)))\n'
            't0 <- Sys.time(); x <- TukeyHSD(aov(score ~ system + topic, data = d), "system")\n'
            'cat(as.numeric(difftime(Sys.time(), t0, units = "secs")))\n')
        done = subprocess.run(["Rscript", "--vanilla", str(script), str(Path(tmp) / "m.csv")], capture_output=True, text=True)
        return float(done.stdout) if done.returncode == 0 else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    from evalkit.native import kernels
    from evalkit.stats.allpairs import PROCEDURES, AllPairsOptions, all_pairs

    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; wall: best / median of {args.repeats}, cpu: best "
          f"(user + system; in process: CPU seconds); compiled kernel: {'yes' if kernels.native else 'no'}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        qrels = write_collection(folder)
        command = ["leaderboard", str(folder / "runs"), "--gold", str(qrels)]
        print(f"\n1. cold `evalkit leaderboard`, {RUNS} TREC runs x {QUERIES:,} queries x {DEPTH} documents")
        print(f"   with rank intervals (randomised Tukey HSD, B = 10,000)  {shown(cold(command, args.repeats))}")
        print(f"   --all-pairs none                                     {shown(cold(command + ['--all-pairs', 'none'], args.repeats))}")
        if (CT4B / "runs").exists():
            real = cold(["leaderboard", str(CT4B / "runs"), "--glob", "*_test*", "--gold",
                         str(CT4B / "queries" / "subtask4b_query_tweets_test_gold.tsv")], args.repeats)
            print(f"   the real 4b test files (19 ranked x 1,446 queries)   {shown(real)}")
        values = matrix_of(folder / "runs", qrels)
    matrix = values.matrix
    print(f"\n2. evalkit.stats.allpairs.all_pairs on the {matrix.shape[0]} x {matrix.shape[1]:,} matrix (B = 10,000 draws and resamples; CPU s)")
    for procedure in PROCEDURES:
        if procedure == "mcnemar":
            continue
        seconds = best(lambda chosen=procedure: all_pairs(values, AllPairsOptions(procedure=chosen)), args.repeats)
        print(f"   {procedure:18s} {seconds:6.2f} s")
    native = kernels.native
    kernels.native = None
    try:
        seconds = best(lambda: all_pairs(values, AllPairsOptions(permutations=1000, bootstrap=1000)), 1)
    finally:
        kernels.native = native
    print(f"   randomised-tukey without the compiled kernel (numpy twin), B = 1,000: {seconds:.2f} s")

    print("\n3. peers on the same matrix")
    from scipy.stats import tukey_hsd

    print(f"   scipy.stats.tukey_hsd (one-way, unpaired; ranx)     {best(lambda: tukey_hsd(*matrix), args.repeats):6.2f} s")
    loop = best(lambda: plain_loop(matrix, 200), 1) * 50
    print(f"   plain-loop randomised Tukey HSD, B = 10,000 (scaled) {loop:6.1f} s")
    small = matrix[:, :150]
    r_seconds = r_tukey_seconds(small)
    ours = best(lambda: all_pairs(first_queries(values, 150), AllPairsOptions(procedure="tukey", bootstrap=1)), args.repeats)
    if r_seconds is None:
        print("   R TukeyHSD(aov(...)): Rscript not installed")
    else:
        print(f"   R TukeyHSD(aov(score ~ system + topic)), 20 x 150    {r_seconds:6.2f} s   evalkit tukey {ours:5.3f} s")


def first_queries(values, n: int):
    """``values`` on its first ``n`` queries."""
    from evalkit.stats.paired import PairedValues

    return PairedValues(values.metric, values.names, values.query_ids[:n], values.matrix[:, :n])


if __name__ == "__main__":
    main()
