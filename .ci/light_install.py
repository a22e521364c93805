#!/usr/bin/env python3
"""The light install, as a user gets it: a wheel built from a fresh clone, installed alone into a fresh virtual
environment outside the checkout; its size on disk with its dependencies, and every core command run from it.

    python .ci/light_install.py [--wheel dist/evalkit_ir-*.whl] [--keep DIR]

Without --wheel the committed HEAD is cloned into a temporary folder and built there (``python -m build --wheel``).
Prints one line per check and exits 1 when one fails. tests/test_light_install.py runs the same checks.
"""
from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LIMIT_MB = 350  # the light install's goal, site-packages with every dependency
HEAVY = ("ranx", "numba", "llvmlite", "pyarrow", "matplotlib", "torch", "transformers")  # none of them in a light install


def build_wheel(folder: Path, python: str = sys.executable) -> Path:
    """The wheel of the committed HEAD, built from a fresh clone in ``folder``."""
    source = folder / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(source)], check=True)
    subprocess.run([python, "-m", "build", "--wheel", "--outdir", str(folder / "dist"), str(source)], check=True,
                   stdout=subprocess.DEVNULL)
    return Path(glob.glob(str(folder / "dist" / "evalkit_ir-*.whl"))[0])


def make_venv(folder: Path, wheel: Path, python: str = sys.executable) -> Path:
    """A fresh virtual environment in ``folder`` with ``wheel`` and its dependencies only; its ``bin`` folder."""
    venv = folder / "venv"
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel)], check=True)
    return venv / "bin"


