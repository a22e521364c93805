"""Built-in retrieval systems (installed as ``evalkit.systems``).

Each system is one module registering itself with the system registry; they
need the ``systems`` extra (``pip install 'evalkit-ir[systems]'``).
"""
