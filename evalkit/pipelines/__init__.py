"""The pipeline runtime: systems chained into stages from a TOML config, run where the engine says.

One door for the wing: everything a caller needs is importable from here
(imported on first use, so ``import evalkit.pipelines`` loads no model code):

* the stage contracts plugins implement -- :class:`Retriever`, :class:`Reranker`,
  :class:`Labeler`, :func:`option` (:mod:`.stages`; the shared plumbing in :mod:`.plumbing`);
* the system registry -- :func:`register_system`, :func:`get_system_class`,
  :func:`load_system` (:mod:`.registry`, entry points ``evalkit.systems``);
* configs -- :func:`load_config`, :func:`parse_config`, :func:`shipped_configs` (:mod:`.config`);
* running -- :class:`Pipeline` (:mod:`.runner`), :func:`run_pipeline`,
  :func:`load_pipeline`, :class:`PipelineResult` (:mod:`.run`);
* where model work runs -- :class:`Engine`, :class:`Work`, :func:`get_engine`
  (:mod:`.engine`; Ray in :mod:`.ray_engine`), handed to every stage call.

The wing uses the scoring core (to read inputs and score what it made);
the scoring core never imports it.
"""
from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "stages": ("Labeler", "NoOptions", "Reranker", "Retriever", "System", "option", "option_fields"),
    "plumbing": ("Candidates",),
    "registry": ("get_system_class", "load_system", "register_system", "system_names"),
    "config": ("PipelineConfig", "StageSpec", "load_config", "parse_config", "shipped_configs"),
    "runner": ("Pipeline",),
    "run": ("PipelineResult", "get_engine", "load_pipeline", "run_pipeline"),
    "engine": ("LOCAL", "Engine", "EngineOptions", "Work"),
}
_HOME = {name: module for module, names in _EXPORTS.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module 'evalkit.pipelines' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"evalkit.pipelines.{module}"), name)
    globals()[name] = value
    return value


__all__ = sorted(_HOME)
