"""Claim verification by prompting an LLM (ClimateCheck 2025 Subtask II), four strategies.

Every (claim, abstract) pair in the top ``depth`` of a run gets Supports,
Refutes or Not Enough Information (NEI):

* ``one-step`` -- one question, answer one of the three labels;
* ``two-step`` -- "does the abstract give evidence about the claim? yes/no"
  (no -> NEI), then for the yes pairs "does it support or refute it?";
* ``hybrid`` -- the one-step question decides NEI vs evidence; pairs it
  calls Supports or Refutes get the two-step polarity question, whose answer
  decides the stance;
* ``batched`` -- ``batch_pairs`` abstracts of one claim in one prompt,
  answered as one ``[i] label`` line each; abstracts the answer leaves out
  are asked one by one (one-step).

Answers are read leniently (:func:`read_label`: the first label word found,
"contradict" = Refutes, "neutral"/"insufficient" = NEI, a negated label such as
"is not supported" = NEI). An answer with no
label is asked again with a reminder (``label_retries`` times); what is still
unreadable becomes NEI (``on_bad_label=nei``, counted and reported on stderr)
or fails (``on_bad_label=error``).

NEI calibration (``min_nei_share``), after the ClimateCheck 2025 winner, who
targeted a minimum proportion of NEI answers: the batched prompt says so
("at least P% of your labels should be NEI"), and for every strategy the
labels are then forced to reach the share: the non-NEI pairs ranked lowest by
the input run become NEI first (:func:`evalkit.data.labels.enforce_nei_share`).

The system implements the model (:meth:`LLMVerifier.label_pairs`, all pairs at
once so prompts of different claims go to the LLM together); the base class
:class:`evalkit.pipelines.stages.Labeler` owns the top ``depth`` (default 10), the texts
and writing the labels onto the run.
"""
from __future__ import annotations

import dataclasses
import re
import sys
from typing import Any, Callable, Sequence

from evalkit.core.errors import UsageError
from evalkit.data.labels import LABELS, NEI, REFUTES, SUPPORTS, enforce_nei_share, normalize_label
from evalkit.pipelines.registry import register_system
from evalkit.pipelines.stages import LOCAL, Engine, Labeler, Work, option
from evalkit.systems._models.llm import LLMOptions, LLMSystem, truncate_words
from evalkit.systems._models.llm.cache import Messages

STRATEGIES = ("one-step", "two-step", "hybrid", "batched")
SYSTEM = "You are a careful scientific fact-checker."
NEGATED = r"(?:\bnot|n't|\bno|\bneither|\bnor)\s+(?:\w+\s+){0,3}?(?:support|refut|contradict|enough|sufficient|evidence)"
LABEL_WORDS = [(re.compile(r"not enough|insufficient|\bnei\b|neutral|unrelated|no evidence", re.I), NEI),
               (re.compile(NEGATED, re.I), NEI),
               (re.compile(r"refut|contradict", re.I), REFUTES), (re.compile(r"support", re.I), SUPPORTS)]
ONE_STEP_REMINDER = "Answer with exactly one of: Supports, Refutes, Not Enough Information."
POLARITY_REMINDER = "Answer with exactly one word: Supports or Refutes."
YES_NO_REMINDER = "Answer with exactly one word: yes or no."


def read_label(answer: str, allowed: Sequence[str] = LABELS) -> str | None:
    """The label an answer gives: exact (any spelling :func:`normalize_label` knows), else the first label word in it."""
    exact = normalize_label(answer.strip().strip(".!*\"'` "))
    if exact in allowed:
        return exact
    found = [(m.start(), label) for pattern, label in LABEL_WORDS if (m := pattern.search(answer)) and label in allowed]
    return min(found)[1] if found else None


def read_yes_no(answer: str) -> bool | None:
    match = re.match(r"\W*(yes|no)\b", answer, re.I)
    return None if match is None else match.group(1).lower() == "yes"


def read_batched(answer: str, n: int) -> list[str | None]:
    """``[i] label`` lines -> a label (or None) for each of the ``n`` abstracts."""
    out: list[str | None] = [None] * n
    for line in answer.splitlines():
        match = re.match(r"\W*\[?\s*(\d+)\s*\]?[\s:.)\-]*(.*)", line)
        if match and 1 <= int(match.group(1)) <= n and out[int(match.group(1)) - 1] is None:
            out[int(match.group(1)) - 1] = read_label(match.group(2))
    return out


def pair_text(claim: str, abstract: str) -> str:
    return f"Claim: {claim}\n\nAbstract: {abstract}"


