"""Training data and losses of the cross-encoder rerankers (shared by ``cross-encoder`` and ``reranker-ensemble``).

* :func:`bce_examples` -- ``(query, doc, y)`` with ``y = 1`` for each positive
  and ``y = 0`` for negatives sampled from a first-stage run's top candidates
  minus the positives, plus random corpus documents (monoBERT / AIRwaves).
  Loss (:func:`train_pairs`): binary cross-entropy on the logit ``s``,
  ``-[y log sigma(s) + (1-y) log(1 - sigma(s))]``.
* :func:`triplets` -- ``(query, positive, negative)`` with random and hard
  negatives (Ant Bridge, ClimateCheck 2025). Loss (:func:`train_triplets`):
  margin ranking, ``max(0, m - (s(q, d+) - s(q, d-)))``.

Both losses share one loop (:func:`_train`): AdamW, linear warm-up over the
first ``warmup`` fraction of steps then linear decay (Devlin et al., 2019),
seeded shuffling, progress (evalkit.core.progress), mixed precision on GPU.
"""
from __future__ import annotations

import random
from typing import Any, Callable, Mapping, Sequence

from evalkit.data.corpus import Corpus, Queries, check_judged_docs
from evalkit.data import Qrels, Run
from evalkit.core.errors import UsageError
from evalkit.systems._models.modelio import grad_scaler, optimizer_step


# --------------------------------------------------------------------- data
def check_training_data(corpus: Corpus, queries: Queries, qrels: Qrels) -> tuple[Queries, dict[str, list[str]]]:
    """The training queries and their positives; judged ids missing from corpus or queries -> UsageError."""
    where = qrels.source.path if qrels.source is not None else qrels.name
    check_judged_docs(corpus, qrels, where)
    known_queries = set(queries.ids)
    unknown_queries = sorted({str(q) for q in qrels.query_ids.tolist()} - known_queries)
    if unknown_queries:
        raise UsageError(
            f"{where}: {len(unknown_queries)} judged query id(s) are not in the queries (e.g. {unknown_queries[0]!r}); wrong query file?"
        )
    positives = {q: docs for q, docs in qrels.relevant_docs().items() if docs}
    if not positives:
        raise UsageError(f"{where}: no relevant judgment to train on")
    return queries.subset(positives), positives


def mine_candidates(corpus: Corpus, queries: Queries, k: int) -> Run:
    """First-stage candidates from the registered ``bm25`` system (stemmed analyzer)."""
    from evalkit.pipelines.registry import load_system

    return load_system("bm25", analyzer="stem").retrieve(corpus, queries, k=k)


def sample_hard(rng: random.Random, pool: Sequence[str], n: int, exclude: set[str]) -> list[str]:
    """Up to ``n`` distinct documents of ``pool`` not in ``exclude``, uniformly."""
    allowed = [d for d in dict.fromkeys(pool) if d not in exclude]
    return rng.sample(allowed, min(n, len(allowed)))


def sample_random(rng: random.Random, doc_ids: Sequence[str], n: int, exclude: set[str]) -> list[str]:
    """``n`` distinct random corpus documents not in ``exclude`` (fewer if the corpus is too small)."""
    n = min(n, len(doc_ids) - len(exclude & set(doc_ids)))
    chosen: list[str] = []
    seen = set(exclude)
    while len(chosen) < n:
        doc = doc_ids[rng.randrange(len(doc_ids))]
        if doc not in seen:
            seen.add(doc)
            chosen.append(doc)
    return chosen


def negative_pools(first_stage: Run, positives: Mapping[str, Sequence[str]], depth: int) -> dict[str, list[str]]:
    """Per training query: the first-stage top ``depth`` minus the positives, in rank order."""
    lists = first_stage.to_lists(depth)
    return {q: [d for d in lists.get(q, []) if d not in set(pos)] for q, pos in positives.items()}


def bce_examples(
    corpus: Corpus, positives: Mapping[str, Sequence[str]], first_stage: Run, hard: int, depth: int, n_random: int, seed: int
) -> list[tuple[str, str, float]]:
    """``(query, doc, label)``: each positive (1), then per positive ``hard`` + ``n_random`` negatives (0)."""
    rng = random.Random(seed)
    pools = negative_pools(first_stage, positives, depth)
    examples: list[tuple[str, str, float]] = []
    for query, docs in positives.items():
        exclude = set(docs)
        for doc in docs:
            examples.append((query, doc, 1.0))
            negatives = sample_hard(rng, pools[query], hard, exclude)
            negatives += sample_random(rng, corpus.ids, n_random, exclude | set(negatives))
            examples.extend((query, neg, 0.0) for neg in negatives)
    return examples


def triplets(
    corpus: Corpus, positives: Mapping[str, Sequence[str]], hard_pools: Mapping[str, Sequence[str]], hard: int, n_random: int, seed: int
) -> list[tuple[str, str, str]]:
    """``(query, positive, negative)``: per positive ``n_random`` random and ``hard`` negatives from ``hard_pools``."""
    rng = random.Random(seed)
    out: list[tuple[str, str, str]] = []
    for query, docs in positives.items():
        exclude = set(docs)
        for doc in docs:
            negatives = sample_random(rng, corpus.ids, n_random, exclude)
            negatives += sample_hard(rng, hard_pools.get(query, []), hard, exclude | set(negatives))
            out.extend((query, doc, neg) for neg in negatives)
    return out


