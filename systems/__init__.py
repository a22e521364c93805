"""Built-in retrieval systems (installed as ``evalkit.systems``).

Each system is one module registering itself with the system registry; they
need the ``systems`` extra (``pip install 'evalkit-ir[systems]'``).
"""

from evalkit.core.progress import quiet_library_bars

quiet_library_bars()  # in a log (stderr not a terminal): no tqdm bars of the model libraries either
