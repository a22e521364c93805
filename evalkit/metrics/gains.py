"""trec_eval's gain tables: ``level=gain`` parameters and the ideal ranking they give.

``ndcg``, ``dcg``, ``ideal_dcg``, ``ndcg_rel``, ``Rndcg``, ``G`` and ``rbp``
take parameters ``rel_level=gain`` (``ndcg.1=3,2=9``): a judged grade gets
its gain from the table, a grade not named keeps its own value as gain. The
table is built per query as trec_eval's ``setup_gains`` builds it: the named
levels first (in the order given), then every level from 0 to the query's
highest judged grade, sorted by gain with trec_eval's comparison (the gain
difference truncated to an integer, by glibc's stable merge sort), which
decides the ideal order when two gains differ by less than 1. The ideal
ranking walks the table from its end: each level's judged documents, while
the gain is positive.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from evalkit.core.errors import UsageError
from evalkit.metrics.ranked_lists import NONPOOL, UNJUDGED, RankedList, level_counts
from evalkit.metrics.trec_names import c_number


@dataclass
class GainLevel:
    level: float
    gain: float
    count: int  # judged documents of the query at this level


def parse_pairs(spec: str, metric: str, extra: tuple[str, ...] = ()) -> list[tuple[str, float]]:
    """trec_eval's ``name=value,name=value`` (``get_param_pairs``): names kept as text, values read with ``atof``.

    Names are integer levels (and ``extra``: ``p`` for rbp); trec_eval skips other names silently, evalkit refuses them.
    """
    last = ","
    for char in spec:
        if char in ",=":
            if char == last:
                last = ","
                break
            last = char
    if last != "=":
        raise UsageError(f"metric {metric}({spec}): write parameters as level=gain pairs, e.g. {metric}(1=3,2=9) (trec_eval: {metric}.1=3,2=9)")
    pairs = []
    for part in spec.split(","):
        name, _, value = part.partition("=")
        if not _valid_int(name) and name not in extra:
            supported = "level=gain pairs" + (f", {', '.join(extra)}" if extra else "")
            raise UsageError(f"metric {metric}({spec}): parameter {name!r} is not supported by {metric} (supported: {supported})")
        pairs.append((name, c_number(value, metric, spec)))
    return pairs


def pair_values(pairs: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """The pairs as declared parameters: a level's value is a ``gain``, a named one (rbp's ``p``) keeps its name."""
    return [("gain" if _valid_int(name) else name, value) for name, value in pairs]


def _valid_int(text: str) -> bool:
    return re.fullmatch(r"[+-]?[0-9]+", text) is not None


def _merge_sort(items: list[GainLevel]) -> list[GainLevel]:
    """glibc's ``msort`` with trec_eval's ``comp_rel_gain``: ``(int) (gain1 - gain2)``, stable."""
    if len(items) <= 1:
        return items
    half = len(items) // 2
    left, right = _merge_sort(items[:half]), _merge_sort(items[half:])
    out, i, j = [], 0, 0
    while i < len(left) and j < len(right):
        if int(left[i].gain - right[j].gain) <= 0:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out + left[i:] + right[j:]


def gain_table(pairs: list[tuple[str, float]], levels: list[float], counts: list[int]) -> list[GainLevel]:
    """The query's table (``setup_gains``): named levels, then 0..top not named, sorted by gain."""
    table = [GainLevel(float(int(name)), value, 0) for name, value in pairs if _valid_int(name)]
    for level, count in zip(levels, counts):
        named = next((entry for entry in table if entry.level == level), None)
        if named is not None:
            named.count = count
        else:
            table.append(GainLevel(level, level, count))
    return _merge_sort(table)


def gain_of(relevance: float, table: list[GainLevel]) -> float:
    """The gain of a relevance value (``get_gain``): the first entry of its level, else 0."""
    for entry in table:
        if entry.level == relevance:
            return entry.gain
    return 0.0


def ideal_walk(table: list[GainLevel]) -> list[float]:
    """The ideal ranking's gain at positions 0, 1, ...: the positive ones, then the position where it ends.

    trec_eval's loops: from the table's last entry, each level's ``count``
    positions, then the level below, while the gain is positive. The list
    ends with the first non-positive gain (the position where the walk stops,
    still visited by the loops); it is empty when the table's top gain is not
    positive (the loops never start).
    """
    out: list[float] = []
    level = len(table) - 1
    gain = table[level].gain if level >= 0 else 0.0
    at_level = 0
    while gain > 0.0:
        at_level += 1
        while level >= 0 and at_level > table[level].count:
            at_level = 1
            level -= 1
            gain = table[level].gain if level >= 0 else 0.0
        out.append(gain)
    return out


class GainParams:
    """Mixin for metrics with trec_eval's ``level=gain`` parameters (``spec_kind = "pairs"``)."""

    name: ClassVar[str]  # declared here for the type checker; set by the metric class (evalkit.metrics.base.Metric)
    spec_kind: ClassVar[str | None] = "pairs"  # the type of Metric.spec_kind, which this overrides
    pairs: list[tuple[str, float]] = []

    pair_names: tuple[str, ...] = ()  # names besides levels (rbp: p)

    def configure(self, spec: str) -> None:
        self.pairs = parse_pairs(spec, self.name, self.pair_names)
        if any(_valid_int(name) and int(name) == UNJUDGED for name, _ in self.pairs):
            self.needs_pool = True  # a gain for documents in the pool but not judged: their ranks are needed

    def spec_values(self) -> list[tuple[str, float]]:
        return pair_values(self.pairs)

    def table_for(self, ranked: RankedList) -> list[GainLevel]:
        """The query's gain table (``setup_gains``)."""
        return gain_table(self.pairs, *level_counts(ranked.judgments))


def position_gains(ranked: RankedList, table: list[GainLevel]) -> list[tuple[int, float]]:
    """``(0-based position, gain)`` of the list's documents whose gain is not 0, by position.

    Judged documents take their level's gain; documents in the pool but not
    judged take level -2's and the others level -1's, which are 0 unless a
    parameter names them (then every position of the list is visited).
    """
    at = {pos: gain_of(relevance, table) for pos, relevance in ranked.relevance_at().items()}
    outside = gain_of(float(NONPOOL), table)
    if outside != 0.0:
        at = {pos: at.get(pos, outside) for pos in range(ranked.length)}
    return sorted((pos, gain) for pos, gain in at.items() if gain != 0.0 and pos < ranked.length)
