"""evalkit: exact, validated scoring and comparison for retrieval shared tasks.

The Python API (:mod:`evalkit.api`) is re-exported here lazily, so
``import evalkit`` and the command line start quickly::

    import evalkit
    result = evalkit.score("run.trec", "qrels.txt", metrics="ndcg@10")
    result.official, result.per_query

Heavy modules (ranx, torch, transformers, pandas) are imported only by the
features that need them.
"""
from __future__ import annotations

from typing import Any

from evalkit._version import __version__

_API = ("score", "compare", "fuse", "read_run", "read_qrels", "as_run", "as_qrels", "ScoreResult", "CompareResult")
_DATA = ("Run", "Qrels")
_ELSEWHERE = {  # name -> the module that holds it
    "write_report": "evalkit.api.report",
    "ReportResult": "evalkit.api.report",
    "ScoringOptions": "evalkit.core.options",
    # the pipeline wing's door: running pipelines, and the contracts plugins implement (docs/plugins.md)
    **{name: "evalkit.pipelines" for name in (
        "run_pipeline", "load_pipeline", "PipelineResult", "Retriever", "Reranker", "Labeler", "option", "register_system",
        "load_system", "Engine", "Work", "LOCAL",
    )},
    "validate": "evalkit.tasks.submissions",
    "write_submission": "evalkit.tasks.submissions",
    "pool": "evalkit.api.judging",
    "PoolResult": "evalkit.api.judging",
    "reuse": "evalkit.api.judging",
    # the organiser's paper and the next edition (docs/guide/overview-paper.md, reproducibility.md, topic-set-size.md)
    "repro": "evalkit.report.reproduction",
    "Reproduction": "evalkit.report.reproduction",
    "write_overview": "evalkit.report.overview",
    "topics_needed": "evalkit.report.topic_design",
    "ReuseResult": "evalkit.api.judging",
    "judge": "evalkit.api.judge",
    "JudgeResult": "evalkit.api.judge",
    "agreement": "evalkit.api.agreement",
    "AgreementResult": "evalkit.api.agreement",
}

__all__ = ["__version__", *_API, *_DATA, *_ELSEWHERE]


def __getattr__(name: str) -> Any:
    if name in _API:
        from evalkit import api

        return getattr(api, name)
    if name in _DATA:
        from evalkit import data

        return getattr(data, name)
    if name in _ELSEWHERE:
        import importlib

        return getattr(importlib.import_module(_ELSEWHERE[name]), name)
    raise AttributeError(f"module 'evalkit' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
