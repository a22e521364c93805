"""The one place evalkit looks for its compiled kernels (``evalkit._native``, built from ``evalkit/_native_src/``).

``native`` is the extension module, or ``None`` where ``pip install`` had no C
compiler: every caller then takes its pure-Python twin, with the same
results. Callers read ``kernels.native`` when they run, so a test can switch
every kernel off at once by setting this one attribute.
"""
from __future__ import annotations

try:
    from evalkit import _native as native
except ImportError:  # built without a C compiler: the pure-Python twins
    native = None

COMPILED = native is not None
