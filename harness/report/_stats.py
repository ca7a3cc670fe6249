"""Statistics for comparing agent modes honestly.

Every rate gets a Wilson score interval (Wald intervals badly understate the uncertainty of small
suites); paired comparisons of two modes on the same cells use McNemar's exact test on the
discordant counts; differences of means (pass rate, cost) get a percentile bootstrap interval that
resamples whole *tasks* (all epochs of a task together, the cluster bootstrap), so repeated epochs
of one task are not mistaken for independent evidence; pass@k (Chen et al. 2021) and pass^k
(tau-bench, Yao et al. 2024) summarise repeated epochs; Holm's step-down method corrects a family
of comparisons.

The formulas come from scipy/statsmodels (``binomtest``, ``proportion_ci``, ``multipletests``);
only pass@k/pass^k, whose estimators are two binomial-coefficient ratios, are written out here.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy.stats import binomtest, norm, wilcoxon
from statsmodels.stats.multitest import multipletests  # type: ignore[import-untyped]

__all__ = [
    "BootstrapResult",
    "cluster_bootstrap",
    "holm_adjust",
    "mcnemar_exact",
    "pass_at_k",
    "pass_hat_k",
    "sign_test",
    "signed_rank_test",
    "wilson_interval",
    "wilson_interval_tasks",
]

FloatArray = npt.NDArray[np.float64]

# Resamples are drawn in blocks so that memory stays bounded (block x clusters int64 indices).
_MAX_BLOCK_CELLS = 2_000_000


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval (no continuity correction) for ``successes`` out of ``n``.

    Returns ``(nan, nan)`` when ``n`` is 0: a rate of nothing has no interval.
    """
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")
    if n == 0:
        return (math.nan, math.nan)
    ci = binomtest(int(successes), int(n)).proportion_ci(
        confidence_level=confidence, method="wilson"
    )
    return (float(ci.low), float(ci.high))