def one_step_prompt(claim: str, abstract: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": (
        f"{pair_text(claim, abstract)}\n\nDoes the abstract support the claim, refute it, or not give enough "
        f"information to decide? {ONE_STEP_REMINDER}")}]


def evidence_prompt(claim: str, abstract: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": (
        f"{pair_text(claim, abstract)}\n\nDoes the abstract contain evidence that supports or refutes the claim? "
        f"{YES_NO_REMINDER}")}]


def polarity_prompt(claim: str, abstract: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": (
        f"{pair_text(claim, abstract)}\n\nThe abstract contains evidence about the claim. Does it support the claim "
        f"or refute it? {POLARITY_REMINDER}")}]


def batched_prompt(claim: str, abstracts: Sequence[str], nei_share: float = 0.0) -> list[dict[str, str]]:
    listed = "\n".join(f"[{i}] {a}" for i, a in enumerate(abstracts, start=1))
    hint = (f" Many abstracts only touch the topic: at least {nei_share:.0%} of your labels should be "
            "Not Enough Information." if nei_share > 0 else "")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": (
        f"Claim: {claim}\n\nAbstracts:\n{listed}\n\nFor each abstract, decide whether it Supports the claim, Refutes "
        f"it, or gives Not Enough Information.{hint} Answer with one line per abstract, formatted as "
        '"[number] label", e.g. "[1] Supports".')}]


@dataclasses.dataclass
class LLMVerifierOptions(LLMOptions):
    strategy: str = option("one-step", "one-step, two-step (evidence? then polarity), hybrid or batched")
    passage_words: int = option(200, "words kept of each abstract (0 = all)")
    fields: list[str] = option(["title", "text"], "document fields joined as the abstract")
    batch_pairs: int = option(5, "batched strategy: abstracts per prompt")
    min_nei_share: float = option(0.0, "calibrate: at least this share of labels is NEI (lowest-ranked pairs first)")
    label_retries: int = option(1, "ask again (with a reminder) when an answer holds no label")
    on_bad_label: str = option("nei", "still no label after the retries: nei (count and report) or error")