def site_packages(bin_folder: Path) -> Path:
    out = subprocess.run([str(bin_folder / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=True).stdout.strip()
    return Path(out)


def size_mb(folder: Path) -> float:
    """Bytes on disk under ``folder`` (``du -s``: blocks, as the issue measured), in MB."""
    out = subprocess.run(["du", "-sk", str(folder)], capture_output=True, text=True, check=True).stdout.split()[0]
    return int(out) / 1024


def installed(bin_folder: Path) -> list[str]:
    out = subprocess.run([str(bin_folder / "python"), "-m", "pip", "list", "--format=freeze", "--disable-pip-version-check"],
                         capture_output=True, text=True, check=True).stdout
    return sorted(line.split("==")[0].lower() for line in out.split())


def core_commands(examples: Path) -> list[tuple[str, list[str], int]]:
    """(name, evalkit arguments, expected exit code) of every core command, run in a folder holding ``gold/examples``
    (the files the wheel ships, copied as a checkout has them) and what earlier commands wrote."""
    run, gold = "gold/examples/tweets_run.tsv", "gold/examples/tweets_gold.tsv"
    return [
        ("score (README light-install example)", ["score", run, gold], 0),
        ("score --out scores.json", ["score", run, gold, "--out", "scores.json"], 0),
        ("score, the shipped files", ["score", str(examples / "tweets_run.tsv"), str(examples / "tweets_gold.tsv")], 0),
        ("submit", ["submit", run, "--task", "checkthat2025-4b", "--out", "runs/team_a.zip"], 0),
        ("validate", ["validate", "runs/team_a.zip", "--task", "checkthat2025-4b", "--gold", gold], 0),
        ("compare", ["compare", gold, run, "runs/team_b.tsv", "--permutations", "200", "--bootstrap", "200"], 0),
        ("compare --gold", ["compare", run, "runs/team_b.tsv", "--gold", gold, "--permutations", "200", "--bootstrap", "200"], 0),
        ("leaderboard", ["leaderboard", "runs", "--gold", gold, "--permutations", "200", "--bootstrap", "200"], 0),
        ("leaderboard RUN... --gold", ["leaderboard", run, "runs/team_b.tsv", "-g", gold, "--permutations", "200", "--bootstrap", "200",
                                       "--out", "board.json"], 0),
        ("pool", ["pool", run, "runs/team_b.tsv", "--depth", "3", "--out", "sheet.tsv"], 0),
        ("reuse", ["reuse", run, "runs/team_b.tsv", "--gold", gold, "--depth", "3", "--group-by", "^[^_]+|^.*"], 0),
        ("demo (BM25 needs the systems extra: one line)", ["demo", "--out-dir", "demo"], 2),
        ("report --html", ["report", gold, run, "runs/team_b.tsv", "--html", "page.html"], 0),
        ("report --out (no matplotlib: one line)", ["report", gold, run, "runs/team_b.tsv", "--out", "report.md"], 2),
        ("check --add (the CI template's gate)", ["check", "--baseline", "scores-baseline.json", "--add", "--task", "checkthat2025-4b",
                                                 "--gold", gold, "--run", run], 0),
        ("check", ["check", "--baseline", "scores-baseline.json"], 0),
        ("fuse rrf (evalkit's own)", ["fuse", run, "runs/team_b.tsv", "--out", "fused.trec"], 0),
        ("fuse condorcet (ranx's: one line)", ["fuse", run, "runs/team_b.tsv", "--method", "condorcet", "--out", "fused2.trec"], 2),
        ("competition bundle", ["competition", "bundle", "checkthat2025-4b", "--phase", f"test:{gold}", "--out", "bundle.zip"], 0),
        ("competition check", ["competition", "check", "bundle.zip"], 0),
        ("competition run", ["competition", "run", "bundle.zip", "runs/team_a.zip", "--out", "worker"], 0),
    ]


def prepare_work(work: Path, examples: Path) -> None:
    """``gold/examples`` as a checkout has it, and a second team's run (the example with two lists swapped)."""
    (work / "gold" / "examples").mkdir(parents=True)
    for name in ("tweets_run.tsv", "tweets_gold.tsv"):
        shutil.copy(examples / name, work / "gold" / "examples" / name)
    (work / "runs").mkdir()
    lines = (examples / "tweets_run.tsv").read_text().splitlines()
    lines[1], lines[2] = lines[1].split("\t")[0] + "\t" + lines[2].split("\t")[1], lines[2].split("\t")[0] + "\t" + lines[1].split("\t")[1]
    (work / "runs" / "team_b.tsv").write_text("\n".join(lines) + "\n")


def run_checks(bin_folder: Path, work: Path) -> list[tuple[str, bool, str]]:
    """Every check: (name, passed, detail)."""
    examples = site_packages(bin_folder) / "evalkit" / "examples"
    prepare_work(work, examples)
    env = {**os.environ, "PATH": f"{bin_folder}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("PYTHONPATH", None)
    results = []
    for name, args, expected in core_commands(examples):
        start = time.perf_counter()
        done = subprocess.run([str(bin_folder / "evalkit"), *args], cwd=work, env=env, capture_output=True, text=True, timeout=300)
        seconds = time.perf_counter() - start
        lines = (done.stdout + done.stderr).strip().splitlines()
        detail = f"exit {done.returncode} in {seconds:.1f} s: {lines[-1] if lines else ''}"[:300]
        passed = done.returncode == expected and "Traceback" not in done.stderr
        if expected == 2:  # a feature of an extra: one line naming it
            passed = passed and len(done.stderr.strip().splitlines()) == 1 and "pip install 'evalkit-ir[" in done.stderr
        results.append((f"{name}: evalkit {' '.join(args)}", passed, detail))
    frame = subprocess.run([str(bin_folder / "python"), "-c", "import evalkit; evalkit.score('gold/examples/tweets_run.tsv', "
                            "'gold/examples/tweets_gold.tsv').per_query"], cwd=work, env=env, capture_output=True, text=True)
    last = frame.stderr.strip().splitlines()[-1:] or [""]
    results.append(("API ScoreResult.per_query without pandas: one error naming the extra",
                    frame.returncode == 1 and "pip install 'evalkit-ir[pandas]'" in last[0], last[0][:200]))
    where = subprocess.run([str(bin_folder / "python"), "-c", "import evalkit; print(evalkit.__file__)"], cwd=work, env=env,
                           capture_output=True, text=True)
    results.append(("imported from the venv, not the checkout", str(REPO) not in where.stdout and where.returncode == 0,
                    where.stdout.strip()))
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", default=None, help="an evalkit-ir wheel (default: build the committed HEAD from a fresh clone)")
    parser.add_argument("--keep", default=None, help="a folder to work in and keep (default: a temporary one, removed)")
    args = parser.parse_args(argv)
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="evalkit-light-"))
    if folder.exists() and any(folder.iterdir()):
        parser.error(f"--keep {folder}: name a new or empty folder (an earlier check's clone and venv would be reused)")
    folder.mkdir(parents=True, exist_ok=True)
    try:
        start = time.perf_counter()
        wheel = Path(args.wheel).resolve() if args.wheel else build_wheel(folder)
        print(f"wheel: {wheel.name} ({wheel.stat().st_size / 1e6:.1f} MB, {time.perf_counter() - start:.0f} s)")
        start = time.perf_counter()
        bin_folder = make_venv(folder, wheel)
        packages = installed(bin_folder)
        size = size_mb(site_packages(bin_folder))
        print(f"installed in {time.perf_counter() - start:.0f} s: {size:.0f} MB in site-packages, {len(packages)} packages: {' '.join(packages)}")
        heavy = [name for name in HEAVY if name in packages]
        results = [(f"site-packages under {LIMIT_MB} MB", size < LIMIT_MB, f"{size:.0f} MB"),
                   ("no heavy package", not heavy, ", ".join(heavy) or "none of " + ", ".join(HEAVY))]
        results += run_checks(bin_folder, folder / "work")
        for name, passed, detail in results:
            print(f"{'ok  ' if passed else 'FAIL'} {name}: {detail}")
        return 0 if all(passed for _, passed, _ in results) else 1
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
