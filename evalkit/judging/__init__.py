"""The organiser's judgments: pools for assessors, judging sheets, and the reusability of the judgments.

* :mod:`evalkit.judging.groups` -- which group (team) a run belongs to.
* :mod:`evalkit.judging.pool` -- the depth-k pool, who contributed what.
* :mod:`evalkit.judging.sheet` -- the pool as a judging sheet (read back by :mod:`evalkit.io.formats.judging_sheet`).
* :mod:`evalkit.judging.reuse` -- the leave-one-group-out test of the judgments.
* :mod:`evalkit.api.judging` -- :func:`pool` and :func:`reuse`, re-exported by ``import evalkit``.
* :mod:`evalkit.judging.prompt` -- the judging prompt file (UMBRELA by default) and how an LLM's answer is read.
* :mod:`evalkit.judging.journal` -- the append-only, fsynced journal that makes ``evalkit judge`` resumable.
* :mod:`evalkit.judging.llm_judge` -- an LLM grading a sheet's empty rows, with provenance.
* :mod:`evalkit.api.judge` -- :func:`~evalkit.api.judge.judge`, the API of ``evalkit judge``.
* :mod:`evalkit.judging.provenance` -- who judged each pair (sheet column, qrels sidecar), LLM@k of mixed gold.
* :mod:`evalkit.judging.agreement` -- two golds' agreement and their two leaderboards (kappa, alpha, tau, tau_AP, RBO, flips).
* :mod:`evalkit.api.agreement`, :mod:`evalkit.report.agreement_output` -- ``evalkit agreement``'s API and outputs.
"""
