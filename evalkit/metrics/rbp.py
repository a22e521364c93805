"""Rank-biased precision and its residual."""
from __future__ import annotations

import numpy as np

from evalkit.metrics import register
from evalkit.metrics.base import Judged, Metric
from evalkit.metrics.gains import GainParams, gain_of, gain_table, pair_values
from evalkit.metrics.ranked_lists import level_counts, ranked_lists
from evalkit.metrics.parameters import GAIN, Param

DEFAULT_P = 0.9
PERSISTENCE = Param("p", "persistence: the chance that the user reads on to the next document", low=0, high=1, high_open=True,
                    default="0.9", spelling="rbp(p=0.8); rbp.p=0.8")


def persistence(pairs: list[tuple[str, float]]) -> float:
    """The ``p=`` parameter (the last one given, as trec_eval reads it); 0.9 by default."""
    return next((value for name, value in reversed(pairs) if name == "p"), DEFAULT_P)


def discounts(p: float, n: int) -> np.ndarray:
    """``p ** i`` for i = 0..n, each from the one before by one multiplication (trec_eval's ``cur_p = cur_p * p``)."""
    return np.cumprod(np.r_[1.0, np.full(n, p)])


@register
class RBP(GainParams, Metric):
    """RBP(q) = (1 - p) * sum over retrieved documents at rank i of gain * p^(i-1) (default p = 0.9).

    A user reads down the list and goes on with probability p. Gains are the
    grades (or a table, ``rbp(p=0.8,1=3)``, trec_eval ``rbp.p=0.8,1=3``)
    scaled into [0, 1] when some gain lies outside it: (g - min) / (max - min)
    over the table and 0 (trec_eval 10 leaves min and max unset; its builds
    behave as if they start at 0). Reference: Moffat and Zobel, "Rank-Biased
    Precision for Measurement of Retrieval Effectiveness", TOIS 27(1), 2008.
    """

    name = "rbp"
    cutoff = "none"
    params = ()
    pair_names = ("p",)
    trec = ("rbp", None)
    parameters = (PERSISTENCE, GAIN)

    def per_query(self, judged: Judged) -> np.ndarray:
        p = persistence(self.pairs)
        out = np.zeros(judged.n_queries)
        for q, ranked in enumerate(ranked_lists(judged)):
            table = gain_table(self.pairs, *level_counts(ranked.judgments))
            low = min([0.0] + [entry.gain for entry in table])
            high = max([0.0] + [entry.gain for entry in table])
            if low < 0 or high > 1:
                for entry in table:
                    entry.gain = (entry.gain - low) / (high - low)
            relevance = ranked.relevance_at()
            outside = gain_of(-1.0, table)
            positions = range(ranked.length) if outside != 0.0 else sorted(relevance)
            weights = discounts(p, max(positions, default=0))
            total = 0.0
            for pos in positions:
                gain = gain_of(relevance.get(pos, -1.0), table)
                if gain != 0:
                    total += gain * float(weights[pos])
            out[q] = (1.0 - p) * total
        return out


@register
class RBPResidual(Metric):
    """rbp_resid(q) = p^n + (1 - p) * sum over unjudged retrieved documents at rank i of p^(i-1) (n = documents retrieved).

    How much RBP could still rise if every unjudged document retrieved were
    fully relevant and the list went on relevant (Moffat and Zobel 2008);
    0 when nothing retrieved is unjudged. trec_eval ``rbp_resid``
    (``rbp_resid.p=0.8``); a query the run does not answer scores 0.
    """

    name = "rbp_resid"
    aliases = ("rbp_residual",)
    cutoff = "none"
    params = ()
    spec_kind = "pairs"
    trec = ("rbp_resid", None)
    parameters = (PERSISTENCE,)

    def configure(self, spec: str) -> None:
        from evalkit.metrics.gains import parse_pairs

        self.pairs = parse_pairs(spec, self.name, ("p",))

    def spec_values(self) -> list[tuple[str, float]]:
        return pair_values(getattr(self, "pairs", []))

    def per_query(self, judged: Judged) -> np.ndarray:
        p = persistence(getattr(self, "pairs", []))
        lengths = judged.list_length().astype(np.int64)
        weights = discounts(p, int(lengths.max(initial=0)))
        # every position of every list, less the judged ones; summed per query one after the other (bincount)
        query = np.repeat(np.arange(judged.n_queries), lengths)
        starts = np.cumsum(lengths) - lengths
        position = np.arange(len(query)) - np.repeat(starts, lengths)
        unjudged = np.ones(len(query), dtype=bool)
        unjudged[starts[judged.qpos] + judged.rank - 1] = False
        total = np.bincount(query[unjudged], weights=weights[position[unjudged]], minlength=judged.n_queries)
        count = np.bincount(query[unjudged], minlength=judged.n_queries)
        value = weights[lengths] + (1 - p) * total
        answered = judged.in_run | (self.spec is not None)  # trec_eval zeroes the placeholder list only under the plain name
        return np.where((count > 0) & answered, value, 0.0)
