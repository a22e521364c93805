"""Fixtures and hooks only; the helpers tests import live in ``tests/helpers.py``."""
from __future__ import annotations

import os

import pytest

# Tests run tiny models: one torch/OpenMP thread each avoids spin-waiting on the shared cores (10x faster here);
# set before any test module imports torch, so every test (and every CLI subprocess) inherits it.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from helpers import run_cli  # noqa: E402


@pytest.fixture
def cli():
    return run_cli

