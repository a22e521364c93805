"""The small manifest every evalkit output carries.

It records what produced the output: evalkit version, the task, each input
file with its sha256, the options, the seed (if anything was random) and the
time. Written inside JSON outputs, as a block in Markdown reports, and as a
``<output>.manifest.json`` sidecar next to files whose format has no room for it.
"""
from __future__ import annotations

import datetime as _dt
import os
import sys
from typing import Any, Mapping

from evalkit._version import __version__
from evalkit.core.digest import sha256_of_file
from evalkit.data.ranking import RANKING_RULE
from evalkit.io.transactions import atomic_write, sidecar_of
from evalkit.io.textio import check_regular


def sha256_of(path: str | os.PathLike) -> str:
    """The sha256 of a regular file, read in 1 MB blocks."""
    check_regular(path)
    with open(path, "rb") as handle:
        return sha256_of_file(handle)[0]


def input_entry(role: str, source) -> dict[str, Any]:
    """Describe one input: a :class:`~evalkit.data.Source` or a path (shown as :func:`evalkit.core.safetext.shown_path` shows it)."""
    from evalkit.core.safetext import shown_path

    if hasattr(source, "sha256"):
        from evalkit.io.datasets import dataset_name, is_dataset_id

        if is_dataset_id(source.path):  # read through ir_datasets: its id and version, the sha256 of what was read
            from evalkit.io.datasets.irds import manifest_fields

            return {"role": role, "path": source.path, "sha256": source.sha256, "format": source.format,
                    **manifest_fields(dataset_name(source.path))}
        entry = {"role": role, "path": shown_path(source.path), "sha256": source.sha256, "format": source.format}
        if source.member:
            entry["member"] = source.member
        return entry
    path = os.fspath(source)
    return {"role": role, "path": shown_path(path), "sha256": sha256_of(path)}


def build_manifest(
    task: str | None,
    inputs: list[dict[str, Any]],
    options: Mapping[str, Any] | None = None,
    seed: int | None = None,
    command: str | None = None,
    created: str | None = None,
) -> dict[str, Any]:
    """The manifest of an output; ``created`` (ISO 8601, UTC, :func:`now_utc`) defaults to now."""
    return {
        "evalkit_version": __version__,
        "command": command,
        "task": task,
        "inputs": inputs,
        "options": dict(options or {}),
        "seed": seed,
        "ranking_rule": RANKING_RULE,
        "python": sys.version.split()[0],  # platform.python_version(), without importing platform
        "created": created or now_utc(),
    }


def now_utc() -> str:
    """Now, UTC, to the second, ISO 8601 (a manifest's ``created``)."""
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def manifest_markdown(manifest: Mapping[str, Any]) -> str:
    """A Markdown block for reports (``< > & { }`` in its strings as JSON escapes: literal wherever it is published;
    no bare NaN: see :mod:`evalkit.core.jsonout`)."""
    from evalkit.core import jsonout
    from evalkit.core.safetext import markdown_json

    lines = ["<details><summary>Manifest</summary>", "", "```json", markdown_json(jsonout.document(manifest), indent=2),
             "```", "", "</details>"]
    return "\n".join(lines)


def write_sidecar(output_path: str | os.PathLike, manifest: Mapping[str, Any]) -> str:
    """Write ``<output>.manifest.json``; it always follows its output (callers check --force first)."""
    from evalkit.core import jsonout

    path = sidecar_of(output_path)
    atomic_write(path, jsonout.dumps(manifest, indent=2) + "\n", force=True)
    return path
