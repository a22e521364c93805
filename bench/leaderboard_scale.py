"""Peak memory and time of `evalkit leaderboard` as the number of runs grows (20 and 200 runs by default).

Each board is synthetic TREC runs of graded skill over QUERIES queries (one relevant document each,
DEPTH documents a query), ranked by a cold `python -m evalkit leaderboard FOLDER --gold QRELS -o json`
with the defaults (randomised Tukey HSD over every pair, B permutations, B bootstrap resamples of the
queries for the rank intervals). The peak resident memory is the child's own ``ru_maxrss`` (``os.wait4``),
the time its wall clock and CPU (user + system) seconds. The machine's load is printed first: on a shared
machine the CPU seconds are the steadier figure.

    python bench/leaderboard_scale.py                          # 20 and 200 runs x 1,500 queries, B = 10,000
    python bench/leaderboard_scale.py --runs 200 --queries 30  # the issue's 200 x 30 board
    python bench/leaderboard_scale.py --limit-mb 2048          # each child under RLIMIT_AS = 2 GiB
    python bench/leaderboard_scale.py --all-pairs wilcoxon     # another all-pairs procedure

Prints a table; asserts nothing.
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DEPTH = 10


def write_board(folder: Path, runs: int, queries: int, seed: int = 1) -> Path:
    """A qrels file (one relevant document per query) and ``runs`` TREC runs of graded skill, DEPTH documents a query."""
    rng = np.random.default_rng(seed)
    qrels = folder / "qrels.txt"
    qrels.write_text("".join(f"q{q} 0 d{q}_rel 1\n" for q in range(queries)))
    board = folder / "runs"
    board.mkdir()
    for r in range(runs):
        skill = 0.3 + 0.4 * r / max(runs - 1, 1)
        hit = rng.random(queries) < skill + 0.2
        where = np.minimum(rng.geometric(skill, queries) - 1, DEPTH - 1)
        lines = []
        for q in range(queries):
            docs = [f"d{q}_{j}" for j in range(DEPTH)]
            if hit[q]:
                docs[where[q]] = f"d{q}_rel"
            lines += [f"q{q} Q0 {d} {i + 1} {DEPTH - i} run{r}\n" for i, d in enumerate(docs)]
        (board / f"run{r:03d}.trec").write_text("".join(lines))
    return qrels


def measure(folder: Path, qrels: Path, permutations: int, bootstrap: int, limit_mb: int | None,
            procedure: str = "randomised-tukey") -> tuple[float, float, float, int]:
    """Peak RSS (MB), wall and CPU seconds and exit code of one cold leaderboard process."""
    def limit() -> None:
        if limit_mb:
            resource.setrlimit(resource.RLIMIT_AS, (limit_mb << 20, limit_mb << 20))

    out = folder / "board.json"
    command = [sys.executable, "-m", "evalkit", "leaderboard", str(folder / "runs"), "--gold", str(qrels), "-o", "json",
               "--out", str(out), "--force", "--permutations", str(permutations), "--bootstrap", str(bootstrap),
               "--all-pairs", procedure]
    start = time.perf_counter()
    child = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=limit)
    stderr = b""
    assert child.stderr is not None
    while True:  # drain stderr while waiting, so the child never blocks on a full pipe
        chunk = child.stderr.read(65536)
        if not chunk:
            break
        stderr += chunk
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    if child.returncode:
        print(f"   exit {child.returncode}: {stderr.decode(errors='replace').strip().splitlines()[-1:]}", file=sys.stderr)
    return usage.ru_maxrss / 1024, wall, usage.ru_utime + usage.ru_stime, child.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", default="20,200", help="comma-separated numbers of runs (default 20,200)")
    parser.add_argument("--queries", type=int, default=1500)
    parser.add_argument("--permutations", type=int, default=10_000)
    parser.add_argument("--bootstrap", type=int, default=10_000)
    parser.add_argument("--all-pairs", default="randomised-tukey", help="the all-pairs procedure (default randomised-tukey)")
    parser.add_argument("--limit-mb", type=int, default=None, help="RLIMIT_AS of each child, in MiB")
    args = parser.parse_args()
    from evalkit.native import kernels

    one, five, fifteen = os.getloadavg()
    print(f"{os.cpu_count()} cores, load average {one:.1f} / {five:.1f} / {fifteen:.1f} (1 / 5 / 15 min); compiled kernel: "
          f"{'yes' if kernels.native else 'no'}; B = {args.permutations:,} permutations, {args.bootstrap:,} bootstrap resamples; "
          f"--all-pairs {args.all_pairs}"
          + (f"; RLIMIT_AS {args.limit_mb} MiB" if args.limit_mb else ""))
    print(f"{'runs':>5} {'queries':>8} {'pairs':>7} {'peak RSS MB':>12} {'wall s':>8} {'cpu s':>8} {'exit':>5}")
    for runs in (int(r) for r in args.runs.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            qrels = write_board(folder, runs, args.queries)
            peak, wall, cpu, code = measure(folder, qrels, args.permutations, args.bootstrap, args.limit_mb, args.all_pairs)
        print(f"{runs:>5} {args.queries:>8,} {runs * (runs - 1) // 2:>7,} {peak:>12,.0f} {wall:>8.1f} {cpu:>8.1f} {code:>5}", flush=True)


if __name__ == "__main__":
    main()
