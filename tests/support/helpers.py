"""Helpers the tests import (``from helpers import ...``): paths to the real data beside the repository
(``../shared/data``, or ``$EVALKIT_SHARED_DATA``), skipping without it, and running the CLI as a user would.
Fixtures and hooks live in ``conftest.py``."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("EVALKIT_SHARED_DATA", REPO.parent / "shared" / "data"))
CT4B = SHARED / "checkthat2025-4b"
GOLD_4B = {
    "train": CT4B / "queries" / "subtask4b_query_tweets_train.tsv",
    "dev": CT4B / "queries" / "subtask4b_query_tweets_dev.tsv",
    "test": CT4B / "queries" / "subtask4b_query_tweets_test_gold.tsv",
}
NO_SHARED_DATA = "real data not found at"  # how a skip for missing ../shared/data begins


def shared_or_skip(path: Path) -> Path:
    """``path`` under the real data, or skip the test when it is absent (mark such tests ``realdata``)."""
    if not path.exists():
        pytest.skip(f"{NO_SHARED_DATA} {path} (set EVALKIT_SHARED_DATA)")
    return path


def all_4b_runs() -> list[Path]:
    """Every real CheckThat! 4b run file (none without the real data)."""
    return sorted(p for p in (CT4B / "runs").glob("*/*") if p.is_file()) if CT4B.exists() else []


def split_of(path: Path) -> str:
    """``train``, ``dev`` or ``test`` from a run's file name."""
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


def sibling_tests(path: str):
    """A test module of another folder of tests/ (``"tasks/test_verification.py"``), for a test that reuses its
    cases: imported under the name pytest gives it (its file name), once."""
    import importlib.util
    import sys

    name = Path(path).stem
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, REPO / "tests" / path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]
