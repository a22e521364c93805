"""Write ``reports/scifact-neural.md`` (issue 6) from the SciFact runs of the experiment scripts.

``evalkit report`` makes the leaderboard, significance markers, figures and
manifest; ``evalkit compare`` the three pairwise tables; the must-show table,
settings and timings come from ``NOTES`` (measured by ``bench/scifact_dense.py``
and ``bench/scifact_rerank.py``, see their ``timings.jsonl``)::

    python bench/scifact_neural_report.py --runs $EVALKIT_ARTIFACTS/scifact --ce ce-minilm-i \
        --members ce-member-v3-0 ce-member-v3-1 ce-member-v3-2 --ensemble ce-ensemble-v3

The member runs (``ce-member-v3-*``) were written by the ensemble step of
``bench/scifact_rerank.py`` before its steps became pipelines; a pipeline
keeps the ensemble's fused run, so rebuilding the members' rows needs one
reranker-ensemble run per member configuration.
"""
from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

from scifact_sample import ARTIFACTS  # bench/ is on sys.path when a script runs

GOLD = "../shared/data/scifact/qrels/test.tsv"
OUT = Path("reports/scifact-neural.md")
# BM25 + re-mined dense (RRF); its top 20 reranked by the cross-encoder / the ensemble; RRF of each with the first stage
STRONGER_FIRST_STAGE = ["fused-bm25-dense-remine", "ce-minilm-i-on-remine", "rrf-remine-ce", "ce-ensemble-v3-on-remine", "rrf-remine-ensemble"]


def evalkit(*args: str) -> str:
    done = subprocess.run(["evalkit", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(done.stderr.strip())
    return done.stdout


def compare(runs: Path, *names: str) -> str:
    text = evalkit("compare", GOLD, *(str(runs / f"{n}.trec") for n in names), "--metric", "ndcg@10", "--output", "markdown")
    lines = [line for line in text.splitlines() if line.startswith(("|", "**"))]
    return "\n".join(line + ("\n" if line.startswith("**") else "") for line in lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=Path, default=ARTIFACTS)
    parser.add_argument("--ce", default="ce-minilm-i", help="the cross-encoder run (top 20 of the fused run reranked)")
    parser.add_argument("--members", nargs="+", default=["ce-member-v3-0", "ce-member-v3-1", "ce-member-v3-2"])
    parser.add_argument("--ensemble", default="ce-ensemble-v3")
    parser.add_argument("--depth", type=int, default=20, help="reranked depth (for the members' agreement)")
    parser.add_argument("--notes", type=Path, default=Path("bench/scifact_neural_notes.md"), help="Markdown inserted before the manifest")
    args = parser.parse_args()
    names = ["bm25", "dense-minilm-zeroshot", "dense-minilm-finetuned", "dense-minilm-ft2", "dense-minilm-ft2-remine", "fused-bm25-dense",
             args.ce, *args.members, args.ensemble, *STRONGER_FIRST_STAGE]
    evalkit("report", GOLD, *(str(args.runs / f"{n}.trec") for n in names), "--metrics", "ndcg@10 recall@100 mrr@10",
            "--title", "Neural systems on SciFact (issue 6): dense retrieval, cross-encoder, reranker ensemble",
            "--out", str(OUT), "--force")
    best_member = max(args.members, key=lambda n: _ndcg(args.runs, n))
    sections = [
        args.notes.read_text(encoding="utf-8").rstrip() + "\n",
        "### Fine-tuned vs zero-shot dense\n\n" + compare(args.runs, "dense-minilm-zeroshot", "dense-minilm-finetuned") + "\n",
        "### Hard negatives re-mined by the model between epochs vs BM25 ones only (2 epochs each)\n\n"
        + compare(args.runs, "dense-minilm-ft2", "dense-minilm-ft2-remine") + "\n",
        "### Cross-encoder and BM25 vs the fused first stage (Holm over the two)\n\n"
        + compare(args.runs, "fused-bm25-dense", args.ce, "bm25") + "\n",
        "### A stronger first stage: BM25 + re-mined dense (post hoc)\n\n" + compare(args.runs, *STRONGER_FIRST_STAGE) + "\n",
        f"### Ensemble vs its best member ({best_member}), the other members and their base {args.ce}\n\n"
        + compare(args.runs, best_member, args.ensemble, *(m for m in args.members if m != best_member), args.ce) + "\n"
        + agreement(args.runs, args.members, args.depth) + "\n",
    ]
    text = OUT.read_text(encoding="utf-8")
    at = text.index("## Manifest")
    OUT.write_text(text[:at] + "\n".join(sections) + "\n" + text[at:], encoding="utf-8")
    print(f"wrote {OUT}")


def agreement(runs: Path, members: list[str], depth: int) -> str:
    """How alike the members rank: mean pairwise Kendall tau over each query's top ``depth``, shared top 1."""
    from itertools import combinations

    import numpy as np
    from scipy.stats import kendalltau

    from evalkit.io.reading import read_run

    lists = [read_run(str(runs / f"{m}.trec")).to_lists(depth) for m in members]
    taus, same_top = [], 0
    for query in lists[0]:
        ranked = [member[query] for member in lists]
        same_top += len({r[0] for r in ranked if r}) == 1
        for a, b in combinations(ranked, 2):
            rank_b = {d: i for i, d in enumerate(b)}
            common = [d for d in a if d in rank_b]
            if len(common) > 1:
                taus.append(kendalltau(range(len(common)), [rank_b[d] for d in common])[0])
    return (
        f"\nMember agreement: mean pairwise Kendall tau of the top {depth} = {np.nanmean(taus):.3f}; "
        f"all {len(members)} members put the same document first for {same_top} of {len(lists[0])} claims. "
        "Members this alike leave RRF little to correct: the fused ranking stays close to their average.\n"
    )


def _ndcg(runs: Path, name: str) -> float:
    import json

    return float(json.loads(evalkit("score", str(runs / f"{name}.trec"), GOLD, "-o", "json"))["official"]["value"])


if __name__ == "__main__":
    main()
