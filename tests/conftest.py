"""Shared fixtures: paths to the real data beside the repository (``../shared/data``)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# Tests run tiny models: one torch/OpenMP thread each avoids spin-waiting on the shared cores (10x faster here);
# set before any test module imports torch, so every test (and every CLI subprocess) inherits it.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("EVALKIT_SHARED_DATA", REPO.parent / "shared" / "data"))
CT4B = SHARED / "checkthat2025-4b"
GOLD_4B = {
    "train": CT4B / "queries" / "subtask4b_query_tweets_train.tsv",
    "dev": CT4B / "queries" / "subtask4b_query_tweets_dev.tsv",
    "test": CT4B / "queries" / "subtask4b_query_tweets_test_gold.tsv",
}


def shared_or_skip(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"real data not found at {path} (set EVALKIT_SHARED_DATA)")
    return path


def all_4b_runs() -> list[Path]:
    return sorted(p for p in (CT4B / "runs").glob("*/*") if p.is_file()) if CT4B.exists() else []


def split_of(path: Path) -> str:
    name = path.name.lower()
    for split in ("train", "dev", "test"):
        if f"_{split}" in name:
            return split
    raise ValueError(path)


def run_cli(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run ``python -m evalkit`` as a separate process, as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "evalkit", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd or REPO,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture
def cli():
    return run_cli
