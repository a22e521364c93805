"""The evaluation profiles evalkit ships: the official scoring of the standard benchmarks.

Each is a :class:`~evalkit.tasks.profiles.base.ProfileTask`, registered through
the ``evalkit.tasks`` entry points as every task is; its ``sources`` say where
its definition comes from (the track overview or the dataset's documentation,
and ir_datasets' ``official_measures`` where it lists them).
"""
from __future__ import annotations

from typing import ClassVar

from evalkit.tasks import register
from evalkit.tasks.profiles.base import ProfileTask

IRDS_DOCS = "ir_datasets documentation (ir-datasets.com), official_measures of {}"
DL_2019 = "Craswell, Mitra, Yilmaz, Campos, Voorhees: Overview of the TREC 2019 Deep Learning Track, TREC 2019 (arXiv:2003.07820)"
DL_2020 = "Craswell, Mitra, Yilmaz, Campos: Overview of the TREC 2020 Deep Learning Track, TREC 2020 (arXiv:2102.07662)"
BEIR = ("Thakur, Reimers, Rücklé, Srivastava, Gurevych: BEIR: A Heterogeneous Benchmark for Zero-shot Evaluation of "
        "Information Retrieval Models, NeurIPS Datasets and Benchmarks 2021 (arXiv:2104.08663): nDCG@10, Recall@100")
BEIR_CODE = ("BEIR's evaluation code (beir.retrieval.evaluation.EvaluateRetrieval.evaluate, ignore_identical_ids=True by "
             "default): a document whose id is its query's id is dropped from that query's ranking")
MARCO = ("Bajaj et al.: MS MARCO: A Human Generated MAchine Reading COmprehension Dataset (arXiv:1611.09268); the official "
         "ms_marco_eval.py scores MRR over the top 10 (MaxMRRRank = 10)")
COVID = ("Voorhees, Alam, Bedrick, Demner-Fushman, Hersh, Lo, Roberts, Soboroff, Wang: TREC-COVID: Constructing a Pandemic "
         "Information Retrieval Test Collection, SIGIR Forum 54(1) 2020 (arXiv:2005.04474); the rounds' official measures: "
         "nDCG@10 (primary), P@5, bpref, MAP, judged@10; runs of up to 1000 documents per topic")


@register
class TrecDl2019Passage(ProfileTask):
    """TREC 2019 Deep Learning, passage ranking: graded 0-3; binary measures count grade 2 and above."""

    name = "trec-dl-2019-passage"
    description = "TREC DL 2019 passage ranking (nDCG@10; RR, AP and R@1000 at relevance level 2)"
    measures = "ndcg@10 mrr(rel=2) map(rel=2) recall(rel=2)@1000"
    depth = 1000
    dataset_ids = ("msmarco-passage/trec-dl-2019", "msmarco-passage/trec-dl-2019/*")
    sources = (DL_2019, IRDS_DOCS.format("msmarco-passage/trec-dl-2019: nDCG@10, RR(rel=2), AP(rel=2)"))


@register
class TrecDl2020Passage(TrecDl2019Passage):
    """TREC 2020 Deep Learning, passage ranking: graded 0-3; binary measures count grade 2 and above."""

    name = "trec-dl-2020-passage"
    description = "TREC DL 2020 passage ranking (nDCG@10; RR, AP and R@1000 at relevance level 2)"
    dataset_ids = ("msmarco-passage/trec-dl-2020", "msmarco-passage/trec-dl-2020/*")
    sources = (DL_2020, IRDS_DOCS.format("msmarco-passage/trec-dl-2020: nDCG@10, RR(rel=2), AP(rel=2)"))


@register
class TrecDl2019Document(ProfileTask):
    """TREC 2019 Deep Learning, document ranking: graded 0-3; binary measures count grade 1 and above; 100 per topic."""

    name = "trec-dl-2019-document"
    description = "TREC DL 2019 document ranking (nDCG@10, RR, MAP, R@100 at relevance level 1; the top 100)"
    measures = "ndcg@10 mrr map recall@100"
    depth = 100
    dataset_ids = ("msmarco-document/trec-dl-2019", "msmarco-document/trec-dl-2019/*")
    sources = (DL_2019, IRDS_DOCS.format("msmarco-document/trec-dl-2019: nDCG@10, RR, MAP"))


@register
class TrecDl2020Document(TrecDl2019Document):
    """TREC 2020 Deep Learning, document ranking: graded 0-3; binary measures count grade 1 and above; 100 per topic."""

    name = "trec-dl-2020-document"
    description = "TREC DL 2020 document ranking (nDCG@10, RR, MAP, R@100 at relevance level 1; the top 100)"
    dataset_ids = ("msmarco-document/trec-dl-2020", "msmarco-document/trec-dl-2020/*")
    sources = (DL_2020, IRDS_DOCS.format("msmarco-document/trec-dl-2020: nDCG@10, RR, MAP"))


@register
class MsMarcoPassageDev(ProfileTask):
    """MS MARCO passage ranking, dev: MRR@10, the reciprocal rank of the first relevant passage in the top 10."""

    name = "msmarco-passage-dev"
    description = "MS MARCO passage ranking dev (MRR@10; R@1000 beside it)"
    measures = "mrr@10 recall@1000"
    depth = 1000
    dataset_ids = ("msmarco-passage/dev", "msmarco-passage/dev/*")
    sources = (MARCO, IRDS_DOCS.format("msmarco-passage/dev/small: RR@10"))


@register
class Beir(ProfileTask):
    """A BEIR dataset: nDCG@10 (Recall@100 beside it), a query's own id removed from its ranking as BEIR's code does."""

    name = "beir"
    description = "BEIR datasets (nDCG@10, Recall@100; a document with its query's id removed, as BEIR's evaluation does)"
    measures = "ndcg@10 recall@100"
    depth = 1000
    exclude_self = True
    dataset_ids: ClassVar[tuple[str, ...]] = ("beir/*",)
    sources: ClassVar[tuple[str, ...]] = (BEIR, BEIR_CODE)


@register
class BeirCqaDupStack(Beir):
    """BEIR CQADupStack: the mean over its 12 StackExchange forums of each forum's mean (as BEIR reports it)."""

    name = "beir-cqadupstack"
    description = "BEIR CQADupStack (nDCG@10, Recall@100: the mean of the 12 forums' means)"
    subcollections = ("android", "english", "gaming", "gis", "mathematica", "physics", "programmers", "stats", "tex", "unix",
                      "webmasters", "wordpress")
    dataset_ids = ("beir/cqadupstack",)
    sources = (BEIR + "; CQADupStack is reported as the average over its 12 forums", BEIR_CODE,
               "evalkit reads irds:beir/cqadupstack as the union of beir/cqadupstack/<forum>, ids prefixed <forum>/")


@register
class TrecCovid(ProfileTask):
    """TREC-COVID (the complete collection over CORD-19): nDCG@10 first, P@5, bpref, MAP and judged@10; 1000 per topic."""

    name = "trec-covid"
    description = "TREC-COVID complete (nDCG@10, P@5, bpref, MAP, judged@10; the top 1000)"
    measures = "ndcg@10 p@5 bpref map judged@10"
    depth = 1000
    dataset_ids = ("cord19/trec-covid", "cord19/trec-covid/*", "cord19/fulltext/trec-covid")
    sources = (COVID,)
