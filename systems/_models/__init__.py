"""Model plumbing shared by the built-in systems (devices, precision, model loading, LLM backends).

Lives beside the systems, not in evalkit's core: the scoring core imports no
model library (``tests/test_layers.py``).
"""
