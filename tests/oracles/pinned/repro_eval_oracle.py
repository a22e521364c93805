"""Run inside a virtual environment holding repro-eval 0.5.0 (and pandas < 3): print its measures as JSON.

``python repro_eval_oracle.py QRELS B A B2 A2 [QRELS2]``: RpdEvaluator (no QRELS2) or RplEvaluator. Never imported by evalkit.
"""
import json
import sys

from repro_eval.Evaluator import RplEvaluator, RpdEvaluator

MEASURES = ("AP", "nDCG", "P@10", "RR")


def main(argv):
    qrels, b, a, b2, a2 = argv[:5]
    kwargs = dict(qrels_orig_path=qrels, run_b_orig_path=b, run_a_orig_path=a, run_b_rep_path=b2, run_a_rep_path=a2)
    if len(argv) > 5:
        evaluator = RplEvaluator(qrels_rpl_path=argv[5], **kwargs)
    else:
        evaluator = RpdEvaluator(**kwargs)
    evaluator.trim()
    evaluator.evaluate()
    out = {"er": evaluator.er(), "dri": evaluator.dri(), "ttest": evaluator.ttest()}
    if len(argv) == 5:
        out["ktu"] = evaluator.ktu(per_topic=True)
        out["rbo"] = evaluator.rbo(per_topic=True)
        out["rmse"] = evaluator.rmse()
    keep = lambda d: {m: d[m] for m in MEASURES}  # noqa: E731
    out["er"], out["dri"] = keep(out["er"]), keep(out["dri"])
    out["ttest"] = {side: keep(v) for side, v in out["ttest"].items()}
    if "rmse" in out:
        out["rmse"] = {side: keep(v) for side, v in out["rmse"].items()}
    print(json.dumps(out))




def crashes(argv):
    """``--crashes QRELS B A B2 A2``: which of the package's measures raise, and what (JSON)."""
    qrels, b, a, b2, a2 = argv[:5]
    evaluator = RpdEvaluator(qrels_orig_path=qrels, run_b_orig_path=b, run_a_orig_path=a, run_b_rep_path=b2, run_a_rep_path=a2)
    evaluator.trim()
    evaluator.evaluate()
    out = {}
    for measure in ("ktu", "rbo", "rmse", "er", "dri", "ttest"):
        try:
            getattr(evaluator, measure)()
            out[measure] = None
        except Exception as exc:  # what a user of the package meets
            out[measure] = type(exc).__name__
    print(json.dumps(out))


if __name__ == "__main__":
    crashes(sys.argv[2:]) if sys.argv[1] == "--crashes" else main(sys.argv[1:])
