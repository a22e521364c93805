"""Topic set size design (Sakai 2016) against R: power.t.test(type = "paired") and the noncentral-F power of a one-way ANOVA.

One Rscript process runs the whole grid of variances, differences, powers and alphas; the tests skip with the
reason where R is absent (.ci/run installs r-base-core). R solves power.t.test for a real n by uniroot (asked here
with tol = 1e-10); evalkit's topic set size is the smallest whole n whose power reaches the target, so it equals
ceiling(R's n), and its power function equals R's to 1e-9 at every n.
"""
from __future__ import annotations

import csv
import itertools
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from support.helpers import CT4B, GOLD_4B, shared_or_skip  # noqa: E402

from evalkit.cli import main  # noqa: E402
from evalkit.core.errors import UsageError  # noqa: E402
from evalkit.stats import topic_set_size as tss  # noqa: E402

R_MISSING = "R is not installed (Rscript not found; apt-get install r-base-core): the R oracle tests are skipped"
VARIANCES = (0.005, 0.02, 0.05, 0.1)
DIFFERENCES = (0.02, 0.05, 0.1, 0.2)
POWERS = (0.7, 0.8, 0.9)
ALPHAS = (0.01, 0.05, 0.1)
SYSTEMS = (2, 5, 20)
GRID = list(itertools.product(VARIANCES, DIFFERENCES, POWERS, ALPHAS))

R_SCRIPT = r"""
args <- commandArgs(trailingOnly = TRUE)
grid <- read.csv(file.path(args[1], "grid.csv"))
fmt <- function(x) sprintf("%.17g", x)
anova_power <- function(n, m, d, v, a) {
  df_a <- m - 1; df_e <- m * (n - 1)
  pf(qf(a, df_a, df_e, lower.tail = FALSE), df_a, df_e, ncp = n * d^2 / (2 * v), lower.tail = FALSE)
}
rows <- c("variance,difference,power,alpha,systems,t_n,t_power_at_20,anova_n,anova_power_at_20")
for (i in seq_len(nrow(grid))) {
  g <- grid[i, ]
  t_n <- power.t.test(delta = g$difference, sd = sqrt(g$variance), sig.level = g$alpha, power = g$power, type = "paired",
                      tol = 1e-10)$n
  t20 <- power.t.test(n = 20, delta = g$difference, sd = sqrt(g$variance), sig.level = g$alpha, type = "paired")$power
  n <- 2
  while (anova_power(n, g$systems, g$difference, g$variance, g$alpha) < g$power) n <- n + 1
  rows <- c(rows, paste(fmt(g$variance), fmt(g$difference), fmt(g$power), fmt(g$alpha), g$systems, fmt(t_n), fmt(t20), n,
                        fmt(anova_power(20, g$systems, g$difference, g$variance, g$alpha)), sep = ","))
}
writeLines(rows, file.path(args[1], "out.csv"))
"""


