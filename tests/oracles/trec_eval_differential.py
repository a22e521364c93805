"""Random differential testing of ``--output trec_eval`` against a trec_eval binary.

Each case writes random qrels and a random run (scores with ties and
near-ties that differ in the 17th significant digit, negative grades,
queries with nothing relevant, unjudged and pooled-but-unjudged documents,
run-only queries, fields after the run tag, comments), picks random options
(-c, -M, -l, -J, -N, -m lists with parameters) and compares evalkit's lines
with the binary's, line for line.

    python tests/oracles/trec_eval_differential.py --binary /path/to/trec_eval --cases 300 [--seed 1] [--grouped]

(``--grouped``: each run's lines grouped by query, so that evalkit reads it against its gold in one pass,
evalkit.io.prejudged, instead of declining a run whose queries' lines are interleaved.)

prints the cases, the values compared and every difference. Tests import
:func:`run_case` (tests/oracles/test_trec_eval_measures.py) when a binary is present.
Runs with a repeated document are not generated: trec_eval refuses them
("duplicate docs"), evalkit scores the first position and warns. ``rbp`` is
not asked together with ``dcg``/``ideal_dcg``: trec_eval 10's ``te_calc_rbp``
reads ``min`` and ``max`` before setting them: they hold whatever the
measure computed before it left on the stack (after ``yaap``, ``dcg``,
``set_F.x``, ``utility.p``... other values; alone or after ``-m all_trec``'s
others, 0, which evalkit takes), so ``rbp`` is asked alone or in ``all_trec``. ``ndcg``, ``dcg`` and
``ideal_dcg`` share one parameter block in trec_eval: two of them with
parameters free it twice (the binary aborts, "double free").
"""
from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

MEASURE_LISTS = [
    ["all_trec"],
    ["official"],
    ["dcg", "ideal_dcg", "yaap", "ndcg", "binG", "G"],
    ["rbp.p=0.7", "rbp_resid.p=0.5"],
    ["rbp.p=0.95,2=4,0=-1"],
    ["P.1,3,7", "recall.2,50", "ndcg_cut.3,8", "map_cut.4", "success.2,3", "relative_P.6", "unj.1,4", "iprec_at_recall.0,.33,.5,1"],
    ["set_F.0.5", "11pt_avg.0.2,0.5,0.8", "utility.2,-1,0.5,0.25", "Rprec_mult.0.3,1.5", "rbp_resid.p=0.7"],
    ["ndcg.1=3,2=0.5", "G.2=5", "Rndcg.1=2.5,3=1", "ndcg_rel.0=1", "rbp_resid.p=0.5", "relstring.15"],
    ["ideal_dcg.2=9,1=0", "dcg", "ndcg"],  # one of ndcg, dcg, ideal_dcg with parameters: they share one parameter block
    ["11pt_avg.0.9,0.1,0.5", "ndcg.1=0.3,2=0.9,3=0.2", "G.1=1.5,2=2.3,3=0.4", "Rndcg.2=-1", "set_F.2"],
    ["infAP", "bpref", "gm_bpref", "gm_map", "map", "binG", "yaap", "num_nonrel_judged_ret", "relstring"],
    ["set"],
]


def _score(rng: random.Random) -> str:
    base = rng.choice([1.0, 0.5, 2.25, 0.1, 0.3, 7.0, rng.random(), rng.uniform(-5, 5)])
    if rng.random() < 0.3:  # a near-tie: the next double, written with 17 significant digits
        base = float(np.nextafter(base, np.inf if rng.random() < 0.5 else -np.inf))
    return f"{base:.17g}"


