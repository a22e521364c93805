"""Fixtures and hooks only; the helpers tests import live in ``tests/support/helpers.py``."""
from __future__ import annotations

import os

import pytest

# Tests run tiny models: one torch/OpenMP thread each avoids spin-waiting on the shared cores (10x faster here);
# set before any test module imports torch, so every test (and every CLI subprocess) inherits it.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from support.helpers import NO_SHARED_DATA, run_cli  # noqa: E402


@pytest.fixture
def cli():
    return run_cli


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A test that skips for want of ../shared/data must be marked ``realdata`` (so ``-m "not realdata"`` is honest)."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and call.excinfo is not None and NO_SHARED_DATA in str(call.excinfo.value):
        if item.get_closest_marker("realdata") is None:
            report.outcome = "failed"
            report.longrepr = f"{item.nodeid} needs ../shared/data but is not marked realdata (@pytest.mark.realdata)"
