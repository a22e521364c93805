"""Agreement between two sets of judgments of the same items: confusion matrix, Cohen's kappa, Krippendorff's alpha.

Given two gradings ``a`` and ``b`` of the same n items over categories
``c_1 < ... < c_K`` (the union of both, or the scale given):

* **confusion matrix** ``O[i, j]``: items graded ``c_i`` by a and ``c_j`` by b;
* **Cohen's kappa** (Cohen 1960, "A coefficient of agreement for nominal
  scales", Educ. Psychol. Meas. 20(1); weighted: Cohen 1968, Psychol. Bull.
  70(4), https://doi.org/10.1037/h0026256): with ``E = outer(rowsum O,
  colsum O) / n`` the counts chance would give and disagreement weights
  ``w[i, j]`` = ``[i != j]`` (unweighted), ``|i - j|`` (linear) or
  ``(i - j)^2`` (quadratic), on category *positions*, as scikit-learn's
  ``cohen_kappa_score``::

      kappa = 1 - sum(w * O) / sum(w * E)

  Unweighted it is ``(p_o - p_e) / (1 - p_e)``. NaN when chance agreement is
  total (both constant on one category);
* **Krippendorff's alpha** (Krippendorff 2011, "Computing Krippendorff's
  alpha-reliability", https://repository.upenn.edu/asc_papers/43; Hayes and
  Krippendorff 2007): from the coincidence matrix ``o[c, k]`` (each unit
  with m_u >= 2 values adds ``1 / (m_u - 1)`` for every ordered pair of its
  values from different coders), ``n_c = sum_k o[c, k]``, ``n = sum_c n_c``::

      alpha = 1 - (n - 1) * sum_{c,k} o[c, k] delta2(c, k) / sum_{c,k} n_c n_k delta2(c, k)

  with ``delta2`` nominal ``[c != k]``, interval ``(c - k)^2``, ordinal
  ``(sum_{g=c..k} n_g - (n_c + n_k) / 2)^2``. Units with fewer than two
  values (NaN: not coded) are left out, as the ``krippendorff`` package does.
"""
from __future__ import annotations


import numpy as np
from numpy.typing import ArrayLike

from evalkit.core.errors import UsageError

WEIGHTS = ("none", "linear", "quadratic")
LEVELS = ("nominal", "ordinal", "interval")


def _pair(a: ArrayLike, b: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    from evalkit.stats.rank_correlation import paired_values

    return paired_values(a, b, "agreement needs two gradings of the same items", "agreement needs finite grades")


def categories(a: ArrayLike, b: ArrayLike, scale: ArrayLike | None = None) -> np.ndarray:
    """The categories, ascending: ``scale`` (which must hold every grade given), else the grades both use."""
    x, y = _pair(a, b)
    seen = np.union1d(x, y)
    if scale is None:
        return seen
    chosen = np.unique(np.asarray(scale, dtype=np.float64))
    outside = np.setdiff1d(seen, chosen)
    if len(outside):
        raise UsageError(f"grade {outside[0]:g} is not on the scale {', '.join(f'{v:g}' for v in chosen)}")
    return chosen


def confusion_matrix(a: ArrayLike, b: ArrayLike, scale: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(categories, ``O``): ``O[i, j]`` counts items a grades ``categories[i]`` and b grades ``categories[j]``."""
    x, y = _pair(a, b)
    cats = categories(x, y, scale)
    i, j = np.searchsorted(cats, x), np.searchsorted(cats, y)
    matrix = np.zeros((len(cats), len(cats)), dtype=np.int64)
    np.add.at(matrix, (i, j), 1)
    return cats, matrix


def cohen_kappa(a: ArrayLike, b: ArrayLike, weights: str = "none", scale: ArrayLike | None = None) -> float:
    """Cohen's kappa of two gradings, unweighted or weighted (``linear``, ``quadratic``); see the module docstring."""
    if weights not in WEIGHTS:
        raise UsageError(f"kappa weights must be one of {', '.join(WEIGHTS)} (got {weights!r})")
    cats, observed = confusion_matrix(a, b, scale)
    n = observed.sum()
    if n == 0:
        return float("nan")
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / n
    index = np.arange(len(cats))
    distance = np.abs(index[:, None] - index[None, :]).astype(np.float64)
    w = (distance > 0).astype(np.float64) if weights == "none" else distance if weights == "linear" else distance**2
    chance = float(np.sum(w * expected))
    return 1.0 - float(np.sum(w * observed)) / chance if chance > 0 else float("nan")


def _delta2(values: np.ndarray, totals: np.ndarray, level: str) -> np.ndarray:
    if level == "nominal":
        return (values[:, None] != values[None, :]).astype(np.float64)
    if level == "interval":
        return (values[:, None] - values[None, :]) ** 2
    cumulative = np.r_[0.0, np.cumsum(totals)]  # ordinal: sum_{g=c..k} n_g - (n_c + n_k) / 2, for c <= k and mirrored
    low = np.minimum.outer(np.arange(len(values)), np.arange(len(values)))
    high = np.maximum.outer(np.arange(len(values)), np.arange(len(values)))
    between = cumulative[high + 1] - cumulative[low]
    return (between - (totals[:, None] + totals[None, :]) / 2) ** 2


def krippendorff_alpha(data: ArrayLike, level: str = "ordinal") -> float:
    """Krippendorff's alpha of ``data`` (coders x units, NaN where a coder gave no value); see the module docstring."""
    if level not in LEVELS:
        raise UsageError(f"alpha's level must be one of {', '.join(LEVELS)} (got {level!r})")
    table = np.asarray(data, dtype=np.float64)
    if table.ndim != 2:
        raise UsageError("Krippendorff's alpha needs a coders x units table")
    if np.any(np.isinf(table)):
        raise UsageError("Krippendorff's alpha needs finite values (NaN: not coded)")
    coded = ~np.isnan(table)
    table = table[:, coded.sum(axis=0) >= 2]  # units with at least two values are pairable
    coded = ~np.isnan(table)
    values = np.unique(table[coded])
    if len(values) == 0:
        return float("nan")
    counts = np.stack([np.sum(table == v, axis=0) for v in values])  # [value, unit]: how many coders gave it
    m = counts.sum(axis=0).astype(np.float64)
    coincidence = (counts[:, None, :] * counts[None, :, :]).astype(np.float64)  # ordered pairs of values within a unit
    coincidence[np.arange(len(values)), np.arange(len(values)), :] -= counts  # ... of two different coders
    o = (coincidence / (m - 1)[None, None, :]).sum(axis=2)
    totals = o.sum(axis=1)
    n = totals.sum()
    delta2 = _delta2(values, totals, level)
    expected = float(np.sum(np.outer(totals, totals) * delta2))
    if expected == 0:
        return float("nan")  # one value throughout: no variation to agree on
    return 1.0 - (n - 1) * float(np.sum(o * delta2)) / expected


def krippendorff_alpha_pair(a: ArrayLike, b: ArrayLike, level: str = "ordinal") -> float:
    """Krippendorff's alpha of two coders who both graded every item."""
    x, y = _pair(a, b)
    return krippendorff_alpha(np.stack([x, y]), level)
