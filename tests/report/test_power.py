"""The sign test's power and minimum detectable difference, checked against scipy and
statsmodels computed independently (enumeration and simulation), not against the module."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest, multinomial
from statsmodels.stats.contingency_tables import mcnemar  # type: ignore[import-untyped]

from harness.report._power import (
    mdd_floor,
    min_sign_test_p,
    minimum_detectable_difference,
    sign_test_power,
)


def _power_by_enumeration(n: int, p_b: float, p_a: float, alpha: float = 0.05) -> float:
    """Every (B better, A better, tied) outcome of n tasks, weighted by scipy's multinomial,
    rejected when statsmodels' exact McNemar test gives p < alpha."""
    total = 0.0
    for nb in range(n + 1):
        for na in range(n + 1 - nb):
            prob = multinomial.pmf([nb, na, n - nb - na], n, [p_b, p_a, 1 - p_a - p_b])
            if nb + na == 0:
                continue
            table = [[0, na], [nb, n - nb - na]]
            if mcnemar(table, exact=True).pvalue < alpha:
                total += prob
    return float(total)


@pytest.mark.parametrize(
    ("n", "p_b", "p_a"), [(8, 0.6, 0.05), (10, 0.3, 0.1), (12, 0.5, 0.0), (7, 0.2, 0.2)]
)
def test_power_matches_exhaustive_enumeration_with_statsmodels(
    n: int, p_b: float, p_a: float
) -> None:
    assert sign_test_power(n, p_b, p_a) == pytest.approx(
        _power_by_enumeration(n, p_b, p_a), abs=1e-9
    )


def _simulated_power(n: int, p_b: float, p_a: float, reps: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n, [p_b, p_a, 1 - p_b - p_a], size=reps)
    hits = 0
    for nb, na, _ in draws:
        d = int(nb + na)
        if d and binomtest(int(nb), d, 0.5).pvalue < 0.05:
            hits += 1
    return hits / reps


@pytest.mark.slow  # a simulation: 8,000 simulated suites
def test_mdd_at_31_tasks_has_80_percent_power_by_simulation() -> None:
    # Discordance 0.3: at the MDD, about 80% of simulated suites reject (scipy's binomtest);
    # 4 points below it, clearly fewer.
    mdd = minimum_detectable_difference(31, 0.3)
    at = _simulated_power(31, (0.3 + mdd) / 2, (0.3 - mdd) / 2, 4000, 1)
    below = _simulated_power(31, (0.3 + mdd - 0.04) / 2, (0.3 - mdd + 0.04) / 2, 4000, 2)
    assert 0.78 <= at <= 0.84  # 3 standard errors of 4,000 draws is about 0.019
    assert below < 0.77


def test_mdd_is_the_smallest_difference_with_80_percent_power() -> None:
    for n, psi in [(12, 0.0), (31, 0.2), (99, 0.25)]:
        mdd = minimum_detectable_difference(n, psi)
        p = max(psi, mdd)
        assert _power_by_formula_scipy(n, (p + mdd) / 2, (p - mdd) / 2) >= 0.8
        lower = mdd - 0.001
        p = max(psi, lower)
        assert _power_by_formula_scipy(n, (p + lower) / 2, (p - lower) / 2) < 0.8


def _power_by_formula_scipy(n: int, p_b: float, p_a: float) -> float:
    """The conditional decomposition, with scipy's binomtest deciding each rejection."""
    from scipy.stats import binom

    psi = p_a + p_b
    total = 0.0
    for d in range(1, n + 1):
        w = binom.pmf(d, n, psi)
        if w < 1e-14:
            continue
        for k in range(d + 1):
            if binomtest(k, d, 0.5).pvalue < 0.05:
                total += w * binom.pmf(k, d, p_b / psi)
    return total


def test_figures_for_the_builtin_suite_sizes() -> None:
    # What the report prints (floor: every untied task goes one way).
    assert math.isnan(mdd_floor(4))
    assert math.isnan(mdd_floor(5))
    assert mdd_floor(6) == pytest.approx(0.964, abs=0.001)
    assert mdd_floor(12) == pytest.approx(0.578, abs=0.001)
    assert mdd_floor(31) == pytest.approx(0.243, abs=0.001)
    assert mdd_floor(99) == pytest.approx(0.079, abs=0.001)
    assert minimum_detectable_difference(99, 0.3) == pytest.approx(0.16, abs=0.001)


def test_smallest_p_value_of_n_tasks() -> None:
    assert min_sign_test_p(4) == binomtest(4, 4, 0.5).pvalue == 0.125
    assert min_sign_test_p(6) == pytest.approx(binomtest(6, 6, 0.5).pvalue)
    assert min_sign_test_p(0) == 1.0
