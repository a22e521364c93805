"""Every trec_eval 10 measure and option, to the printed digit: values trec_eval 10 printed, held here, and the binary when present.

``tests/oracles/data/trec_eval10_cases.txt.gz`` holds, for random cases of
``tests/oracles/trec_eval_differential.py`` (the seed fixes the qrels, the run, the
flags and the measures on every machine), the lines the trec_eval 10 binary
(usnistgov/trec_eval 10.0, built from source with its Makefile) printed for
the command in each ``## seed N: trec_eval ...`` header. It was written by

    python tests/oracles/trec_eval_differential.py --binary PATH/trec_eval --seed 100 --cases 60 --record tests/oracles/data/trec_eval10_cases.txt.gz

and covers -c, -M, -l (0, 2, 3), -J, -N, -Z, -R qrels_jg and every measure
of ``all_trec`` plus yaap, dcg, ideal_dcg and the parameter forms. Where a
binary is at ``$EVALKIT_TREC_EVAL``, fresh random cases run against it too.
"""
from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest

import oracles.trec_eval_differential as differential

HELD = Path(__file__).parent / "data" / "trec_eval10_cases.txt.gz"
BINARY = os.environ.get("EVALKIT_TREC_EVAL", "")


def held_cases() -> dict[int, tuple[str, list[str]]]:
    cases: dict[int, tuple[str, list[str]]] = {}
    seed = None
    for line in gzip.open(HELD, "rt").read().splitlines():
        if line.startswith("## seed "):
            head, _, command = line[len("## seed "):].partition(": ")
            seed = int(head)
            cases[seed] = (command, [])
        else:
            cases[seed][1].append(line)
    return cases


CASES = held_cases()


@pytest.mark.parametrize("seed", sorted(CASES))
def test_held_trec_eval_10_output_is_reproduced_line_for_line(seed, tmp_path):
    command, theirs = CASES[seed]
    qrels, run, flags, measures = differential.case(seed, tmp_path)
    assert differential.command_of(flags, measures) == command  # the generator still makes the recorded case
    ours = differential.evalkit_lines(qrels, run, flags, measures)
    assert ours == theirs


def test_held_cases_cover_every_option_and_measure():
    commands = " ".join(command for command, _ in CASES.values())
    for flag in ("-c", "-M", "-l0", "-l2", "-J", "-N", "-Z", "-R qrels_jg"):
        assert flag in commands, flag
    names = {line.split("\t")[0].strip().lstrip("Z") for _, lines in CASES.values() for line in lines}
    for name in ("infAP", "G", "binG", "Rndcg", "ndcg_rel", "dcg", "ideal_dcg", "yaap", "rbp", "rbp_resid", "utility", "relstring",
                 "runid", "11pt_avg", "set_F", "gm_map", "gm_bpref", "map_avgjg", "P_avgjg_2", "Rprec_mult_avgjg_0.50", "Rprec_mult_0.20",
                 "utility_2,-1,0.5,0.25", "set_F_0.5", "11pt_avg_0.2,0.5,0.8", "ndcg_1=3,2=0.5", "rbp_p=0.7", "relstring_15"):
        assert name in names, name
    assert sum(len(lines) for _, lines in CASES.values()) > 5000


@pytest.mark.skipif(not Path(BINARY).is_file(), reason="no trec_eval binary at $EVALKIT_TREC_EVAL")
@pytest.mark.parametrize("seed", range(20_000, 20_040))
@pytest.mark.parametrize("grouped", [False, True])
def test_fresh_random_cases_against_the_binary(seed, grouped, tmp_path):
    values, differences, command = differential.run_case(BINARY, seed, tmp_path, grouped)
    assert not differences, command + "\n" + "\n".join(differences[:5])


@pytest.mark.parametrize("seed", sorted(CASES))
def test_held_output_is_reproduced_from_runs_read_against_their_gold(seed, tmp_path):
    """The held cases again, each run's lines grouped by query: read against the gold in one pass, not ranked whole."""
    from evalkit.io.reading import read_qrels, read_run
    from evalkit.io.prejudged import DeferredRun

    command, theirs = CASES[seed]
    qrels, run, flags, measures = differential.case(seed, tmp_path)
    differential.group_by_query(run)
    if "qrels_jg" not in flags:  # judgment groups score each group's qrels: the general reader's run
        assert isinstance(read_run(run, against=read_qrels(qrels)), DeferredRun)
    assert differential.evalkit_lines(qrels, run, flags, measures) == theirs