def random_files(folder: Path, rng: random.Random) -> tuple[Path, Path, bool]:
    """Qrels and run text; returns (qrels, run, every qrels query is answered)."""
    n_queries = rng.randint(1, 8)
    queries = rng.sample(["1", "2", "10", "101", "a", "b7", "Q3", "q-9", "z", "20"], n_queries)
    top = rng.choice([1, 2, 3, 4, 12])
    qrels, run = [], []
    every = rng.random() < 0.6
    for q in queries:
        docs = [f"d{d}" for d in rng.sample(range(40), rng.randint(1, 25))]
        nothing_relevant = rng.random() < 0.15
        for d in docs:
            grade = rng.choice([-2, -1, 0, 0, 0] + ([] if nothing_relevant else list(range(1, top + 1))))
            qrels.append(f"{q} 0 {d} {grade}\n")
        if every or rng.random() < 0.7:
            retrieved = rng.sample(range(60), rng.randint(1, 45))
            for r, d in enumerate(retrieved):
                extra = " extra" if rng.random() < 0.05 else ""
                run.append(f"{q}\tQ0\td{d}\t{r}\t{_score(rng)}\ttag{rng.randint(0, 2)}{extra}\n")
        else:
            every = False
    if rng.random() < 0.3:
        run.append("runonly Q0 d1 1 1.0 tag9\n")
    rng.shuffle(qrels)
    rng.shuffle(run)
    answered = {line.split()[0] for line in run}
    every = all(q in answered for q in queries)
    if rng.random() < 0.15:  # judgment groups (-R qrels_jg): the second column names a group; a pair may be judged by several
        grouped = []
        for line in qrels:
            q, _, d, g = line.split()
            for group in rng.sample(["u1", "u2", "u3"], rng.randint(1, 3)):
                grouped.append(f"{q} {group} {d} {rng.choice([g, '0', '1', '2'])}\n")
        qrels = grouped
    (folder / "qrels").write_text("# judged\n" + "".join(qrels))
    (folder / "run").write_text("".join(run))
    return folder / "qrels", folder / "run", every


def zscores_file(folder: Path, rng: random.Random, measures: list[str], qrels: Path) -> Path:
    """A -Z file: random means and deviations for most (query, measure) pairs of the measures' lines (some left out, some sd 0)."""
    queries = sorted({line.split()[0] for line in qrels.read_text().splitlines() if not line.startswith("#")})
    names = ["num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank", "P_5", "P_10", "P_1", "P_3",
             "iprec_at_recall_0.00", "iprec_at_recall_0.50", "recall_50", "ndcg", "infAP", "set_F", "utility", "num_q", "G"]
    lines = []
    for q in queries:
        if rng.random() < 0.1:
            continue  # a query missing from the file: every value -1000000
        for name in names:
            if rng.random() < 0.9:
                sd = 0.0 if rng.random() < 0.1 else rng.uniform(0.01, 2)
                lines.append(f"{q} {name} {rng.uniform(-1, 3):.4f} {sd:.4f}\n")
    (folder / "zscores").write_text("".join(lines))
    return folder / "zscores"


def random_flags(rng: random.Random, every: bool) -> list[str]:
    flags = []
    if not every or rng.random() < 0.5:
        flags.append("-c")  # trec_eval 10 exits on a qrels query missing from the run without -c
    if rng.random() < 0.3:
        flags.append(f"-M{rng.randint(1, 30)}")
    if rng.random() < 0.3:
        flags.append(f"-l{rng.choice([0, 2, 3])}")
    if rng.random() < 0.3:
        flags.append("-J")
    if rng.random() < 0.2:
        flags.append(f"-N{rng.randint(50, 500)}")
    return flags


def evalkit_lines(qrels: Path, run: Path, flags: list[str], measures: list[str]) -> list[str]:
    from evalkit import api
    from evalkit.report import text as render
    from evalkit.metrics.trec_names import expand_trec_eval

    options = {"missing": "zero" if "-c" in flags else "skip", "allow_partial": True, "task": "trec"}
    for flag in flags:
        if flag.startswith("-M"):
            options["depth"] = int(flag[2:])
        elif flag.startswith("-l"):
            options["relevance_level"] = int(flag[2:])
        elif flag == "-J":
            options["judged_only"] = True
        elif flag.startswith("-N") and flag != "-N":
            options["num_docs"] = int(flag[2:])
        elif flag == "qrels_jg":
            options["judgment_groups"] = True
    if "-Z" in flags:
        options["zscores"] = flags[flags.index("-Z") + 1]
    result = api.score(str(run), str(qrels), metrics=expand_trec_eval(measures, "-R" in flags), **options)
    return render.as_trec_eval(result.task_score).splitlines()


def binary_lines(binary: str, qrels: Path, run: Path, flags: list[str], measures: list[str]) -> list[str] | None:
    args = [binary, "-q", *flags]
    for measure in measures:
        args += ["-m", measure]
    done = subprocess.run([*args, str(qrels), str(run)], capture_output=True, text=True, timeout=60)
    return done.stdout.splitlines() if done.returncode == 0 else None


