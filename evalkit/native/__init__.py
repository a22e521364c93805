"""The compiled kernels behind one typed door (:mod:`evalkit.native.kernels`), each with a pure-Python twin; C
sources in ``csrc/``."""
