"""Rebuild ``checkthat2025-4b.json``: the official MRR@5 of every real shared 4b run.

Each run in ``../shared/data/checkthat2025-4b/runs/`` is paired with the gold
of the split its post_ids belong to (not the one its name claims: the AIRwaves
``E5_HN_All__dev``/``__test`` files are swapped). Run from the repository root:

    python bench/baselines/build_checkthat2025_4b.py

CI then runs ``evalkit check --baseline bench/baselines/checkthat2025-4b.json``.
"""
from __future__ import annotations

import sys
from pathlib import Path

from evalkit.scoring import check as bl
from evalkit.io.reading import read_run
from evalkit.submission.references import guess_split, load_splits

REPO = Path(__file__).resolve().parents[2]
CT4B = Path("../shared/data/checkthat2025-4b")
OUT = REPO / "bench" / "baselines" / "checkthat2025-4b.json"
GOLD = [CT4B / "queries" / f"subtask4b_query_tweets_{name}.tsv" for name in ("train", "dev", "test_gold")]


def main() -> int:
    base = bl.RegressionBaseline(OUT, [], description=(
        "Official MRR@5 of the real CheckThat! 2025 Task 4b runs in ../shared/data (AIRwaves and other teams), "
        "each against the gold of the split its post_ids belong to. Rebuild with bench/baselines/build_checkthat2025_4b.py."))
    splits = load_splits(GOLD)
    for path in sorted(p for p in (CT4B / "runs").glob("*/*") if p.is_file()):
        split, _ = guess_split(set(read_run(path).query_ids.tolist()), splits)
        if split is None:
            print(f"skipped {path}: matches no split", file=sys.stderr)
            continue
        entry = bl.add_entry(base, "checkthat2025-4b", split.path, str(path))
        print(f"{entry.name:<70} {split.name:<6} {entry.metric} {entry.expected:.4f}")
    base.save()
    print(f"wrote {OUT} ({len(base.entries)} entries)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
