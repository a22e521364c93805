"""Kept so that plugins written as ``from evalkit.stages import Reranker, option`` go on importing.

The stage contracts live in :mod:`evalkit.pipelines.stages`; new code imports
them from ``evalkit`` (``from evalkit import Reranker, option``) or from
:mod:`evalkit.pipelines` (docs/plugins.md).
"""
from evalkit.pipelines.stages import *  # noqa: F401,F403
from evalkit.pipelines.stages import __all__  # noqa: F401
