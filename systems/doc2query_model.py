"""The seq2seq side of DocT5Query: load, fine-tune, fingerprint and sample a T5.

Training (Nogueira & Lin 2019, "From doc2query to docTTTTTquery") is plain
teacher forcing: minimise the token cross-entropy
``-sum_t log p(q_t | q_<t, d)`` of a relevant query ``q`` given the document
text ``d`` (with a task prefix), with AdamW and a linear schedule (10% warm-up).

Sampling is top-k / nucleus sampling (Holtzman et al. 2020) done with the
Gumbel-max trick: after the no-repeat-n-gram, top-k and top-p filters,
``argmax(logits + G)`` with ``G = -log(-log U)``, ``U ~ Uniform(0, 1)``, is a draw
from the filtered softmax. Each (document, expansion) row draws ``U`` from its
own generator seeded by ``sha256(seed, doc id, j)``, so a document's
expansions depend only on the seed and the document -- not on the batch it
falls in, nor on a resumed run skipping documents already done.
"""
from __future__ import annotations

import hashlib
import importlib.util
import math
import random
from typing import Any, Iterator, Sequence

from evalkit.core.errors import UsageError
from evalkit.systems._models.modelio import autocast, autocast_dtype, grad_scaler, model_load_error, optimizer_step, resolve_model, seed_everything

SPIECE_EXAMPLE = "castorini/doc2query-t5-base-msmarco"


def load_seq2seq(name_or_path: str) -> tuple[Any, Any]:
    """``(model, tokenizer)`` of an encoder-decoder checkpoint (hub name or local folder)."""
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    source = resolve_model(name_or_path, what="seq2seq model")
    try:
        tokenizer = AutoTokenizer.from_pretrained(source)
        model = AutoModelForSeq2SeqLM.from_pretrained(source)
    except Exception as exc:  # noqa: BLE001 - any loading failure becomes one line
        error = model_load_error(name_or_path, exc, what="seq2seq model")
        if importlib.util.find_spec("sentencepiece") is None and any(w in str(exc) for w in ("sentencepiece", "tiktoken", "protobuf")):
            error = UsageError(f"{error}; checkpoints with only a spiece.model tokenizer (e.g. {SPIECE_EXAMPLE}) "
                               "need: pip install sentencepiece protobuf")
        raise error from None
    if tokenizer.pad_token_id is None:
        raise UsageError(f"{name_or_path}: tokenizer has no pad token; DocT5Query needs a T5-style seq2seq tokenizer")
    return model, tokenizer


def fine_tune(
    model: Any,
    tokenizer: Any,
    pairs: Sequence[tuple[str, str]],
    *,
    epochs: int,
    batch_size: int,
    lr: float,
    seed: int,
    device: str,
    precision: str = "auto",
    max_input_length: int = 512,
    max_target_length: int = 64,
) -> list[float]:
    """Teacher-forced fine-tuning on ``(source, target)`` pairs; returns the mean loss of each epoch."""
    import torch
    from transformers import get_linear_schedule_with_warmup

    from evalkit.core.progress import progress

    seed_everything(seed)
    model.to(device)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    steps = epochs * math.ceil(len(pairs) / batch_size)
    scheduler = get_linear_schedule_with_warmup(optimizer, int(0.1 * steps), max(steps, 1))
    dtype = autocast_dtype(device, precision)
    context = autocast(device, dtype)
    scaler = grad_scaler(device, dtype)
    order = list(range(len(pairs)))
    shuffler = random.Random(seed)
    losses: list[float] = []
    bar = progress(total=steps, desc="doct5query fit", unit="batch")
    for epoch in range(epochs):
        shuffler.shuffle(order)
        total, batches = 0.0, 0
        for start in range(0, len(order), batch_size):
            chunk = [pairs[i] for i in order[start:start + batch_size]]
            inputs = tokenizer([s for s, _ in chunk], max_length=max_input_length, truncation=True,
                               padding=True, return_tensors="pt").to(device)
            labels = tokenizer(text_target=[t for _, t in chunk], max_length=max_target_length, truncation=True,
                               padding=True, return_tensors="pt").input_ids.to(device)
            labels[labels == tokenizer.pad_token_id] = -100
            with context:
                loss = model(**inputs, labels=labels).loss
            optimizer_step(loss, model.parameters(), optimizer, scheduler, scaler)
            total += float(loss.detach())
            batches += 1
            bar.update(1)
            bar.set_postfix(epoch=f"{epoch + 1}/{epochs}", loss=f"{total / batches:.4f}")
        losses.append(total / max(batches, 1))
    bar.close()
    model.eval()
    return losses