# --------------------------------------------------------------------- losses
def train_pairs(model: Any, examples: Sequence[tuple[str, str, float]], corpus: Corpus, queries: Queries, options: Any,
                desc: str = "cross-encoder") -> list[float]:
    """Binary cross-entropy on ``(query, doc, label)``; returns the mean loss per epoch."""
    import torch

    from evalkit.pipelines.stages import doc_text_lookup
    from evalkit.systems._models.modelio import pair_logits

    text, qtext = doc_text_lookup(corpus, options.fields), queries.as_dict()
    bce = torch.nn.BCEWithLogitsLoss()

    def loss(batch: Sequence[tuple[str, str, float]]):
        logits = pair_logits(model, [qtext[q] for q, _, _ in batch], [text(d) for _, d, _ in batch], options.max_length)
        return bce(logits, torch.tensor([y for _, _, y in batch], device=logits.device))

    return _train(model, examples, loss, options, f"{desc} train BCE")


def train_triplets(model: Any, items: Sequence[tuple[str, str, str]], corpus: Corpus, queries: Queries, options: Any, margin: float,
                   desc: str = "cross-encoder") -> list[float]:
    """Margin ranking loss ``max(0, margin - (s(q, d+) - s(q, d-)))`` on triplets; returns the mean loss per epoch."""
    import torch

    from evalkit.pipelines.stages import doc_text_lookup
    from evalkit.systems._models.modelio import pair_logits

    text, qtext = doc_text_lookup(corpus, options.fields), queries.as_dict()
    ranking = torch.nn.MarginRankingLoss(margin=margin)

    def loss(batch: Sequence[tuple[str, str, str]]):
        qs = [qtext[q] for q, _, _ in batch]
        logits = pair_logits(model, qs + qs, [text(p) for _, p, _ in batch] + [text(n) for _, _, n in batch], options.max_length)
        pos, neg = logits[: len(batch)], logits[len(batch) :]
        return ranking(pos, neg, torch.ones_like(pos))

    return _train(model, items, loss, options, f"{desc} train margin {margin:g}")


def param_groups(hf: Any, lr: float, head_lr: float) -> list[dict[str, Any]]:
    """Encoder parameters at ``lr``; the scoring head (outside ``hf.base_model``) at ``head_lr`` when given.

    A fresh head on a checkpoint trained for something else (a bi-encoder's
    near-silent pooler) moves too slowly at an encoder learning rate to spread
    the logits within a few hundred steps; a larger head rate fixes that.
    """
    encoder = {id(p) for p in hf.base_model.parameters()}
    body = [p for p in hf.parameters() if id(p) in encoder]
    head = [p for p in hf.parameters() if id(p) not in encoder]
    if not head_lr or not head:
        return [{"params": body + head, "lr": lr}]
    return [{"params": body, "lr": lr}, {"params": head, "lr": head_lr}]


def _train(model: Any, items: Sequence[Any], loss_of: Callable[[Sequence[Any]], Any], o: Any, what: str) -> list[float]:
    """AdamW + linear warm-up/decay over ``o.epochs`` seeded shuffles of ``items`` in batches of ``o.batch_size``.

    Its progress (epoch, batch of batches, rate, loss) is always shown (:mod:`evalkit.core.progress`): training is the
    longest step of a pipeline; ``show_progress`` silences the scoring bars only.
    """
    from transformers import get_linear_schedule_with_warmup

    from evalkit.core.progress import progress
    from evalkit.systems._models.modelio import adamw, autocast, autocast_dtype, seed_everything

    if not items:
        raise UsageError("no training examples (no positives with candidates)")
    if o.epochs <= 0 or o.batch_size <= 0:
        raise UsageError(f"epochs and batch_size must be positive (got {o.epochs}, {o.batch_size})")
    seed_everything(o.seed)
    hf = model.transformers_model
    device = str(hf.device)
    dtype = autocast_dtype(device, o.precision)
    scaler = grad_scaler(device, dtype)
    steps_per_epoch = (len(items) + o.batch_size - 1) // o.batch_size
    total = steps_per_epoch * o.epochs
    optimizer = adamw(param_groups(hf, o.lr, getattr(o, "head_lr", 0.0)), lr=o.lr, weight_decay=o.weight_decay)
    schedule = get_linear_schedule_with_warmup(optimizer, int(o.warmup * total), total)
    rng = random.Random(o.seed)
    order = list(range(len(items)))
    losses: list[float] = []
    hf.train()
    bar = progress(total=total, desc=what, unit="batch")
    for epoch in range(o.epochs):
        rng.shuffle(order)
        running = 0.0
        for start in range(0, len(order), o.batch_size):
            batch = [items[i] for i in order[start : start + o.batch_size]]
            with autocast(device, dtype, hf):
                loss = loss_of(batch)
            optimizer_step(loss, hf.parameters(), optimizer, schedule, scaler)
            running += float(loss.detach())
            bar.update(1)
            bar.set_postfix(epoch=f"{epoch + 1}/{o.epochs}", loss=f"{running / (start // o.batch_size + 1):.4f}")
        losses.append(running / steps_per_epoch)
    bar.close()
    hf.eval()
    return losses
