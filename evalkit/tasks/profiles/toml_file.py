"""A profile written as a TOML file, given with ``--task my-profile.toml`` (or ``task="my-profile.toml"``).

::

    [profile]
    name = "my-track-2026"
    description = "My track 2026: nDCG@10, AP at grade 2"
    measures = "ndcg@10 map(rel=2)"
    depth = 1000                 # optional: only the top 1000 count
    judged_only = false          # optional
    exclude_self = false         # optional: drop a document with its query's id
    subcollections = []          # optional: query-id prefixes to macro-average over
    dataset_ids = []             # optional: ir_datasets ids it is for (informational here)
    sources = ["My track's overview paper, 2026"]

Only these keys are read; the file is data (never code), and every value is
checked as the class attributes of a profile are.
"""
from __future__ import annotations

import os
from typing import Any

from evalkit.core.errors import UsageError, shown

KEYS = {"name": str, "description": str, "measures": str, "depth": int, "judged_only": bool, "exclude_self": bool,
        "subcollections": list, "dataset_ids": list, "sources": list}
REQUIRED = ("name", "measures")
MAX_BYTES = 1 << 20


def is_profile_file(name: str) -> bool:
    return name.lower().endswith(".toml")


def read_profile(path: str | os.PathLike) -> Any:
    """A :class:`~evalkit.tasks.profiles.base.ProfileTask` instance from a TOML profile file (one line on any problem)."""
    import tomllib

    from evalkit.metrics import parse_metrics
    from evalkit.tasks.profiles.base import ProfileTask
    from evalkit.io.textio import check_regular

    label = shown(os.fspath(path))
    check_regular(path)
    with open(path, "rb") as handle:
        raw = handle.read(MAX_BYTES + 1)
    if len(raw) > MAX_BYTES:
        raise UsageError(f"{label}: a profile file over 1 MiB; is it one?")
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{label}: not a TOML profile: {shown(str(exc), 200)}") from None
    table = data.get("profile")
    if not isinstance(table, dict) or set(data) != {"profile"}:
        raise UsageError(f"{label}: a profile file holds one [profile] table (see `evalkit profiles --help`)")
    for key, value in table.items():
        kind = KEYS.get(key)
        if kind is None:
            raise UsageError(f"{label}: unknown key {shown(key)} in [profile] (known: {', '.join(KEYS)})")
        if kind is int and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise UsageError(f"{label}: {key} must be a positive whole number")
        if not isinstance(value, kind) or (isinstance(value, list) and not all(isinstance(v, str) for v in value)):
            raise UsageError(f"{label}: {key} must be {'a list of strings' if kind is list else kind.__name__}")
    missing = [key for key in REQUIRED if not str(table.get(key, "")).strip()]
    if missing:
        raise UsageError(f"{label}: [profile] needs {', '.join(missing)}")
    parse_metrics(table["measures"])  # an unknown or malformed measure: its one line now
    attributes = {"name": table["name"].strip(), "description": table.get("description", table["name"]),
                  "measures": table["measures"], "depth": table.get("depth"), "judged_only": table.get("judged_only", False),
                  "exclude_self": table.get("exclude_self", False), "subcollections": tuple(table.get("subcollections", ())),
                  "dataset_ids": tuple(table.get("dataset_ids", ())), "sources": tuple(table.get("sources", ())) or (label,)}
    cls = type("TomlProfile", (ProfileTask,), {**attributes, "__module__": __name__, "__doc__": attributes["description"]})
    return cls()


__all__ = ["is_profile_file", "read_profile"]