@pytest.fixture(scope="module")
def r_grid(tmp_path_factory):
    if shutil.which("Rscript") is None:
        pytest.skip(R_MISSING)
    folder = tmp_path_factory.mktemp("tss-r")
    with open(folder / "grid.csv", "w") as handle:
        handle.write("variance,difference,power,alpha,systems\n")
        for (v, d, p, a), m in zip(GRID, itertools.cycle(SYSTEMS)):
            handle.write(f"{v!r},{d!r},{p!r},{a!r},{m}\n")
    (folder / "oracle.R").write_text(R_SCRIPT)
    done = subprocess.run(["Rscript", "--vanilla", str(folder / "oracle.R"), str(folder)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    with open(folder / "out.csv") as handle:
        return list(csv.DictReader(handle))


def test_paired_t_topics_equal_power_t_test(r_grid):
    assert len(r_grid) == len(GRID)
    for row in r_grid:
        v, d, p, a = (float(row[k]) for k in ("variance", "difference", "power", "alpha"))
        r_n = float(row["t_n"])
        mine = tss.paired_t_topics(d, v, p, a)
        assert mine == math.ceil(r_n - 1e-7), row  # R's root to 1e-10: its ceiling is the smallest whole n
        assert tss.paired_t_power(r_n, d, v, a) == pytest.approx(p, abs=1e-7)  # R's n is where the power is reached
        assert tss.paired_t_power(20, d, v, a) == pytest.approx(float(row["t_power_at_20"]), abs=1e-9, rel=0)


def test_anova_topics_equal_the_noncentral_f_power(r_grid):
    for row in r_grid:
        v, d, p, a, m = (float(row[k]) for k in ("variance", "difference", "power", "alpha", "systems"))
        assert tss.anova_topics(int(m), d, v, p, a) == int(row["anova_n"]), row
        assert tss.anova_power(20, int(m), d, v, a) == pytest.approx(float(row["anova_power_at_20"]), abs=1e-9, rel=0)


def test_ci_topics_are_the_smallest_n_whose_expected_width_fits():
    for v, d, _, a in GRID:
        n = tss.ci_topics(d, v, a)
        assert tss.expected_ci_width(n, v, a) <= d
        assert n == 2 or tss.expected_ci_width(n - 1, v, a) > d
    # c(n) = E[s] / sigma by its definition, against a simulation
    rng = np.random.default_rng(3)
    samples = rng.normal(0, 1, size=(200_000, 10))
    c10 = math.sqrt(2 / 9) * math.exp(math.lgamma(5) - math.lgamma(4.5))
    assert samples.std(axis=1, ddof=1).mean() == pytest.approx(c10, abs=2e-3)


def test_sakai_worked_example_order_of_magnitude():
    """More power, a smaller difference, a larger variance or a stricter alpha never needs fewer topics."""
    base = tss.paired_t_topics(0.05, 0.02, 0.8, 0.05)
    assert tss.paired_t_topics(0.05, 0.02, 0.9, 0.05) >= base
    assert tss.paired_t_topics(0.04, 0.02, 0.8, 0.05) >= base
    assert tss.paired_t_topics(0.05, 0.03, 0.8, 0.05) >= base
    assert tss.paired_t_topics(0.05, 0.02, 0.8, 0.01) >= base
    assert tss.anova_topics(10, 0.05, 0.02) >= tss.anova_topics(2, 0.05, 0.02)


def test_bad_design_inputs_are_one_line():
    for call in (lambda: tss.paired_t_topics(0, 0.02), lambda: tss.paired_t_topics(0.05, 0), lambda: tss.paired_t_topics(0.05, 0.02, 1.0),
                 lambda: tss.anova_topics(1, 0.05, 0.02), lambda: tss.ci_topics(0.05, 0.02, alpha=0),
                 lambda: tss.paired_t_topics(1e-9, 10.0)):
        with pytest.raises(UsageError):
            call()


def test_achieved_power_and_variances():
    a = np.array([0.5, 0.75, 1.0, 0.25, 0.5, 1.0])
    b = np.array([0.25, 0.5, 1.0, 0.25, 0.0, 0.5])
    d = a - b
    assert tss.paired_variance(a, b) == pytest.approx(np.var(d, ddof=1))
    assert tss.achieved_power(a, b) == pytest.approx(tss.paired_t_power(6, d.mean(), d.var(ddof=1)))
    assert tss.achieved_power(a, a) == 0.05
    matrix = np.vstack([a, b, (a + b) / 2])
    from evalkit.stats.anova import two_way_anova

    assert tss.residual_variance(matrix) == two_way_anova(matrix).residual_variance


@pytest.mark.realdata
def test_cli_on_the_real_4b_test_runs(tmp_path):
    runs, gold = shared_or_skip(CT4B / "runs"), shared_or_skip(GOLD_4B["test"])
    out = tmp_path / "design.json"
    assert main(["topics-needed", str(runs), "--gold", str(gold), "--glob", "*_test*", "-d", "0.05", "-d", "0.1", "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["metric"] == "MRR@5" and data["topics"] == 1446 and data["systems"] == 19
    assert [r["difference"] for r in data["needed"]] == [0.05, 0.1]
    first = data["needed"][0]
    assert first["paired_t_test"] == tss.paired_t_topics(0.05, data["paired_variance"])
    assert first["anova"] == tss.anova_topics(19, 0.05, data["residual_variance"])
    assert data["paired_variance"] == 2 * data["residual_variance"]
    assert len(data["achieved_power"]) == 18 and all(0 < p["power"] <= 1 for p in data["achieved_power"])
    assert data["manifest"]["command"] == "topics-needed"
    out2 = tmp_path / "pair.md"
    assert main(["topics-needed", str(runs), "--gold", str(gold), "--glob", "*_test*", "--pair", "1", "2", "--out", str(out2)]) == 0
    assert "paired variance" in out2.read_text()
