"""Fine-tuning the dual encoder: MNRL with in-batch and mined hard negatives.

For a batch of B (query, positive) pairs with n hard negatives each, the
documents are the B positives followed by the B*n negatives; with cosine
similarities ``s_ij = cos(q_i, d_j)`` the loss is

    L = -1/B sum_i log( exp(scale * s_ii) / sum_j exp(scale * s_ij) )

(MultipleNegativesRankingLoss / InfoNCE, scale 20 = temperature 0.05). Other
queries' positives are in-batch negatives, except documents that are also
relevant to query i, which are masked out of its denominator. Hard negatives
are the first-stage's top-ranked documents that are not relevant (BM25 with
stemming unless a ``first_stage`` run is given); optionally they are re-mined
with the model itself between epochs. Linear warm-up over ``warmup_ratio`` of
the steps, then linear decay; AdamW; gradients clipped at norm 1 (as
sentence-transformers' ``fit``); bf16/fp16 autocast on GPU.

References: Henderson et al., "Efficient Natural Language Response Suggestion
for Smart Reply", 2017 (MNRL); Karpukhin et al., "Dense Passage Retrieval for
Open-Domain Question Answering", EMNLP 2020 (BM25 hard negatives); Ashbaugh
et al., AIRwaves at CheckThat! 2025 (arXiv:2509.19509).
"""
from __future__ import annotations

import math
import random
from typing import Any, Protocol

from evalkit.data.corpus import Corpus, Queries, check_judged_docs
from evalkit.data import Qrels, Run
from evalkit.core.errors import UsageError
from evalkit.pipelines.engine import LOCAL, Engine
from evalkit.systems._models.modelio import adamw, autocast, autocast_dtype, grad_scaler, optimizer_step, seed_everything



class DenseRetriever(Protocol):
    """What training reads of :class:`evalkit.systems.dense.DenseRetriever` (which imports this module to fit)."""

    model: Any
    device: str
    options: Any

    def retrieve(self, corpus: Corpus, queries: Queries, k: int = 1000, use_cache: bool = True, *, engine: Engine = LOCAL) -> Run: ...

    def document_texts(self, corpus: Corpus) -> list[str]: ...

    def token_windows(self, texts: Any, prefix: str, chunked: bool) -> list[list[list[int]]]: ...

    def features(self, sequences: Any) -> Any: ...


def training_positives(corpus: Corpus, queries: Queries, qrels: Qrels) -> dict[str, list[str]]:
    """``{query: [relevant doc, ...]}`` for queries present in ``queries``; unknown doc ids are refused."""
    check_judged_docs(corpus, qrels)
    relevant = qrels.relevant_docs(1)
    known = set(queries.ids)
    positives = {q: list(docs) for q, docs in relevant.items() if q in known and docs}
    if not positives:
        raise UsageError("no training query has both a text and a relevant document (check query ids against the qrels)")
    return positives


def mine_hard_negatives(
    positives: dict[str, list[str]], run: Run, n: int
) -> dict[str, list[str]]:
    """The ``n`` best-ranked documents of ``run`` per query that are not among its positives."""
    lists = run.to_lists()
    out = {}
    for query, relevant in positives.items():
        exclude = set(relevant)
        out[query] = [d for d in lists.get(query, []) if d not in exclude][:n]
    return out


def first_stage_run(system: "DenseRetriever", corpus: Corpus, queries: Queries, depth: int, use_model: bool,
                    engine: Engine = LOCAL) -> Run:
    """BM25 (stemmed) run, or the dense model's own run when re-mining (either on ``engine``)."""
    if use_model:
        return system.retrieve(corpus, queries, k=depth, use_cache=False, engine=engine)
    from evalkit.pipelines.registry import load_system

    return load_system("bm25", analyzer="stem").retrieve(corpus, queries, k=depth, engine=engine)


def mnrl_loss(q_emb: Any, d_emb: Any, mask: Any, scale: float) -> Any:
    """MultipleNegativesRankingLoss: cross-entropy of scaled cosines, target column i for query i."""
    import torch
    import torch.nn.functional as F

    sims = F.normalize(q_emb, dim=-1) @ F.normalize(d_emb, dim=-1).T * scale
    sims = sims.masked_fill(mask, float("-inf"))
    return F.cross_entropy(sims.float(), torch.arange(len(q_emb), device=sims.device))


