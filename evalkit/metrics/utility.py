"""Set utility: a weighted count of the retrieved and missed documents."""
from __future__ import annotations

import numpy as np

from evalkit.core.errors import UsageError
from evalkit.metrics import register
from evalkit.metrics.base import Judged, Metric
from evalkit.metrics.trec_names import c_values
from evalkit.metrics.parameters import MAX_WEIGHT, REL, Param

COEFFICIENTS = tuple(Param(f"p{i}", f"weight of {what}", bound=MAX_WEIGHT, default=default,
                           spelling="utility(1,-1,0,0); utility.1,-1,0,0")
                     for i, (what, default) in enumerate((("a, relevant retrieved", "1"), ("b, retrieved not relevant", "-1"),
                                                         ("c, relevant not retrieved", "0"), ("d, neither", "0")), start=1))


@register
class Utility(Metric):
    """utility(q) = p1 a + p2 b + p3 c + p4 d (default p = 1, -1, 0, 0: relevant retrieved minus non-relevant retrieved).

    a = relevant retrieved, b = retrieved not relevant, c = relevant not
    retrieved, d = N + a - retrieved - R, the documents neither retrieved nor
    relevant (N = collection size, trec_eval ``-N``, evalkit ``num_docs``,
    default 0). trec_eval ``utility`` (``utility.2,-1,0,0`` sets p1..p4),
    summarised as the mean over queries as trec_eval does. A query the run
    does not answer (``--missing zero``, trec_eval ``-c``) scores 0 with the
    default coefficients; with others trec_eval scores its placeholder list of
    one unjudged document (b = 1), and so does evalkit.
    """

    name = "utility"
    cutoff = "none"
    spec_kind = "values"
    trec = ("utility", None)
    parameters = (REL, *COEFFICIENTS)

    def configure(self, spec: str) -> None:
        self.coefficients = c_values(spec, self.name)
        if len(self.coefficients) != 4:
            raise UsageError(f"metric utility({spec}): give four coefficients p1,p2,p3,p4 (trec_eval: utility.1,-1,0,0)")

    def spec_values(self) -> list[tuple[str, float]]:
        return [(f"p{i}", value) for i, value in enumerate(self.coefficients, start=1)]

    def per_query(self, judged: Judged) -> np.ndarray:
        p1, p2, p3, p4 = getattr(self, "coefficients", (1.0, -1.0, 0.0, 0.0))
        hits = judged.per_query_count(judged.relevant)
        retrieved, relevant = judged.list_length(), judged.num_rel
        value = p1 * hits + p2 * (retrieved - hits) + p3 * (relevant - hits) + p4 * (judged.num_docs + hits - retrieved - relevant)
        # trec_eval zeroes its placeholder list's value for the measure named exactly "utility" (default coefficients)
        return value if self.spec is not None else np.where(judged.in_run, value, 0.0)
