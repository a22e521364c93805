"""evalkit: exact, validated scoring and comparison for retrieval shared tasks.

Heavy modules (ranx, torch, transformers, pandas) are imported lazily by the
features that need them, so ``import evalkit`` and the CLI start quickly.
"""
from evalkit._version import __version__

__all__ = ["__version__"]
