"""Write ``reports/scifact-neural.md`` (issue 6) from the SciFact runs of the experiment scripts.

``evalkit report`` makes the leaderboard, significance markers, figures and
manifest; ``evalkit compare`` the three pairwise tables; the must-show table,
settings and timings come from ``NOTES`` (measured by ``bench/scifact_dense.py``
and ``bench/scifact_rerank.py``, see their ``timings.jsonl``)::

    python bench/scifact_neural_report.py --runs /work/artifacts/scifact --ce ce-minilm-i --ensemble ce-ensemble
"""
from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

GOLD = "../shared/data/scifact/qrels/test.tsv"
OUT = Path("reports/scifact-neural.md")


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
    parser.add_argument("--runs", type=Path, default=Path("/work/artifacts/scifact"))
    parser.add_argument("--ce", default="ce-minilm-i", help="the cross-encoder run (top 20 of the fused run reranked)")
    parser.add_argument("--members", nargs="+", default=["ce-member-0", "ce-member-1", "ce-member-2"])
    parser.add_argument("--ensemble", default="ce-ensemble")
    parser.add_argument("--notes", type=Path, default=Path("bench/scifact_neural_notes.md"), help="Markdown inserted before the manifest")
    args = parser.parse_args()
    names = ["bm25", "dense-minilm-zeroshot", "dense-minilm-finetuned", "fused-bm25-dense", args.ce, *args.members, args.ensemble]
    evalkit("report", GOLD, *(str(args.runs / f"{n}.trec") for n in names), "--metrics", "ndcg@10 recall@100 mrr@10",
            "--title", "Neural systems on SciFact (issue 6): dense retrieval, cross-encoder, reranker ensemble",
            "--out", str(OUT), "--force")
    best_member = max(args.members, key=lambda n: _ndcg(args.runs, n))
    sections = [
        args.notes.read_text(encoding="utf-8").rstrip() + "\n",
        "### Fine-tuned vs zero-shot dense\n\n" + compare(args.runs, "dense-minilm-zeroshot", "dense-minilm-finetuned") + "\n",
        "### Cross-encoder and BM25 vs the fused first stage (Holm over the two)\n\n"
        + compare(args.runs, "fused-bm25-dense", args.ce, "bm25") + "\n",
        f"### Ensemble vs its best member ({best_member})\n\n" + compare(args.runs, best_member, args.ensemble) + "\n",
    ]
    text = OUT.read_text(encoding="utf-8")
    at = text.index("## Manifest")
    OUT.write_text(text[:at] + "\n".join(sections) + "\n" + text[at:], encoding="utf-8")
    print(f"wrote {OUT}")


def _ndcg(runs: Path, name: str) -> float:
    import json

    return float(json.loads(evalkit("score", str(runs / f"{name}.trec"), GOLD, "-o", "json"))["official"]["value"])


if __name__ == "__main__":
    main()
