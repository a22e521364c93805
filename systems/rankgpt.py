"""RankGPT: listwise reranking by an LLM that writes the order of numbered passages.

Sun et al., "Is ChatGPT Good at Search? Investigating Large Language Models
as Re-Ranking Agents", EMNLP 2023. The top ``depth`` documents of the input
run are reranked with a sliding window from the bottom of the list to the top
(:func:`window_spans`: window 20, step 10 by default), so good documents
bubble up window by window; each window is one prompt
(:func:`~evalkit.systems.rankgpt_prompts.permutation_prompt`, passages cut to
``passage_words`` words) answered as ``[3] > [1] > ...`` and read back by
:func:`~evalkit.systems.rankgpt_prompts.parse_permutation`. Windows of
different queries go to the LLM together (the HTTP backend runs them in
parallel); each query's windows run in order.

Scores: the LLM order gives ``depth - position``; with ``fuse_alpha`` set, the
order is fused with the input run (a cross-encoder run) by
:func:`evalkit.fusion.alpha_fusion`::

    score(d) = alpha * CE_norm(d) + (1 - alpha) * LLM_norm(d),  LLM_norm(d) = 1 - (rank(d) - 1) / (N - 1)

The system implements the listwise hook (:meth:`RankGPT.score_lists`); the
base class :class:`evalkit.pipelines.stages.Reranker` owns the rest: the top ``depth``
candidates (default 100), texts, and the merge that keeps the documents below
``depth`` in their order. Every LLM answer is cached
(:mod:`evalkit.systems._models.llm`), so a rerun costs nothing.
"""
from __future__ import annotations

import dataclasses
import json
import sys
from typing import Any, Callable, Mapping, Sequence

from evalkit.data import Run
from evalkit.core.errors import UsageError
from evalkit.pipelines.registry import register_system
from evalkit.pipelines.stages import LOCAL, Candidates, Engine, Reranker, Work, option
from evalkit.systems._models.llm import LLMOptions, LLMSystem, truncate_words

from .rankgpt_prompts import default_answer_tokens, parse_permutation, permutation_prompt

PROMPTS = ("zero-shot", "few-shot")


def window_spans(n: int, window: int = 20, step: int = 10) -> list[tuple[int, int]]:
    """``[(start, end), ...]`` 0-based half-open windows over ``n`` documents, bottom first.

    ``end`` starts at ``n`` and moves up by ``step``; ``start = max(end - window, 0)``;
    the last window starts at 0 (35 documents, window 20, step 10:
    ``(15, 35), (5, 25), (0, 15)``). Unlike the paper's loop, which stops
    before a window would start below 0, the top documents are always included.
    """
    if window < 2 or not 1 <= step <= window:
        raise UsageError(f"RankGPT needs window >= 2 and 1 <= step <= window (got window={window}, step={step})")
    spans: list[tuple[int, int]] = []
    end = n
    while end > 0:
        start = max(end - window, 0)
        spans.append((start, end))
        if start == 0:
            break
        end -= step
    return spans


@dataclasses.dataclass
class RankGPTOptions(LLMOptions):
    window: int = option(20, "passages per prompt (sliding window size)")
    step: int = option(10, "window step, from the bottom of the list to the top")
    passage_words: int = option(300, "words kept of each passage (Sun et al. keep 300; 0 = all)")
    query_words: int = option(0, "words kept of the query (0 = all)")
    fields: list[str] = option(["title", "text"], "document fields joined as the passage")
    prompt: str = option("zero-shot", "zero-shot or few-shot (one worked example first)")
    single_turn: bool = option(False, "all passages in one user message (paper: one turn per passage); fewer tokens")
    evidentiary: bool = option(False, "rank by evidence about the claim, supporting or refuting alike (fact-checking)")
    fuse_alpha: float | None = option(None, "fuse with the input run: alpha*CE_norm + (1-alpha)*LLM_norm (None: pure LLM order)")


