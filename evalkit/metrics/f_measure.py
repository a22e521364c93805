"""F1: the harmonic mean of precision and recall."""
from __future__ import annotations

import numpy as np

from evalkit.metrics import register
from evalkit.metrics.base import Judged, Metric, _number, safe_divide
from evalkit.metrics.trec_names import c_values
from evalkit.metrics.parameters import RANK_CUTOFF, REL, Param

BETA = Param("beta", "weight of recall against precision, F = (beta + 1) P R / (beta P + R) (trec_eval set_F.x)", low=0,
             default="1 (F1)", spelling="F(beta=2); set_F.2")


@register
class F1(Metric):
    """F1@k(q) = 2 P R / (P + R) = 2 |rel in top k| / (k + R); 0 when nothing relevant is retrieved.

    P and R are P@k (divided by k, as trec_eval ``P_k`` and ranx ``precision@k``)
    and Recall@k: ranx ``f1@k``. Without k, P and R are over the whole list:
    trec_eval ``set_F``, ir_measures ``SetF``, computed as trec_eval does
    (P and R first, then (x + 1) P R / (x P + R)), which can differ from
    2 |rel ret| / (|ret| + R) in the last bit. ``F(beta=x)`` (trec_eval
    ``set_F.x``, ir_measures ``SetF(beta=x)``) weighs R against P with x as
    those tools do: the textbook F_b has x = b squared.
    Reference: van Rijsbergen, Information Retrieval (1979), ch. 7.
    """

    name = "F1"
    aliases = ("f1", "f", "f_measure", "f1_score")
    set_aliases = ("set_f", "setf")
    params = ("rel", "beta")
    spec_kind = "values"
    trec = ("set_F", None)
    ir_measures = ("SetF",)
    ranx = ("f1@k",)
    parameters = (RANK_CUTOFF, REL, BETA)

    def configure(self, spec: str) -> None:
        """trec_eval's ``set_F.x``: x weighs recall against precision (ir_measures' ``beta``)."""
        self.options["beta"] = c_values(spec, "set_F")[0]
        self.trec_text, self.spec = spec, None  # the label shows beta; trec_eval's name keeps the text as typed

    @property
    def label(self) -> str:
        text = super().label
        return text.replace("F1(", "F(", 1) if "beta" in self.options else text

    def trec_spec(self) -> str | None:
        if "beta" not in self.options:
            return None
        return getattr(self, "trec_text", None) or _number(self.options["beta"])

    def per_query(self, judged: Judged) -> np.ndarray:
        hits = judged.per_query_count(judged.relevant & self.within_cutoff(judged))
        x = self.options.get("beta")
        if self.k is not None and x is None:
            return safe_divide(2 * hits, float(self.k) + judged.num_rel)
        # trec_eval's set_F, in its floating-point order: P and R first, then (x + 1) P R / (x P + R)
        retrieved = judged.num_ret if self.k is None else np.full(judged.n_queries, float(self.k))
        precision, recall = safe_divide(hits, retrieved), safe_divide(hits, judged.num_rel)
        x = 1.0 if x is None else x
        with np.errstate(divide="ignore", invalid="ignore"):
            value = (x + 1.0) * precision * recall / (x * precision + recall)
        return np.where(hits > 0, value, 0.0)