def row_seed(seed: int, doc_id: str, j: int) -> int:
    """The sampling seed of expansion ``j`` of ``doc_id``: 63 bits of ``sha256(seed, doc id, j)``."""
    digest = hashlib.sha256(f"{seed}\x00{doc_id}\x00{j}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "little") & ((1 << 63) - 1)


def _gumbel_processor(seeds: Sequence[int]):
    import torch
    from transformers.generation import LogitsProcessor

    class SeededGumbel(LogitsProcessor):
        """Adds per-row Gumbel noise from per-row generators: greedy decoding then samples."""

        def __init__(self) -> None:
            self.generators = [torch.Generator().manual_seed(s) for s in seeds]

        def __call__(self, input_ids, scores):
            vocab = scores.shape[-1]
            uniform = torch.stack([torch.rand(vocab, generator=g, dtype=torch.float64) for g in self.generators])
            gumbel = -torch.log(-torch.log(uniform.clamp_(min=1e-300)))
            return scores + gumbel.to(device=scores.device, dtype=scores.dtype)

    return SeededGumbel()


def generate_expansions(
    model: Any,
    tokenizer: Any,
    doc_ids: Sequence[str],
    texts: Sequence[str],
    *,
    n: int,
    seed: int,
    device: str,
    precision: str = "auto",
    batch_size: int = 8,
    top_k: int = 50,
    top_p: float = 0.95,
    no_repeat_ngram_size: int = 2,
    max_new_tokens: int = 64,
    max_input_length: int = 512,
) -> Iterator[tuple[list[str], list[list[str]]]]:
    """Yield ``(doc ids, [n expansions per doc])`` one batch at a time (so callers can write as they go)."""
    import torch
    from transformers.generation import LogitsProcessorList, NoRepeatNGramLogitsProcessor, TopKLogitsWarper, TopPLogitsWarper

    model.to(device)
    model.eval()
    context = autocast(device, autocast_dtype(device, precision))
    from evalkit.core.progress import progress

    for start in progress(range(0, len(texts), batch_size), desc="doct5query expand", unit="batch"):
        ids = list(doc_ids[start:start + batch_size])
        inputs = tokenizer(list(texts[start:start + batch_size]), max_length=max_input_length, truncation=True,
                           padding=True, return_tensors="pt")
        inputs = {k: v.repeat_interleave(n, dim=0).to(device) for k, v in inputs.items()}
        processors = [TopKLogitsWarper(top_k)] if top_k > 0 else []
        if 0 < top_p < 1:
            processors.append(TopPLogitsWarper(top_p))
        if no_repeat_ngram_size > 0:
            processors.insert(0, NoRepeatNGramLogitsProcessor(no_repeat_ngram_size))
        processors.append(_gumbel_processor([row_seed(seed, d, j) for d in ids for j in range(n)]))
        with torch.inference_mode(), context:
            out = model.generate(**inputs, do_sample=False, num_beams=1, max_new_tokens=max_new_tokens,
                                 logits_processor=LogitsProcessorList(processors))
        decoded = [" ".join(t.split()) for t in tokenizer.batch_decode(out, skip_special_tokens=True)]
        yield ids, [decoded[i * n:(i + 1) * n] for i in range(len(ids))]
