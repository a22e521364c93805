"""RankGPT prompts and answer parsing (Sun et al., EMNLP 2023, "Is ChatGPT Good at Search?").

The permutation-generation prompt follows the paper's code: a system turn, an
instruction, then each passage as a user turn ``[i] text`` acknowledged by the
assistant (``Received passage [i].``), and a final request for the order as
``[3] > [1] > ...``. ``few_shot`` prepends one worked example; ``evidentiary``
asks for the passages that give evidence about a claim, *whatever their
stance* (supporting and refuting both count), the wording used for
fact-checking retrieval. :func:`parse_permutation` reads the order back.
"""
from __future__ import annotations

import re
from typing import Sequence

from evalkit.systems._models.llm import truncate_words  # noqa: F401 (re-exported: prompt budgets)

SYSTEM = "You are RankGPT, an intelligent assistant that can rank passages based on their relevancy to the query."
EVIDENTIARY_SYSTEM = ("You are RankGPT, an intelligent assistant that can rank scientific passages by how much evidence "
                      "they give about a claim.")
CRITERION = "relevance to the search query"
EVIDENTIARY = ("how much evidence they give about the claim; a passage that supports the claim and one that refutes it "
               "are equally evidentiary, regardless of stance")
FEW_SHOT = (
    "Vitamin D supplementation reduces fractures in older adults.",
    ["Coral reefs bleach when ocean temperatures rise.",
     "In a trial of 2,000 adults over 65, vitamin D supplements lowered the rate of hip fractures.",
     "Vitamin D is made in the skin under sunlight."],
    "[2] > [3] > [1]",
)


def _example(query: str, passages: Sequence[str], answer: str, criterion: str) -> list[dict[str, str]]:
    listed = "\n".join(f"[{i}] {p}" for i, p in enumerate(passages, start=1))
    return [
        {"role": "user", "content": f"Example. Query: {query}\n{listed}\nRank the {len(passages)} passages by {criterion}."},
        {"role": "assistant", "content": answer},
    ]


def permutation_prompt(query: str, passages: Sequence[str], *, few_shot: bool = False, evidentiary: bool = False,
                       single_turn: bool = False) -> list[dict[str, str]]:
    """The chat messages asking for the order of ``passages`` (already truncated) for ``query``.

    ``single_turn`` lists every passage in one user message instead of one
    turn each (fewer tokens; small local models follow it better).
    """
    n = len(passages)
    criterion = EVIDENTIARY if evidentiary else CRITERION
    what = "claim" if evidentiary else "query"
    messages = [{"role": "system", "content": EVIDENTIARY_SYSTEM if evidentiary else SYSTEM}]
    if few_shot:
        messages += _example(*FEW_SHOT, criterion)
    intro = (f"I will provide you with {n} passages, each indicated by number identifier []. \n"
             f"Rank the passages based on {criterion}. The {what} is: {query}.")
    request = (f"Search {what.capitalize()}: {query}. \nRank the {n} passages above based on {criterion}. "
               "The passages should be listed in descending order using identifiers. The most relevant passages should "
               "be listed first. The output format should be [] > [], e.g., [1] > [2]. Only respond with the ranking "
               "results, do not say any word or explain.")
    if single_turn:
        listed = "\n".join(f"[{i}] {p}" for i, p in enumerate(passages, start=1))
        return messages + [{"role": "user", "content": f"{intro}\n\n{listed}\n\n{request}"}]
    messages += [{"role": "user", "content": intro}, {"role": "assistant", "content": "Okay, please provide the passages."}]
    for i, passage in enumerate(passages, start=1):
        messages.append({"role": "user", "content": f"[{i}] {passage}"})
        messages.append({"role": "assistant", "content": f"Received passage [{i}]."})
    return messages + [{"role": "user", "content": request}]


def parse_permutation(answer: str, n: int) -> tuple[list[int], int]:
    """``(order, given)``: 0-based positions of the ``n`` passages, best first, and how many the answer named.

    Bracketed numbers ``[i]`` are read when the answer has any, else every
    integer. Numbers outside 1..n and repeats are dropped; passages the answer
    does not name follow in their previous order (Sun et al.'s ``clean_response``
    + ``remove_duplicate`` + completion).
    """
    numbers = re.findall(r"\[\s*(\d+)\s*\]", answer) or re.findall(r"\d+", answer)
    order: list[int] = []
    seen: set[int] = set()
    for text in numbers:
        position = int(text) - 1
        if 0 <= position < n and position not in seen:
            seen.add(position)
            order.append(position)
    given = len(order)
    return order + [i for i in range(n) if i not in seen], given


def default_answer_tokens(n: int) -> int:
    """Enough new tokens for ``[n] > [n-1] > ...`` (about 5 tokens a passage, plus slack)."""
    return 6 * n + 8
