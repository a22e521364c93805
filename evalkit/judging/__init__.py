"""The organiser's judgments: pools for assessors, judging sheets, and the reusability of the judgments.

* :mod:`evalkit.judging.groups` -- which group (team) a run belongs to.
* :mod:`evalkit.judging.pool` -- the depth-k pool, who contributed what.
* :mod:`evalkit.judging.sheet` -- the pool as a judging sheet (read back by :mod:`evalkit.formats.judging_sheet`).
* :mod:`evalkit.judging.reuse` -- the leave-one-group-out test of the judgments.
* :mod:`evalkit.judging.api` -- :func:`pool` and :func:`reuse`, re-exported by ``import evalkit``.
"""
