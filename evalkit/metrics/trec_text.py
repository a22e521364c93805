"""trec_eval's two measures that are text: ``runid`` and ``relstring``."""
from __future__ import annotations

import numpy as np

from evalkit.metrics import register
from evalkit.metrics.base import Judged, Metric
from evalkit.metrics.ranked_lists import ranked_lists
from evalkit.metrics.parameters import Param
from evalkit.metrics.trec_names import c_number


@register
class RunId(Metric):
    """runid: the run tag of the run file (its last line's, as trec_eval reads it), printed once for ``all``.

    trec_eval ``runid``; text, so printed by ``--output trec_eval`` only.
    """

    name = "runid"
    cutoff = "none"
    params = ()
    text = True
    summary_only = True
    trec = ("runid", None)
    parameters = ()

    def per_query(self, judged: Judged) -> np.ndarray:
        return np.full(judged.n_queries, "", dtype=object)

LENGTH = Param("length", "documents shown: the first N of the list", integer=True, low=0, high=1e9, default="10",
               spelling="relstring(20); relstring.20")


@register
class RelString(Metric):
    """relstring(q): the relevance of the first N retrieved documents (default 10), one character each.

    A grade 0-9 is printed as its digit, above 9 as ``>``; a document
    outside the qrels ``-``, one judged with a negative grade (in the pool,
    not judged) ``.``. A query the run does not answer has the empty string.
    trec_eval ``relstring`` (``relstring.20``: N = 20); per query only, text,
    printed by ``--output trec_eval`` only.
    """

    name = "relstring"
    cutoff = "none"
    params = ()
    spec_kind = "values"
    text = True
    needs_pool = True
    trec = ("relstring", None)
    parameters = (LENGTH,)

    def configure(self, spec: str) -> None:
        self.length = c_number(spec.split(",")[0], self.name, spec)

    def spec_values(self) -> list[tuple[str, float]]:
        return [("length", self.length)]

    def per_query(self, judged: Judged) -> np.ndarray:
        wanted = int(getattr(self, "length", 10))
        out = np.full(judged.n_queries, "", dtype=object)
        for q, ranked in enumerate(ranked_lists(judged)):
            if not judged.in_run[q] and self.spec is None:
                continue  # trec_eval clears the string of its placeholder list (under the plain name only)
            chars = ["-"] * max(0, min(wanted, ranked.length))
            for rank, grade in zip(ranked.ranks.tolist(), ranked.grades.tolist()):
                if rank <= len(chars):
                    chars[rank - 1] = ">" if grade > 9 else str(int(grade))
            for rank in ranked.pool_ranks.tolist():
                if rank <= len(chars):
                    chars[rank - 1] = "."
            out[q] = "".join(chars)
        return out