@register_system
class LLMVerifier(LLMSystem, Labeler):
    """Supports / Refutes / NEI by prompting an LLM (one-step, two-step, hybrid, batched)."""

    name = "llm-verifier"
    distributed = "the prompts of whole claims per unit (concurrency = actors)"
    description = "claim verification by LLM prompting: one-step, two-step, hybrid or batched, NEI-share calibration"
    Options = LLMVerifierOptions
    default_max_new_tokens = 16

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        o = self.options
        if o.strategy not in STRATEGIES:
            raise UsageError(f"llm-verifier: strategy must be one of {', '.join(STRATEGIES)} (got {o.strategy!r})")
        if o.on_bad_label not in ("nei", "error"):
            raise UsageError(f"llm-verifier: on_bad_label must be nei or error (got {o.on_bad_label!r})")
        if o.batch_pairs < 1:
            raise UsageError(f"llm-verifier: batch_pairs must be at least 1 (got {o.batch_pairs})")
        enforce_nei_share([], [], o.min_nei_share)  # checks the share
        self.stats: dict[str, int] = {}

    def ask(self, prompts: list[Messages], read: Callable[[str], Any], reminder: str, desc: str,
            max_new_tokens: int | None = None) -> list[Any]:
        """Parsed answers; unreadable ones are asked again with ``reminder``, then left as None."""
        backend = self.backend()
        limit = self.options.max_new_tokens or max_new_tokens
        answers = backend.chat(prompts, max_new_tokens=limit, desc=desc)
        results = [read(a) for a in answers]
        conversations = [list(p) for p in prompts]
        for _ in range(self.options.label_retries):
            bad = [i for i, r in enumerate(results) if r is None]
            if not bad:
                break
            for i in bad:
                conversations[i] += [{"role": "assistant", "content": answers[i]}, {"role": "user", "content": reminder}]
            again = backend.chat([conversations[i] for i in bad], max_new_tokens=limit, desc=f"{desc} (again)")
            for i, answer in zip(bad, again):
                answers[i], results[i] = answer, read(answer)
        self.stats["retried_prompts"] = self.stats.get("retried_prompts", 0) + sum(
            len(c) > len(p) for c, p in zip(conversations, prompts))
        return results

    def settle(self, values: list[str | None], what: str) -> list[str]:
        """None -> NEI (counted) or a one-line error (``on_bad_label=error``)."""
        bad = sum(v is None for v in values)
        if bad and self.options.on_bad_label == "error":
            raise UsageError(f"llm-verifier: {bad} {what} answer(s) held no label after {self.options.label_retries} retries")
        self.stats["bad_labels"] = self.stats.get("bad_labels", 0) + bad
        return [NEI if v is None else v for v in values]

    def one_step(self, pairs: list[tuple[str, str]]) -> list[str]:
        prompts = [one_step_prompt(c, a) for c, a in pairs]
        return self.settle(self.ask(prompts, read_label, ONE_STEP_REMINDER, "verify (one step)"), "one-step")

    def polarity(self, pairs: list[tuple[str, str]]) -> list[str]:
        read = lambda a: read_label(a, (SUPPORTS, REFUTES))  # noqa: E731
        return self.settle(self.ask([polarity_prompt(c, a) for c, a in pairs], read, POLARITY_REMINDER, "verify (polarity)"),
                           "polarity")

    def two_step(self, pairs: list[tuple[str, str]]) -> list[str]:
        evidence = self.ask([evidence_prompt(c, a) for c, a in pairs], read_yes_no, YES_NO_REMINDER, "verify (evidence?)", 4)
        self.stats["bad_labels"] = self.stats.get("bad_labels", 0) + sum(e is None for e in evidence)
        if any(e is None for e in evidence) and self.options.on_bad_label == "error":
            raise UsageError("llm-verifier: an evidence answer held no yes/no after the retries")
        keep = [i for i, e in enumerate(evidence) if e]
        labels = [NEI] * len(pairs)
        for i, label in zip(keep, self.polarity([pairs[i] for i in keep])):
            labels[i] = label
        return labels

    def hybrid(self, pairs: list[tuple[str, str]]) -> list[str]:
        labels = self.one_step(pairs)
        keep = [i for i, label in enumerate(labels) if label != NEI]
        for i, label in zip(keep, self.polarity([pairs[i] for i in keep])):
            labels[i] = label
        return labels

    def batched(self, pairs: list[tuple[str, str]], claims: list[str]) -> list[str]:
        groups: dict[str, list[int]] = {}
        for i, q in enumerate(claims):
            groups.setdefault(q, []).append(i)
        chunks = [idx[s:s + self.options.batch_pairs] for idx in groups.values() for s in range(0, len(idx), self.options.batch_pairs)]
        prompts = [batched_prompt(pairs[c[0]][0], [pairs[i][1] for i in c], self.options.min_nei_share) for c in chunks]
        limit = self.options.max_new_tokens or 8 * self.options.batch_pairs + 8
        answers = self.backend().chat(prompts, max_new_tokens=limit, desc="verify (batched)")
        labels: list[str | None] = [None] * len(pairs)
        for chunk, answer in zip(chunks, answers):
            for i, label in zip(chunk, read_batched(answer, len(chunk))):
                labels[i] = label
        missing = [i for i, label in enumerate(labels) if label is None]
        self.stats["batched_missing"] = len(missing)
        for i, label in zip(missing, self.one_step([pairs[i] for i in missing])):
            labels[i] = label
        return [str(label) for label in labels]

    def strategy_labels(self, claims: Sequence[str], texts: Sequence[str], query_ids: Sequence[str]) -> list[str]:
        """The LLM's label per pair by ``strategy`` (the model calls an engine distributes, whole claims per unit)."""
        o = self.options
        pairs = [(claim, truncate_words(text, o.passage_words)) for claim, text in zip(claims, texts)]
        if o.strategy == "batched":
            return self.batched(pairs, list(query_ids))
        return getattr(self, o.strategy.replace("-", "_"))(pairs)

    def label_pairs(self, claims: Sequence[str], texts: Sequence[str], query_ids: Sequence[str], engine: Engine = LOCAL) -> list[str]:
        """Labels from the LLM by ``strategy`` (the calls on ``engine``), then at least ``min_nei_share`` NEI (lowest-ranked pairs first)."""
        o = self.options
        self.stats = {}
        work = Work(self.strategy_labels, (list(claims), list(texts), list(query_ids)), groups=list(query_ids),
                    batch_size=max(o.batch_pairs, 8), what="pairs")
        labels = [str(label) for label in engine.run(work)]
        ranks, previous, position = [], None, 0
        for q in query_ids:  # pairs come grouped by query, in rank order
            position = position + 1 if q == previous else 1
            previous = q
            ranks.append(-position)
        labels = enforce_nei_share(labels, ranks, o.min_nei_share)
        if self.stats.get("bad_labels"):
            print(f"llm-verifier: {self.stats['bad_labels']} answer(s) held no label after {o.label_retries} "
                  "retries; labelled Not Enough Information", file=sys.stderr)
        self.stats["pairs"] = len(texts)  # on a distributed engine the actors' counts stay with them
        return labels
