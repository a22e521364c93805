"""The light install from a wheel: a fresh clone built (``python -m build --wheel``), installed alone into a fresh
virtual environment outside the checkout; under 350 MB with its dependencies, none of the heavy libraries, and every
core command working from it (.ci/light_install.py, which also runs by hand and prints the figures)."""
from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest
from support.helpers import REPO


def light_install():
    spec = importlib.util.spec_from_file_location("light_install", REPO / ".ci" / "light_install.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow  # a wheel built and installed with numpy and scipy into a fresh venv: about 30 s
def test_the_light_install_runs_every_core_command(tmp_path):
    if subprocess.run([sys.executable, "-m", "build", "--version"], capture_output=True).returncode != 0:
        pytest.skip("python -m build is not installed (pip install build)")
    check = light_install()
    try:
        wheel = check.build_wheel(tmp_path)
        bin_folder = check.make_venv(tmp_path, wheel)
    except subprocess.CalledProcessError as exc:
        pytest.skip(f"cannot build or install the wheel here (no package index?): {exc}")
    size = check.size_mb(check.site_packages(bin_folder))
    packages = check.installed(bin_folder)
    assert size < check.LIMIT_MB, f"{size:.0f} MB: {packages}"
    assert not [name for name in check.HEAVY if name in packages], packages
    failed = [result for result in check.run_checks(bin_folder, tmp_path / "work") if not result[1]]
    assert not failed, failed
