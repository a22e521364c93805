"""The queries runs are fused over: the same set in every run, or (``allow_partial``) their union."""
from __future__ import annotations

from typing import Sequence

from evalkit.data import Run
from evalkit.core.errors import PartialRunError, listed, unquoted


def query_union(runs: Sequence[Run], allow_partial: bool = False) -> list[str]:
    """The queries to fuse (first run's order first); refuses differing sets unless ``allow_partial``."""
    sets = [set(r.query_ids.tolist()) for r in runs]
    order = list(dict.fromkeys(q for r in runs for q in r.query_ids.tolist()))
    if not allow_partial and any(s != sets[0] for s in sets[1:]):
        common = set.intersection(*sets)
        sizes = listed((f"{unquoted(r.name)}: {len(s)}" for r, s in zip(runs, sets)), 5, str, total=len(runs))
        raise PartialRunError(
            f"the runs answer different query sets ({sizes}; {len(common)} in common, {len(order)} in all); "
            "pass --allow-partial to fuse over the union"
        )
    return order