def wilson_interval_tasks(
    successes: float, n: int, confidence: float = 0.95
) -> tuple[float, float]:
    """The Wilson score interval for a pass rate over ``n`` tasks, where ``successes`` is the
    sum of the tasks' own pass rates over their epochs (fractional when epochs disagree).

    With one epoch, or epochs that agree, this is the ordinary Wilson interval of the tasks;
    extra identical epochs do not narrow it. ``(nan, nan)`` when ``n`` is 0."""
    if n < 0 or not (0 <= successes <= n + 1e-9):
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")
    if n == 0:
        return (math.nan, math.nan)
    if abs(successes - round(successes)) < 1e-9:
        return wilson_interval(round(successes), n, confidence)
    z = float(norm.ppf(0.5 + confidence / 2))
    phat = successes / n
    denom = 1 + z * z / n
    centre = (phat + z * z / (2 * n)) / denom
    half = z * math.sqrt(phat * (1 - phat) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def sign_test(diffs: Sequence[float] | npt.NDArray[Any], tol: float = 1e-12) -> float:
    """Two-sided exact sign test on paired differences (ties dropped); 1.0 when all tie. On
    one epoch of pass/fail this is McNemar's exact test on the discordant tasks."""
    d = np.asarray(diffs, dtype=float)
    d = d[~np.isnan(d)]
    pos, neg = int((d > tol).sum()), int((d < -tol).sum())
    if pos + neg == 0:
        return 1.0
    return float(binomtest(pos, pos + neg, 0.5).pvalue)


def signed_rank_test(diffs: Sequence[float] | npt.NDArray[Any], tol: float = 1e-15) -> float:
    """Two-sided Wilcoxon signed-rank p-value on paired differences (zeros dropped); 1.0 when
    every difference is zero. Robust to the heavy tails of cost data."""
    d = np.asarray(diffs, dtype=float)
    d = d[~np.isnan(d)]
    d = d[np.abs(d) > tol]
    if len(d) == 0:
        return 1.0
    return float(wilcoxon(d).pvalue)


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts.

    ``only_a`` is the number of pairs where A passed and B failed, ``only_b`` the reverse. Under
    the null hypothesis each discordant pair is a fair coin, so the p-value is an exact binomial
    test of ``only_a`` successes in ``only_a + only_b`` trials at p = 0.5. With no discordant pair
    there is no evidence of anything: the p-value is 1.
    """
    if only_a < 0 or only_b < 0:
        raise ValueError(f"discordant counts must be >= 0, got {only_a}, {only_b}")
    n = only_a + only_b
    if n == 0:
        return 1.0
    return float(min(1.0, binomtest(int(only_a), int(n), 0.5).pvalue))


def holm_adjust(pvalues: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values (family-wise error rate), in the input order.

    NaN p-values (comparisons that could not be made) stay NaN and are not counted in the family.
    """
    values = np.asarray(pvalues, dtype=float)
    out = np.full(values.shape, np.nan)
    ok = ~np.isnan(values)
    if ok.any():
        out[ok] = multipletests(values[ok], method="holm")[1]
    return [float(v) for v in out]


def _check_k(n: int, c: int, k: int) -> None:
    if k < 1 or n < k or c < 0 or c > n:
        raise ValueError(f"need 1 <= k <= n and 0 <= c <= n, got n={n}, c={c}, k={k}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one task: the chance that at least one of ``k`` trials drawn without
    replacement from ``n`` trials (``c`` of them passing) passes: ``1 - C(n-c, k) / C(n, k)``."""
    _check_k(n, c, k)
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k for one task: the chance that *all* ``k`` trials drawn without replacement from
    ``n`` trials (``c`` passing) pass: ``C(c, k) / C(n, k)``."""
    _check_k(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


@dataclass(frozen=True, slots=True)
class BootstrapResult:
    """A point estimate and its percentile bootstrap interval (NaN when undefined)."""

    estimate: float
    low: float
    high: float
    n_clusters: int
    n_resamples: int

    def excludes_zero(self) -> bool:
        """True when the whole interval lies on one side of 0 (NaN intervals never do)."""
        return bool(self.low > 0 or self.high < 0)


def _cluster_codes(clusters: Sequence[Hashable] | npt.NDArray[Any]) -> npt.NDArray[np.intp]:
    if isinstance(clusters, np.ndarray):
        codes, _ = pd.factorize(clusters, sort=False)
    else:
        codes, _ = pd.factorize(pd.Series(list(clusters), dtype=object), sort=False)
    return np.asarray(codes, dtype=np.intp)


def cluster_bootstrap(
    values: Sequence[float] | FloatArray,
    clusters: Sequence[Hashable] | npt.NDArray[Any],
    *,
    denominator: Sequence[float] | FloatArray | None = None,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> BootstrapResult:
    """Percentile bootstrap of a ratio of sums, resampling whole clusters with replacement.

    With ``denominator`` omitted the statistic is the mean of ``values`` over all rows (each row
    counts once; a resampled cluster brings all its rows). Use it for a paired difference: one
    row per pair, ``values`` = B - A, ``clusters`` = the task of the pair. With ``denominator``
    the statistic is ``sum(values) / sum(denominator)``, e.g. a cost ratio
    ``sum(cost_b) / sum(cost_a)``.

    Rows whose value or denominator is NaN are dropped first. The generator is a seeded
    ``numpy.random.Generator`` (PCG64), so the same input and seed give the same interval.
    """
    vals = np.asarray(values, dtype=np.float64)
    den = np.ones_like(vals) if denominator is None else np.asarray(denominator, dtype=np.float64)
    if vals.shape != den.shape or len(vals) != len(clusters):
        raise ValueError("values, denominator and clusters must have the same length")
    if n_resamples < 1 or not 0 < confidence < 1:
        raise ValueError("need n_resamples >= 1 and 0 < confidence < 1")
    keep = ~(np.isnan(vals) | np.isnan(den))
    codes, _ = pd.factorize(_cluster_codes(clusters)[keep], sort=False)
    k = int(codes.max()) + 1 if len(codes) else 0
    num_sums = np.bincount(codes, weights=vals[keep], minlength=k).astype(np.float64)
    den_sums = np.bincount(codes, weights=den[keep], minlength=k).astype(np.float64)
    total_den = float(den_sums.sum())
    if k == 0 or total_den == 0:
        return BootstrapResult(math.nan, math.nan, math.nan, k, n_resamples)
    estimate = float(num_sums.sum()) / total_den
    if k == 1:  # one task says nothing about the spread across tasks
        return BootstrapResult(estimate, math.nan, math.nan, k, n_resamples)
    rng = np.random.default_rng(seed)
    stats = np.empty(n_resamples, dtype=np.float64)
    block = max(1, _MAX_BLOCK_CELLS // k)
    # Equal cluster weights (e.g. every task ran the same epochs): the denominator of every
    # resample is the same, so only the numerator needs gathering.
    constant_den = bool(np.all(den_sums == den_sums[0]))
    for start in range(0, n_resamples, block):
        size = min(block, n_resamples - start)
        idx = rng.integers(0, k, size=(size, k))
        num = num_sums[idx].sum(axis=1)
        den = k * den_sums[0] if constant_den else den_sums[idx].sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            stats[start : start + size] = num / den
    stats = stats[np.isfinite(stats)]
    if len(stats) == 0:
        return BootstrapResult(estimate, math.nan, math.nan, k, n_resamples)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(stats, [alpha, 1.0 - alpha])
    return BootstrapResult(estimate, float(low), float(high), k, n_resamples)
