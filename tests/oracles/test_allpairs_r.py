"""All-pairs statistics against R as the oracle: TukeyHSD(aov(score ~ system + topic)), summary(aov), p.adjust, ptukey, qtukey.

One Rscript process per fixture runs every case. The tests skip with the reason where R is absent (.ci/run
installs r-base-core). Agreement is asserted to 1e-9 (the issue asks 1e-6): evalkit's studentized range is R's
algorithm (AS 190 / Copenhaver & Holland), its switch to the infinite-df form above 25,000 df included.
R's aov fits a dense QR of (runs x queries) x (runs + queries): minutes for the 19 real 4b runs x 1,446 queries
(2.8 min for aov, 5.7 min more for TukeyHSD here). So TukeyHSD(aov(...)) itself runs on every case up to 4,000
scores, and on every case R also computes TukeyHSD's arithmetic on the balanced layout directly (means, the
additive model's residuals, qtukey, ptukey): held equal to TukeyHSD(aov(...)) to 1e-12 where both run, it is the
oracle of the big cases (20 runs x 1,400 queries past 25,000 df, the real runs).
"""
from __future__ import annotations

import csv
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from support.helpers import CT4B, GOLD_4B, shared_or_skip

from evalkit.stats.anova import two_way_anova
from evalkit.stats.correction import adjust
from evalkit.stats.studentized_range import ptukey_upper, qtukey
from evalkit.stats.tukey import tukey_hsd

TOLERANCE = 1e-9
R_MISSING = "R is not installed (Rscript not found; apt-get install r-base-core): the R oracle tests are skipped"

R_SCRIPT = r"""
args <- commandArgs(trailingOnly = TRUE)
dir <- args[1]
fmt <- function(x) sprintf("%.17g", x)
put <- function(frame, name) write.csv(frame, file.path(dir, name), row.names = FALSE, quote = FALSE)
# TukeyHSD.aov's own arithmetic on the balanced two-way layout without fitting the model: what R's aov + TukeyHSD
# take minutes to give for 19 runs x 1,446 queries (a dense 27,474 x 1,465 QR). Held equal to TukeyHSD(aov(...))
# on every case small enough to fit.
tukey_formula <- function(m, alpha) {
  k <- nrow(m); n <- ncol(m)
  means <- rowMeans(m)
  res <- m - outer(means, rep(1, n)) - outer(rep(1, k), colMeans(m)) + mean(m)
  df <- (k - 1) * (n - 1)
  mse <- sum(res^2) / df
  center <- outer(means, means, "-"); keep <- lower.tri(center); center <- center[keep]
  se <- sqrt((mse / 2) * outer(rep(1 / n, k), rep(1 / n, k), "+"))[keep]
  width <- qtukey(1 - alpha, k, df) * se
  est <- center / se
  nms <- paste0("s", 1:k)
  list(tk = cbind(diff = center, lwr = center - width, upr = center + width, "p adj" = ptukey(abs(est), k, df, lower.tail = FALSE)),
       pairs = outer(nms, nms, paste, sep = "-")[keep], mse = mse, df = df, n = n, k = k, res = res, means = means, m = m)
}
anova_formula <- function(f) {
  ss <- c(f$n * sum((f$means - mean(f$m))^2), f$k * sum((colMeans(f$m) - mean(f$m))^2), sum(f$res^2))
  df <- c(f$k - 1, f$n - 1, f$df)
  ms <- ss / df
  fv <- c(ms[1:2] / ms[3], NA)
  list(Df = df, "Sum Sq" = ss, "Mean Sq" = ms, "F value" = fv, "Pr(>F)" = c(pf(fv[1:2], df[1:2], df[3], lower.tail = FALSE), NA))
}
write_case <- function(name, tk, pairs, mse, df, n, s) {
  lsd <- 2 * pt(-abs(tk[, "diff"] / sqrt(mse / n)) / sqrt(2), df)
  put(data.frame(pair = pairs, diff = fmt(tk[, "diff"]), lwr = fmt(tk[, "lwr"]), upr = fmt(tk[, "upr"]),
                 padj = fmt(tk[, "p adj"]), lsd = fmt(lsd), ese = fmt(tk[, "diff"] / sqrt(mse))), paste0(name, ".tukey.csv"))
  put(data.frame(df = s[["Df"]], ss = fmt(s[["Sum Sq"]]), ms = fmt(s[["Mean Sq"]]), f = fmt(s[["F value"]]),
                 p = fmt(s[["Pr(>F)"]])), paste0(name, ".anova.csv"))
}
for (name in readLines(file.path(dir, "cases.txt"))) {
  m <- as.matrix(read.csv(file.path(dir, paste0(name, ".csv")), header = FALSE))
  alpha <- as.numeric(readLines(file.path(dir, paste0(name, ".alpha"))))
  k <- nrow(m); n <- ncol(m)
  f <- tukey_formula(m, alpha)
  write_case(paste0(name, ".formula"), f$tk, f$pairs, f$mse, f$df, n, anova_formula(f))
  if (k * n <= 4000) {
    d <- data.frame(score = as.vector(m), system = factor(rep(paste0("s", 1:k), times = n), levels = paste0("s", 1:k)),
                    topic = factor(rep(1:n, each = k)))
    fit <- aov(score ~ system + topic, data = d)
    tk <- TukeyHSD(fit, "system", conf.level = 1 - alpha)$system
    write_case(name, tk, rownames(tk), sum(fit$residuals^2) / fit$df.residual, fit$df.residual, n, summary(fit)[[1]])
  }
}
if (file.exists(file.path(dir, "pvalues.txt"))) {
  lines <- readLines(file.path(dir, "pvalues.txt"))
  out <- c()
  for (line in lines) {
    p <- as.numeric(strsplit(line, ",")[[1]])
    for (method in c("holm", "bonferroni", "BH", "BY")) out <- c(out, paste(method, paste(fmt(p.adjust(p, method)), collapse = ","), sep = ";"))
  }
  writeLines(out, file.path(dir, "padjust.txt"))
}
if (file.exists(file.path(dir, "grid.csv"))) {
  g <- read.csv(file.path(dir, "grid.csv"))
  put(data.frame(p = fmt(ptukey(g$q, g$k, g$df, lower.tail = FALSE)), q = fmt(qtukey(g$prob, g$k, g$df))), "grid.out.csv")
}
"""


