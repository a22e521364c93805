"""Evaluation profiles: the official way each standard benchmark is scored (see :mod:`evalkit.tasks.profiles.base`).

A profile is a task (``evalkit tasks`` and ``evalkit profiles`` list them), so
it is chosen exactly as a task is: by name with ``--task``, or with ``--task
auto`` from the gold, here from an ``irds:`` dataset id (the most specific
``dataset_ids`` pattern wins). Write your own as a class (subclass
:class:`ProfileTask`, register it through the ``evalkit.tasks`` entry points as
any task plugin) or as a TOML file given with ``--task FILE.toml``
(:mod:`evalkit.tasks.profiles.toml_file`).
"""
from __future__ import annotations

from evalkit.tasks.profiles.base import ProfileTask, macro_mean, profile_for_dataset, without_self_matches

__all__ = ["ProfileTask", "macro_mean", "profile_for_dataset", "without_self_matches"]