def case(seed: int, folder: Path) -> tuple[Path, Path, list[str], list[str]]:
    """The files, trec_eval flags and -m measures of one random case (the same for a seed on every machine)."""
    rng = random.Random(seed)
    qrels, run, every = random_files(folder, rng)
    flags = random_flags(rng, every)
    measures = rng.choice(MEASURE_LISTS)
    if " u1 " in qrels.read_text() or " u2 " in qrels.read_text() or " u3 " in qrels.read_text():
        flags += ["-R", "qrels_jg"]
        measures = ["qrels_jg"] if rng.random() < 0.7 else ["map_avgjg", "P_avgjg.2,7", "Rprec_mult_avgjg.0.5,1.5", "runid"]
    elif rng.random() < 0.12:
        flags += ["-Z", str(zscores_file(folder, rng, measures, qrels))]
    return qrels, run, flags, measures


def group_by_query(run: Path) -> None:
    """Rewrite ``run`` with its lines grouped by query, which trec_eval's output does not depend on (it ranks by score
    and docno), the last line kept last (its tag is the runid): evalkit then reads it against its gold
    (evalkit.io.prejudged) instead of ranking it whole."""
    lines = run.read_text().splitlines(keepends=True)
    if not lines:
        return
    last = lines[-1]
    order: dict[str, int] = {}
    for line in lines:
        order.setdefault(line.split()[0], len(order))
    order[last.split()[0]] = len(order)  # the last line's query last, the line itself at its end
    run.write_text("".join(sorted(lines[:-1], key=lambda line: order[line.split()[0]])) + last)


def command_of(flags: list[str], measures: list[str]) -> str:
    flags = [("ZSCORES" if i and flags[i - 1] == "-Z" else f) for i, f in enumerate(flags)]
    return f"trec_eval -q {' '.join(flags)} {' '.join('-m ' + m for m in measures)} qrels run"


def run_case(binary: str, seed: int, folder: Path, grouped: bool = False) -> tuple[int, list[str], str]:
    """(values compared, differing lines, the case's command) for one random case (``grouped``: its run's lines
    grouped by query, :func:`group_by_query`)."""
    qrels, run, flags, measures = case(seed, folder)
    if grouped:
        group_by_query(run)
    command = command_of(flags, measures)
    theirs = binary_lines(binary, qrels, run, flags, measures)
    if theirs is None:
        return 0, [], command
    ours = evalkit_lines(qrels, run, flags, measures)
    differences = [f"trec_eval: {a!r}\n   evalkit: {b!r}" for a, b in zip(theirs, ours) if a != b]
    if len(theirs) != len(ours):
        extra = set(theirs) ^ set(ours)
        differences.append(f"{len(theirs)} lines vs {len(ours)}: {sorted(extra)[:6]}")
    return len(theirs), differences, command


def record(binary: str, seeds, out: str) -> int:
    """Write ``## seed N: command`` and the binary's lines for each seed it runs, gzipped."""
    import gzip

    blocks = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in seeds:
            qrels, run, flags, measures = case(seed, Path(tmp))
            lines = binary_lines(binary, qrels, run, flags, measures)
            if lines:
                blocks.append(f"## seed {seed}: {command_of(flags, measures)}\n" + "\n".join(lines) + "\n")
    with gzip.open(out, "wt") as handle:
        handle.write("".join(blocks))
    print(f"{len(blocks)} cases written to {out}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--show", type=int, default=5, help="cases with differences to print")
    parser.add_argument("--record", help="write the binary's lines of the cases it runs to this .gz file (tests hold them)")
    parser.add_argument("--grouped", action="store_true", help="each run's lines grouped by query (read against the gold)")
    args = parser.parse_args()
    if args.record:
        return record(args.binary, range(args.seed, args.seed + args.cases), args.record)
    compared = cases = failing = 0
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.seed, args.seed + args.cases):
            values, differences, command = run_case(args.binary, seed, Path(tmp), args.grouped)
            cases += values > 0
            compared += values
            if differences:
                failing += 1
                if failing <= args.show:
                    print(f"seed {seed}: {command}\n  " + "\n  ".join(differences[:8]))
    print(f"{cases} cases, {compared} values compared, {failing} cases with differences")
    return 1 if failing else 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    sys.exit(main())
