"""Every ```bash and ```python block of the documentation runs, so every command the docs show works as shown.

One test per page (``docs/**/*.md``): its blocks run in page order in one fresh working directory ``T/work``
holding symlinks ``gold``, ``systems``, ``submissions``, ``reports`` and ``bench`` to the repository's, with
``T/shared`` -> the repository's ``../shared`` (so ``../shared/data/...`` resolves where it exists) and this
interpreter's ``evalkit`` first on PATH. A bash block runs as one ``bash -e`` script, a python block as one
``python`` process (blocks share the files they write, not Python state). Each block has a time limit.
Markers on the lines right before a block:

- ``<!-- docs-test: skip REASON -->``: not run (a GPU, a cluster, a network, minutes of work);
- ``<!-- docs-test: shared-data -->``: run only where ``../shared/data`` exists (the page is marked ``realdata``).

Output shown to readers goes into ```text blocks, which are not run.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from support.helpers import REPO, SHARED

DOCS = REPO / "docs"
RUNNABLE = ("bash", "python")
TIME_LIMIT = 90  # seconds a block may take (docs blocks are small examples; anything longer is marked skip)
LINKED = ("gold", "systems", "submissions", "reports", "bench")
MARKER = re.compile(r"<!--\s*docs-test:\s*(skip|shared-data)\b\s*(.*?)\s*-->")


@dataclass
class Block:
    page: str
    line: int  # 1-based line of the opening fence
    language: str
    code: str
    markers: dict = field(default_factory=dict)  # "skip" -> reason, "shared-data" -> ""


def blocks_of(path: Path) -> list[Block]:
    """The fenced blocks of a page (fences at the start of a line), with the docs-test markers right above each."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found, number = [], 0
    while number < len(lines):
        opening = re.match(r"^(`{3,})\s*([\w+-]*)", lines[number])
        if not opening:
            number += 1
            continue
        fence, language, start = opening.group(1), opening.group(2), number
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith(fence) and not lines[i].strip("`")), len(lines))
        markers, above = {}, start - 1
        while above >= 0 and MARKER.search(lines[above]):
            kind, reason = MARKER.search(lines[above]).groups()
            markers[kind] = reason
            above -= 1
        found.append(Block(path.relative_to(DOCS).as_posix(), start + 1, language, "\n".join(lines[start + 1:end]), markers))
        number = end + 1
    return found


def pages() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.md") if "hooks" not in p.relative_to(DOCS).parts)


def page_params():
    params = []
    for path in pages():
        runnable = [b for b in blocks_of(path) if b.language in RUNNABLE]
        if not runnable:
            continue
        marks = [pytest.mark.realdata] if any("shared-data" in b.markers for b in runnable) else []
        params.append(pytest.param(path, id=path.relative_to(DOCS).as_posix(), marks=marks))
    return params


def workspace(tmp_path: Path) -> tuple[Path, dict]:
    """``T/work`` with the repository's folders linked in, ``T/shared``, and an environment with evalkit first on PATH."""
    work = tmp_path / "work"
    work.mkdir()
    for name in LINKED:
        (work / name).symlink_to(REPO / name)
    (tmp_path / "shared").symlink_to(REPO.parent / "shared")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "evalkit"  # this interpreter's evalkit, whatever the venv's script says in its shebang
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m evalkit "$@"\n')
    wrapper.chmod(0o755)
    env = {**os.environ, "PATH": os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
           "EVALKIT_CACHE": str(tmp_path / "cache"), "MPLBACKEND": "Agg", "PYTHONUNBUFFERED": "1"}
    return work, env


def run_block(block: Block, work: Path, env: dict) -> subprocess.CompletedProcess:
    if block.language == "bash":
        command = ["bash", "-e", "-o", "pipefail", "-c", block.code]
    else:
        command = [sys.executable, "-c", block.code]
    return subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=TIME_LIMIT)


def test_blocks_are_found():
    """The parser sees the blocks (a page with runnable blocks exists; markers are read)."""
    assert len(page_params()) >= 10
    every = [b for p in pages() for b in blocks_of(p)]
    assert any(b.markers.get("skip") for b in every) and any("shared-data" in b.markers for b in every)
    unknown = [f"{b.page}:{b.line}: {b.language}" for b in every if b.language in ("sh", "shell", "console", "py", "python3")]
    assert not unknown, f"blocks the test would not run (write bash, python or text): {unknown}"
    unreasoned = [f"{b.page}:{b.line}" for b in every if "skip" in b.markers and not b.markers["skip"]]
    assert not unreasoned, f"a docs-test: skip marker needs a reason: {unreasoned}"


@pytest.mark.parametrize("page", page_params())
def test_page_blocks_run(page: Path, tmp_path: Path):
    work, env = workspace(tmp_path)
    has_shared = SHARED.exists() and (REPO.parent / "shared" / "data").exists()
    ran = 0
    for block in (b for b in blocks_of(page) if b.language in RUNNABLE):
        if "skip" in block.markers or ("shared-data" in block.markers and not has_shared):
            continue
        try:
            done = run_block(block, work, env)
        except subprocess.TimeoutExpired:
            pytest.fail(f"docs/{block.page}:{block.line}: the {block.language} block ran over {TIME_LIMIT} s "
                        f"(make it smaller, or mark it <!-- docs-test: skip REASON -->):\n{block.code}")
        assert done.returncode == 0, (f"docs/{block.page}:{block.line}: the {block.language} block failed (exit {done.returncode}):\n"
                                      f"{block.code}\n--- stdout ---\n{done.stdout[-3000:]}\n--- stderr ---\n{done.stderr[-3000:]}")
        ran += 1
    assert ran or any("skip" in b.markers or "shared-data" in b.markers for b in blocks_of(page))
