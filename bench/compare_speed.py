"""Cold whole-process timings of `evalkit compare` and `evalkit leaderboard` on the real CheckThat! 4b test runs.

compare: four AIRwaves test runs (1,446 queries; all tests, 10,000 permutations and bootstrap resamples).
leaderboard: every 4b test file under ../shared/data/checkthat2025-4b/runs (20 files, zips included), each of
the three adjacent tests. Every timing is a fresh `python -m evalkit` process, as a user runs it; best and median
of N. With ``--against PATH`` the same commands also run on another checkout (e.g. a `git worktree` of an older
commit) and the outputs of both are compared byte for byte (the p-values must not change). Prints; asserts nothing.

    python bench/compare_speed.py [--repeats 5] [--against /tmp/evalkit-before]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CT4B = REPO.parent / "shared" / "data" / "checkthat2025-4b"
GOLD = CT4B / "queries" / "subtask4b_query_tweets_test_gold.tsv"
AIRWAVES = CT4B / "runs" / "airwaves"
RUNS = [
    AIRWAVES / "E5_base_setup_test_TOP100.tsv",
    AIRWAVES / "predictions_BM25_test_TOP10.tsv",
    AIRWAVES / "predictions_SciBERT_test_TOP10.tsv",
    AIRWAVES / "c_6_intfloat-e5-large-v2_lr7e-6_chunked_20250527_190411_test.tsv",
]
CASES = {
    "compare 4 runs x 1,446 queries": ["compare", str(GOLD), *map(str, RUNS)],
    "leaderboard 20 files (wilcoxon)": ["leaderboard", str(CT4B / "runs"), "--glob", "*test*", "--gold", str(GOLD)],
    "leaderboard 20 files (ttest)": ["leaderboard", str(CT4B / "runs"), "--glob", "*test*", "--gold", str(GOLD), "--test", "ttest"],
    "leaderboard 20 files (randomization)": ["leaderboard", str(CT4B / "runs"), "--glob", "*test*", "--gold", str(GOLD),
                                             "--test", "randomization"],
}


def timed(checkout: Path, args: list[str], repeats: int) -> tuple[list[float], str]:
    """Seconds of ``repeats`` fresh processes running evalkit from ``checkout``, and the output of the last."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    times, out = [], ""
    for _ in range(repeats):
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "evalkit", *args], capture_output=True, text=True, env=env, cwd=checkout)
        times.append(time.perf_counter() - start)
        if done.returncode != 0:
            sys.exit(f"failed in {checkout}: evalkit {' '.join(args)}\n{done.stderr[-2000:]}")
        out = done.stdout
    return times, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--against", type=Path, default=None, help="another evalkit checkout to time on the same commands")
    args = parser.parse_args()
    if not GOLD.exists():
        sys.exit(f"real data not found at {CT4B}")
    print(f"cold whole processes, best / median of {args.repeats}, {os.cpu_count()} cores")
    for label, command in CASES.items():
        times, out = timed(REPO, command, args.repeats)
        line = f"{label:40s} this checkout {min(times):5.2f} s / {statistics.median(times):5.2f} s"
        if args.against:
            before, old_out = timed(args.against.resolve(), command, args.repeats)
            same = "same output" if old_out == out else "OUTPUT DIFFERS"
            line += f"   {args.against.name} {min(before):5.2f} s / {statistics.median(before):5.2f} s   {min(before) / min(times):4.1f}x   {same}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