@register_system
class RankGPT(LLMSystem, Reranker):
    """RankGPT listwise reranker (any LLM backend), optionally alpha-fused with the input run."""

    name = "rankgpt"
    distributed = "the sliding windows of whole queries per unit (concurrency = actors)"
    description = "RankGPT listwise LLM reranking with a sliding window (Sun et al. 2023), optional alpha fusion"
    Options = RankGPTOptions

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        o = self.options
        if o.prompt not in PROMPTS:
            raise UsageError(f"rankgpt: prompt must be one of {', '.join(PROMPTS)} (got {o.prompt!r})")
        if o.fuse_alpha is not None and not 0.0 <= o.fuse_alpha <= 1.0:
            raise UsageError(f"rankgpt: fuse_alpha must lie in [0, 1] (got {o.fuse_alpha})")
        window_spans(0, o.window, o.step)  # checks window/step
        self.stats: dict[str, int] = {}

    def prompt(self, query: str, passages: list[str]) -> list[dict[str, str]]:
        o = self.options
        return permutation_prompt(truncate_words(query, o.query_words), [truncate_words(p, o.passage_words) for p in passages],
                                  few_shot=o.prompt == "few-shot", evidentiary=o.evidentiary,
                                  single_turn=o.single_turn)

    def permute(self, qtext: Mapping[str, str], candidates: Mapping[str, list[str]], text: Callable[[str], str]) -> dict[str, list[str]]:
        """Each query's candidates in the LLM's order (windows bottom to top, queries batched per round)."""
        o = self.options
        orders = {q: list(docs) for q, docs in candidates.items()}
        spans = {q: window_spans(len(docs), o.window, o.step) for q, docs in orders.items()}
        rounds = max((len(s) for s in spans.values()), default=0)
        backend = self.backend()
        self.stats = {"prompts": 0, "named": 0, "passages": 0, "unparsed": 0}
        for r in range(rounds):
            active = [(q, spans[q][r]) for q in orders if r < len(spans[q])]
            prompts = [self.prompt(qtext[q], [text(d) for d in orders[q][a:b]]) for q, (a, b) in active]
            limit = o.max_new_tokens or default_answer_tokens(o.window)
            answers = backend.chat(prompts, max_new_tokens=limit, desc=f"RankGPT round {r + 1}/{rounds}")
            for (q, (a, b)), answer in zip(active, answers):
                window = orders[q][a:b]
                order, named = parse_permutation(answer, len(window))
                orders[q][a:b] = [window[i] for i in order]
                self.stats["prompts"] += 1
                self.stats["named"] += named
                self.stats["passages"] += len(window)
                self.stats["unparsed"] += named == 0
        return orders

    def permute_queries(self, query_ids: Sequence[str], query_texts: Sequence[str], doc_lists: Sequence[list[str]],
                        text_lists: Sequence[list[str]]) -> list[str]:
        """:meth:`permute` of some queries, each order as JSON (the LLM calls a distributed engine runs remotely)."""
        texts = {d: t for docs, ts in zip(doc_lists, text_lists) for d, t in zip(docs, ts)}
        orders = self.permute(dict(zip(query_ids, query_texts)), dict(zip(query_ids, doc_lists)), texts.__getitem__)
        return [json.dumps(orders[q], allow_nan=False) for q in query_ids]

    def score_lists(self, candidates: Candidates, engine: Engine = LOCAL) -> dict[str, dict[str, float]]:
        """The listwise hook: ``depth - position`` in the LLM's order, or its alpha fusion with the input run.

        The LLM calls run on ``engine`` in units of whole queries (each query's windows are sequential;
        queries are independent)."""
        ids = list(candidates.docs)
        work = Work(self.permute_queries, (ids, [candidates.queries[q] for q in ids], [list(candidates.docs[q]) for q in ids],
                                           [[candidates.text(d) for d in candidates.docs[q]] for q in ids]), batch_size=4, what="queries")
        orders = {q: json.loads(str(order)) for q, order in zip(ids, engine.run(work))}
        if self.stats.get("unparsed"):
            print(f"rankgpt: {self.stats['unparsed']} of {self.stats['prompts']} answers named no passage "
                  "(input order kept there)", file=sys.stderr)
        if self.options.fuse_alpha is None:
            return {q: {d: float(len(docs) - i) for i, d in enumerate(docs)} for q, docs in orders.items()}
        from evalkit.fusion import alpha_fusion

        fused = alpha_fusion(candidates.run, Run.from_lists(orders), self.options.fuse_alpha, depth=candidates.depth)
        scores = fused.to_scores()
        return {q: scores.get(q, {}) for q in orders}

    def run_name(self, run: Run) -> str:
        return f"{run.name}+rankgpt"