def train(system: "DenseRetriever", corpus: Corpus, queries: Queries, qrels: Qrels,
          first_stage: Run | None = None, *, engine: Engine = LOCAL) -> list[dict[str, float]]:
    """Fine-tune ``system.model`` in place; returns one ``{"epoch", "loss", "steps", "hard_negatives"}`` per epoch."""
    from transformers import get_linear_schedule_with_warmup

    o = system.options
    if o.epochs <= 0 or o.lr <= 0 or not 0 <= o.warmup_ratio < 1 or o.n_hard_negatives < 0:
        raise UsageError("training needs epochs > 0, lr > 0, 0 <= warmup_ratio < 1, n_hard_negatives >= 0")
    positives = training_positives(corpus, queries, qrels)
    train_queries = queries.subset(positives)
    seed_everything(o.seed)
    rng = random.Random(o.seed)
    n_pairs = sum(len(docs) for docs in positives.values())
    steps_per_epoch = math.ceil(n_pairs / o.train_batch_size)
    model = system.model
    device = system.device
    dtype = autocast_dtype(device, o.precision)
    optimizer = adamw(model.parameters(), lr=o.lr)  # torch.optim.AdamW default weight decay 0.01
    total = steps_per_epoch * o.epochs
    scheduler = get_linear_schedule_with_warmup(optimizer, int(o.warmup_ratio * total), total)
    scaler = grad_scaler(device, dtype)
    inference_length = model.max_seq_length
    try:
        return _epochs(system, corpus, train_queries, positives, first_stage, optimizer, scheduler, scaler, dtype, rng, engine)
    finally:
        model.max_seq_length = inference_length
        model.eval()


def _epochs(system, corpus, train_queries, positives, first_stage, optimizer, scheduler, scaler, dtype, rng, engine=LOCAL):
    """The training loop proper (see :func:`train`)."""
    import torch

    from evalkit.core.progress import progress

    o = system.options
    model, device = system.model, system.device
    query_text = train_queries.as_dict()
    doc_texts = system.document_texts(corpus)
    position = corpus.position()
    pairs = [(q, d) for q in train_queries.ids for d in positives[q]]
    inference_length = model.max_seq_length
    train_length = o.train_max_seq_length or inference_length

    def tokens(texts: list[str], prefix: str) -> list[list[int]]:
        model.max_seq_length = train_length
        try:
            return [w[0] for w in system.token_windows(texts, prefix, chunked=False)]
        finally:
            model.max_seq_length = inference_length

    log: list[dict[str, float]] = []
    negatives: dict[str, list[str]] = {q: [] for q in positives}
    for epoch in range(o.epochs):
        if o.n_hard_negatives and (epoch == 0 or o.remine_each_epoch):
            if epoch == 0 and first_stage is not None:
                run = first_stage
            else:
                run = first_stage_run(system, corpus, train_queries, o.hard_negative_depth, use_model=epoch > 0, engine=engine)
            negatives = mine_hard_negatives(positives, run, o.n_hard_negatives)
        rng.shuffle(pairs)
        model.train()
        losses = []
        for begin in progress(range(0, len(pairs), o.train_batch_size), desc=f"{system.name} fit, epoch {epoch + 1} of {o.epochs}",
                              unit="batch"):
            batch = pairs[begin : begin + o.train_batch_size]
            docs = [d for _, d in batch] + [n for q, _ in batch for n in negatives.get(q, [])]
            mask = torch.zeros(len(batch), len(docs), dtype=torch.bool)
            for i, (query, _) in enumerate(batch):
                relevant = set(positives[query])
                for j, doc in enumerate(docs):
                    mask[i, j] = j != i and doc in relevant
            q_feats = system.features(tokens([query_text[q] for q, _ in batch], o.query_prefix))
            d_feats = system.features(tokens([doc_texts[position[d]] for d in docs], o.passage_prefix))
            with autocast(device, dtype):
                q_emb = model(q_feats)["sentence_embedding"]
                d_emb = model(d_feats)["sentence_embedding"]
                loss = mnrl_loss(q_emb, d_emb, mask.to(q_emb.device), o.scale)
            optimizer_step(loss, model.parameters(), optimizer, scheduler, scaler)
            losses.append(float(loss.detach()))
        mean_loss = sum(losses) / max(len(losses), 1)
        if not math.isfinite(mean_loss):
            raise UsageError(f"training diverged in epoch {epoch + 1} (loss {mean_loss}); lower lr")
        log.append({"epoch": epoch + 1, "loss": mean_loss, "steps": len(losses),
                    "hard_negatives": sum(len(v) for v in negatives.values())})
    return log
