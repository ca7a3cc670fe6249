"""What a paired comparison could detect: the power of the exact sign test over tasks and the
minimum detectable pass-rate difference (MDD) at 80% power.

The model. Two modes A and B run on ``n`` tasks. Each task independently comes out "B better"
with probability ``p_b`` (B passed where A failed; with several epochs, B's pass rate over the
epochs is higher), "A better" with probability ``p_a``, and tied otherwise. The pass-rate
difference is ``delta = p_b - p_a`` and the discordance ``psi = p_b + p_a``. The report's test is
the two-sided exact sign test on the untied tasks (McNemar's exact test with one epoch): given
``d`` untied tasks it rejects at level ``alpha`` when the binomial(d, 1/2) p-value of the count of
"B better" tasks is below ``alpha``. Its power is computed exactly, by summing over the number
of untied tasks (binomial(n, psi)) and, given it, over the split (binomial(d, p_b / psi)):

    power = sum_d Binom(d; n, psi) * P(reject | d, q = p_b / psi)

The MDD is the smallest ``delta`` whose power reaches 80%. It depends on the discordance, which
the design does not fix: the report uses the discordance the comparison observed
(``(tasks A better + tasks B better) / tasks``), raised to ``delta`` when smaller (a difference of
``delta`` needs at least that many untied tasks). The smallest MDD possible for ``n`` tasks
(every untied task going B's way, ``psi = delta``) is :func:`mdd_floor`.

No outcome can reach significance when even ``n`` untied tasks all going one way give
``p = 2 * 0.5**n >= alpha``: 5 tasks or fewer at alpha 0.05 (4 tasks: p >= 0.125).

Units. The sign test counts tasks, but the report shows the difference in pass-rate points: the
mean over tasks of each task's pass-rate difference over its epochs. With one epoch an untied
task differs by a whole point (1.0), so the two scales agree. With several epochs a task can
differ by part of one (a split task, 1 of 2 epochs: 0.5): with ``p_b`` of the tasks going B's
way by ``m_b`` points on average and ``p_a`` going A's way by ``m_a``, the pass-rate difference
is ``m_b * p_b - m_a * p_a``. :func:`detectable_pass_rate_difference` states the MDD in these
points: at the sign-scale MDD ``delta`` (``p_b = (psi + delta) / 2``, ``p_a = (psi - delta) /
2``), with the sizes the comparison observed on each side (the side with more tasks leading).
The sizes differ under a real difference: tasks going the better mode's way more often differ
in every epoch, those going the other way are mostly split by chance; one pooled size understated
the MDD by about 1.5 points with 2 epochs. A simulation of the bench's designs
(``scripts/power_simulation.py``, docs/report.md) checks that the real difference with 80% power
is the stated MDD within 3 points, with one epoch and with two.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import numpy.typing as npt
from scipy.stats import binom

__all__ = [
    "POWER",
    "detectable_pass_rate_difference",
    "mdd_floor",
    "min_sign_test_p",
    "minimum_detectable_difference",
    "sign_test_power",
]

#: The power at which the minimum detectable difference is stated.
POWER = 0.8


def min_sign_test_p(n: int) -> float:
    """The smallest two-sided exact sign-test p-value ``n`` tasks can give (all untied, one
    way): ``min(1, 2 * 0.5**n)``; 1 with no task."""
    return 1.0 if n <= 0 else min(1.0, 2.0 * 0.5**n)


@lru_cache(maxsize=256)
def _critical(n: int, alpha: float) -> npt.NDArray[np.int64]:
    """For each d in 0..n, the largest k with P(X <= k) * 2 < alpha for X ~ Binom(d, 1/2)
    (-1 when none): the sign test rejects when min(k, d - k) <= that value."""
    out = np.full(n + 1, -1, dtype=np.int64)
    for d in range(1, n + 1):
        cdf = binom.cdf(np.arange(d + 1), d, 0.5)
        # Two-sided p of k (k <= d/2) is min(1, 2 * P(X <= k)); it rises with k.
        ok = np.nonzero(np.minimum(1.0, 2.0 * cdf[: d // 2 + 1]) < alpha)[0]
        out[d] = int(ok[-1]) if len(ok) else -1
    return out


def sign_test_power(n: int, p_b: float, p_a: float, alpha: float = 0.05) -> float:
    """Exact power of the two-sided sign test over ``n`` tasks when each task is "B better"
    with probability ``p_b`` and "A better" with ``p_a`` (tied otherwise)."""
    if n < 0 or p_a < 0 or p_b < 0 or p_a + p_b > 1 + 1e-12:
        raise ValueError(f"need n >= 0, p_a, p_b >= 0, p_a + p_b <= 1; got {n}, {p_b}, {p_a}")
    psi = min(1.0, p_a + p_b)
    if n == 0 or psi == 0:
        return 0.0
    q = p_b / psi
    d = np.arange(n + 1)
    c = _critical(n, float(alpha))
    # Reject when k <= c_d or k >= d - c_d (the two tails are disjoint since 2 c_d < d).
    lower = np.where(c >= 0, binom.cdf(c, d, q), 0.0)
    upper = np.where(c >= 0, binom.sf(d - c - 1, d, q), 0.0)
    return float(np.sum(binom.pmf(d, n, psi) * (lower + upper)))


@lru_cache(maxsize=4096)
def minimum_detectable_difference(
    n: int, discordance: float = 0.0, alpha: float = 0.05, power: float = POWER
) -> float:
    """The smallest pass-rate difference ``delta`` (0..1) that the sign test over ``n`` tasks
    detects with probability ``power``, when a fraction ``max(discordance, delta)`` of the tasks
    is untied. NaN when no difference can reach it (``n`` too small: see
    :func:`min_sign_test_p`). Found by bisection to 0.0005 (the power rises with ``delta``)."""
    if n <= 0 or not 0 <= discordance <= 1:
        return math.nan

    def at(delta: float) -> float:
        psi = min(1.0, max(discordance, delta))
        return sign_test_power(n, (psi + delta) / 2, (psi - delta) / 2, alpha)

    if at(1.0) < power:
        return math.nan
    lo, hi = 0.0, 1.0
    while hi - lo > 0.0005:
        mid = (lo + hi) / 2
        if at(mid) >= power:
            hi = mid
        else:
            lo = mid
    return hi


def mdd_floor(n: int, alpha: float = 0.05, power: float = POWER) -> float:
    """The smallest MDD ``n`` tasks allow: every untied task goes the same way."""
    return minimum_detectable_difference(n, 0.0, alpha, power)


def detectable_pass_rate_difference(
    n: int,
    discordance: float = 0.0,
    lead_size: float = 1.0,
    trail_size: float | None = None,
    alpha: float = 0.05,
    power: float = POWER,
) -> float:
    """The MDD in pass-rate points (the units of the reported difference).

    ``delta``, the sign-scale :func:`minimum_detectable_difference` of ``n`` tasks with
    ``discordance`` untied, is worth ``lead_size * p_lead - trail_size * p_trail`` points, where
    ``p_lead = (psi + delta) / 2`` and ``p_trail = (psi - delta) / 2`` (``psi`` the discordance,
    at least ``delta``) and the sizes are the mean absolute pass-rate differences of the tasks
    going the leading and the trailing way (1 with one epoch; ``trail_size`` defaults to
    ``lead_size``). At least ``min(sizes) * delta``. NaN when no difference reaches ``power``."""
    trail = lead_size if trail_size is None else trail_size
    if not (0 < lead_size <= 1 and 0 < trail <= 1):
        raise ValueError(f"sizes must be in (0, 1], got {lead_size} and {trail}")
    delta = minimum_detectable_difference(n, discordance, alpha, power)
    if math.isnan(delta):
        return math.nan
    psi = min(1.0, max(discordance, delta))
    points = lead_size * (psi + delta) / 2 - trail * (psi - delta) / 2
    return min(1.0, max(points, min(lead_size, trail) * delta))