def run_r(folder: Path, cases: dict[str, tuple[np.ndarray, float]], pvalues: list[np.ndarray] = (), grid: list[tuple] = ()) -> dict:
    """Write ``cases`` (name -> (runs x queries matrix, alpha)), p-value vectors and a (q, k, df, prob) grid; run R once; read back."""
    if shutil.which("Rscript") is None:
        pytest.skip(R_MISSING)
    for name, (matrix, alpha) in cases.items():
        np.savetxt(folder / f"{name}.csv", matrix, delimiter=",", fmt="%.17g")
        (folder / f"{name}.alpha").write_text(f"{alpha!r}\n")
    (folder / "cases.txt").write_text("".join(f"{name}\n" for name in cases))
    if pvalues:
        (folder / "pvalues.txt").write_text("".join(",".join(f"{p:.17g}" for p in v) + "\n" for v in pvalues))
    if grid:
        with open(folder / "grid.csv", "w") as handle:
            handle.write("q,k,df,prob\n" + "".join(f"{q!r},{k},{df!r},{prob!r}\n" for q, k, df, prob in grid))
    (folder / "oracle.R").write_text(R_SCRIPT)
    done = subprocess.run(["Rscript", "--vanilla", str(folder / "oracle.R"), str(folder)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr

    def table(name: str) -> dict[str, np.ndarray] | None:
        if not (folder / name).exists():
            return None
        with open(folder / name) as handle:
            rows = list(csv.DictReader(handle))
        return {key: np.array([r[key] if key == "pair" else float("nan") if r[key] == "NA" else float(r[key]) for r in rows])
                for key in rows[0]}

    out: dict = {}
    for name in cases:
        out[name] = {"tukey": table(f"{name}.tukey.csv"), "anova": table(f"{name}.anova.csv")}  # None where too big to fit
        out[f"{name}.formula"] = {"tukey": table(f"{name}.formula.tukey.csv"), "anova": table(f"{name}.formula.anova.csv")}
    if pvalues:
        lines = (folder / "padjust.txt").read_text().splitlines()
        out["padjust"] = [(line.split(";")[0], np.array([float(x) for x in line.split(";")[1].split(",")])) for line in lines]
    if grid:
        out["grid"] = table("grid.out.csv")
    return out


def _mrr_like(rng: np.random.Generator, runs: int, n: int) -> np.ndarray:
    """Correlated per-query MRR@5-like rows: many ties and zeros."""
    levels = np.array([0, 1, 1 / 2, 1 / 3, 1 / 4, 1 / 5])
    base = rng.choice(levels, n, p=[0.3, 0.4, 0.12, 0.08, 0.05, 0.05])
    rows = [np.where(rng.random(n) < 0.1 + 0.05 * i, rng.choice(levels, n), base) for i in range(runs)]
    return np.vstack(rows)


def synthetic_cases() -> dict[str, tuple[np.ndarray, float]]:
    rng = np.random.default_rng(2025)
    constant = _mrr_like(rng, 4, 40)
    constant[2] = 0.5
    zeros = _mrr_like(rng, 4, 40)
    zeros[1] = 0.0
    boosted = _mrr_like(rng, 6, 80)
    boosted[3] = np.where(rng.random(80) < 0.4, 1.0, boosted[3])
    return {
        "ties-zeros-5x60": (_mrr_like(rng, 5, 60), 0.05),
        "constant-run-4x40": (constant, 0.05),
        "zero-run-4x40": (zeros, 0.05),
        "two-runs-2x30": (_mrr_like(rng, 2, 30), 0.05),
        "twenty-runs-20x100": (_mrr_like(rng, 20, 100), 0.05),
        "boosted-6x80-alpha10": (boosted, 0.1),
        "continuous-7x25": (rng.normal(0.5, 0.2, size=(7, 25)), 0.05),
        "tiny-3x3": (rng.random((3, 3)), 0.05),
        "two-queries-3x2": (np.array([[0.1, 0.9], [0.4, 0.2], [0.7, 0.75]]), 0.01),
        "large-df-20x1400": (_mrr_like(rng, 20, 1400), 0.05),  # 26,581 residual df: R's infinite-df form
    }


def p_vectors() -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    tiny = rng.random(190) ** 6
    tiny[::7] = tiny[3]  # ties
    return [np.array([0.03]), np.array([0.04, 0.01]), np.array([0.01, 0.02, 0.02, 0.5, 1.0, 0.0, 1e-12]),
            rng.random(45), tiny, np.r_[rng.random(20) * 0.05, np.ones(5)]]


@pytest.fixture(scope="module")
def oracle(tmp_path_factory):
    grid = [(q, k, df, prob) for q, prob in ((0.5, 0.5), (2.0, 0.9), (3.3, 0.95), (4.6, 0.99), (7.5, 0.999))
            for k in (2, 3, 10, 20, 45) for df in (2, 7, 100, 101, 801, 5001, 24999, 25001, 1e6)]
    cases = synthetic_cases()
    return cases, grid, run_r(tmp_path_factory.mktemp("r-oracle"), cases, p_vectors(), grid)


def assert_tukey_equals_r(matrix: np.ndarray, alpha: float, r: dict) -> None:
    """evalkit's pair (i, j) is R's "s{j}-s{i}" (the same order): the difference and interval flip sign."""
    ours = tukey_hsd(matrix, alpha)
    tk = r["tukey"]
    assert list(tk["pair"]) == [f"s{j + 1}-s{i + 1}" for i, j in zip(ours.first, ours.second)]
    np.testing.assert_allclose(-ours.difference, tk["diff"], rtol=0, atol=TOLERANCE)
    np.testing.assert_allclose(-ours.high, tk["lwr"], rtol=0, atol=TOLERANCE)
    np.testing.assert_allclose(-ours.low, tk["upr"], rtol=0, atol=TOLERANCE)
    np.testing.assert_allclose(ours.p_adjusted, tk["padj"], rtol=0, atol=TOLERANCE)
    np.testing.assert_allclose(ours.p_value, tk["lsd"], rtol=0, atol=TOLERANCE)
    anova = two_way_anova(matrix)
    es_e = np.array([anova.es_e(d) for d in ours.difference])
    np.testing.assert_allclose(-es_e, tk["ese"], rtol=1e-9, atol=TOLERANCE)
    table = r["anova"]  # rows: system, topic, residuals
    for row, source in enumerate(("system", "topic", "residual")):
        ours_row = anova.row(source)
        assert ours_row.df == table["df"][row]
        np.testing.assert_allclose([ours_row.ss, ours_row.ms], [table["ss"][row], table["ms"][row]], rtol=1e-9, atol=1e-12)
        if source != "residual":
            np.testing.assert_allclose([ours_row.f, ours_row.p], [table["f"][row], table["p"][row]], rtol=1e-9, atol=TOLERANCE)


@pytest.mark.parametrize("name", list(synthetic_cases()))
def test_tukey_hsd_and_anova_equal_r(oracle, name):
    """TukeyHSD(aov(score ~ system + topic)) and summary(aov) where R can fit the model in a second; its arithmetic beyond."""
    cases, _, results = oracle
    matrix, alpha = cases[name]
    fitted = results[name]
    if fitted["tukey"] is not None:
        assert_tukey_equals_r(matrix, alpha, fitted)
        formula = results[f"{name}.formula"]  # the R oracle of the big cases gives TukeyHSD's figures
        for key in ("diff", "lwr", "upr", "padj", "lsd"):
            np.testing.assert_allclose(formula["tukey"][key], fitted["tukey"][key], rtol=0, atol=1e-12)
    else:
        assert matrix.size > 4000
    assert_tukey_equals_r(matrix, alpha, results[f"{name}.formula"])


def test_p_adjust_equals_r(oracle):
    names = {"holm": "holm", "bonferroni": "bonferroni", "BH": "bh", "BY": "by"}
    results = oracle[2]["padjust"]
    vectors = p_vectors()
    assert len(results) == 4 * len(vectors)
    for index, (method, expected) in enumerate(results):
        got = adjust(vectors[index // 4], names[method])
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)


def test_ptukey_and_qtukey_equal_r(oracle):
    _, grid, results = oracle
    got_p = np.array([ptukey_upper(q, k, df)[0] for q, k, df, _ in grid])
    got_q = np.array([qtukey(prob, k, df) for _, k, df, prob in grid])
    expected_p, expected_q = results["grid"]["p"], results["grid"]["q"]
    np.testing.assert_allclose(got_p, expected_p, rtol=0, atol=TOLERANCE)
    same_nan = np.isnan(got_q) == np.isnan(expected_q)
    assert same_nan.all(), [g for g, ok in zip(grid, same_nan) if not ok]
    np.testing.assert_allclose(got_q[~np.isnan(got_q)], expected_q[~np.isnan(expected_q)], rtol=0, atol=1e-7)


def test_scipy_studentized_range_is_not_r_where_said():
    """Why evalkit does not call scipy.stats.studentized_range: above 25,000 df R (and evalkit) use the infinite-df form."""
    from scipy.stats import studentized_range

    ours = ptukey_upper(4.0, 20, 26_010)[0]
    assert abs(studentized_range.sf(4.0, 20, 26_010) - ours) > 5e-5
    assert abs(studentized_range.sf(4.0, 20, 5_000) - ptukey_upper(4.0, 20, 5_000)[0]) < 1e-6


@pytest.mark.realdata
def test_real_4b_test_runs_equal_r(tmp_path):
    """The 19 ranked 4b test runs (MRR@5, 1,446 queries, 26,010 residual df): Tukey HSD, the ANOVA and p.adjust of all-pairs Wilcoxon."""
    from evalkit.scoring.leaderboard import build_leaderboard
    from evalkit.stats.pairwise import paired_tests
    from evalkit.stats.paired import align

    board = build_leaderboard(str(shared_or_skip(CT4B / "runs")), str(shared_or_skip(GOLD_4B["test"])), patterns=["*_test*"], progress=False)
    assert len(board.entries) == 19
    values = align([e.scored.score.evaluation for e in board.entries], "MRR@5", [e.name for e in board.entries])
    matrix = values.matrix
    assert matrix.shape == (19, 1446) and not np.isnan(matrix).any()
    first, second = np.triu_indices(19, 1)
    raw = np.array([r.p_value for r in paired_tests("wilcoxon", [(matrix[i], matrix[j]) for i, j in zip(first, second)])])
    results = run_r(tmp_path, {"real-4b": (matrix, 0.05)}, [raw])
    assert_tukey_equals_r(matrix, 0.05, results["real-4b.formula"])  # R's TukeyHSD arithmetic (aov would take 8 minutes)
    names = {"holm": "holm", "bonferroni": "bonferroni", "BH": "bh", "BY": "by"}
    for method, expected in results["padjust"]:
        np.testing.assert_allclose(adjust(raw, names[method]), expected, rtol=1e-12, atol=1e-15)
