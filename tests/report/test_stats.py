"""Known-value tests for every statistic in harness.report._stats."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar  # type: ignore[import-untyped]
from statsmodels.stats.proportion import proportion_confint  # type: ignore[import-untyped]

from harness.report._stats import (
    cluster_bootstrap,
    holm_adjust,
    mcnemar_exact,
    pass_at_k,
    pass_hat_k,
    wilson_interval,
)

# --- Wilson -------------------------------------------------------------------------------------


def test_wilson_8_of_10_matches_published_values() -> None:
    # Wilson score interval for 8/10 at 95%: 0.4902 to 0.9433 (Newcombe 1998, method 3; the
    # same figures as any Wilson calculator).
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-4)
    assert high == pytest.approx(0.9433, abs=1e-4)


@pytest.mark.parametrize(
    ("k", "n"),
    [(0, 10), (1, 10), (3, 5), (8, 10), (10, 10), (30, 50), (36, 50), (1, 1), (497, 1000)],
)
def test_wilson_matches_statsmodels(k: int, n: int) -> None:
    expected = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert wilson_interval(k, n) == pytest.approx(expected, abs=1e-10)


def test_wilson_closed_form_for_3_of_5() -> None:
    z = 1.959963984540054
    p, n = 0.6, 5
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert wilson_interval(3, 5) == pytest.approx((centre - half, centre + half), abs=1e-12)


def test_wilson_other_confidence_and_edges() -> None:
    assert wilson_interval(8, 10, 0.90) == pytest.approx(
        proportion_confint(8, 10, alpha=0.10, method="wilson"), abs=1e-10
    )
    assert all(math.isnan(v) for v in wilson_interval(0, 0))
    low, high = wilson_interval(0, 10)
    assert low == pytest.approx(0.0, abs=1e-12)
    assert high == pytest.approx(0.2775, abs=1e-4)  # close to the "rule of three" 3/n
    with pytest.raises(ValueError, match="successes"):
        wilson_interval(11, 10)


def test_pitfalls_worked_example_intervals() -> None:
    # library-pitfalls.md 5.1: A 30/50 -> 0.60 (0.46-0.72), B 36/50 -> 0.72 (0.58-0.83).
    assert wilson_interval(30, 50) == pytest.approx((0.46, 0.72), abs=0.005)
    assert wilson_interval(36, 50) == pytest.approx((0.58, 0.83), abs=0.005)


# --- McNemar exact --------------------------------------------------------------------------------


def _mcnemar_by_hand(b: int, c: int) -> float:
    """Two-sided exact McNemar: twice the smaller binomial tail at p = 1/2, capped at 1."""
    n = b + c
    tail: float = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2**n
    return min(1.0, 2 * tail)


@pytest.mark.parametrize(
    ("b", "c"), [(3, 9), (9, 3), (0, 10), (1, 1), (5, 5), (0, 1), (2, 14), (20, 35), (7, 0)]
)
def test_mcnemar_exact_matches_binomial_sum(b: int, c: int) -> None:
    assert mcnemar_exact(b, c) == pytest.approx(_mcnemar_by_hand(b, c), rel=1e-12)


def test_mcnemar_known_values() -> None:
    # library-pitfalls.md 5.1: discordant 3 vs 9 -> p = 0.146 (= 2 * 299 / 4096).
    assert mcnemar_exact(3, 9) == pytest.approx(2 * 299 / 4096, rel=1e-12)
    assert mcnemar_exact(0, 10) == pytest.approx(2 / 1024, rel=1e-12)
    assert mcnemar_exact(0, 0) == 1.0


@pytest.mark.parametrize(("b", "c"), [(3, 9), (0, 6), (12, 4)])
def test_mcnemar_agrees_with_statsmodels(b: int, c: int) -> None:
    table = [[10, b], [c, 10]]
    assert mcnemar_exact(b, c) == pytest.approx(sm_mcnemar(table, exact=True).pvalue, rel=1e-12)


def test_mcnemar_rejects_negative_counts() -> None:
    with pytest.raises(ValueError, match="discordant"):
        mcnemar_exact(-1, 3)


# --- pass@k / pass^k ------------------------------------------------------------------------------


def _brute_force(n: int, c: int, k: int) -> tuple[float, float]:
    """Enumerate every k-subset of n trials (the first c pass): P(any passes), P(all pass)."""
    trials = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(trials, k))
    return (
        sum(any(s) for s in subsets) / len(subsets),
        sum(all(s) for s in subsets) / len(subsets),
    )


@pytest.mark.parametrize(
    ("n", "c", "k"),
    [
        (5, 3, 1),
        (5, 3, 2),
        (5, 3, 3),
        (5, 0, 2),
        (5, 5, 5),
        (6, 2, 3),
        (8, 5, 4),
        (4, 1, 4),
    ],
)
def test_pass_at_k_and_pass_hat_k_by_enumeration(n: int, c: int, k: int) -> None:
    at_k, hat_k = _brute_force(n, c, k)
    assert pass_at_k(n, c, k) == pytest.approx(at_k, abs=1e-12)
    assert pass_hat_k(n, c, k) == pytest.approx(hat_k, abs=1e-12)


def test_pass_k_worked_example() -> None:
    # library-pitfalls.md 5.1: n=5, c=3: pass@1 = 0.60, pass@3 = 1.00, pass^3 = 0.10.
    assert pass_at_k(5, 3, 1) == pytest.approx(0.6)
    assert pass_at_k(5, 3, 3) == pytest.approx(1.0)
    assert pass_hat_k(5, 3, 3) == pytest.approx(0.1)


def test_pass_k_needs_enough_trials() -> None:
    with pytest.raises(ValueError, match="k <= n"):
        pass_at_k(2, 1, 3)
    with pytest.raises(ValueError, match="k <= n"):
        pass_hat_k(3, 4, 1)


# --- Holm -----------------------------------------------------------------------------------------


def test_holm_known_example() -> None:
    # Sorted 0.005, 0.01, 0.03, 0.04 -> x4, x3, x2, x1 = 0.02, 0.03, 0.06, 0.04 -> monotone
    # 0.02, 0.03, 0.06, 0.06; back in input order:
    assert holm_adjust([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_holm_caps_at_one_and_skips_nan() -> None:
    # Three real tests: 0.2*3 = 0.6, 0.5*2 = 1.0, 0.9*1 = 0.9 -> monotone 0.6, 1.0, 1.0.
    adjusted = holm_adjust([0.5, math.nan, 0.2, 0.9])
    assert adjusted[0] == pytest.approx(1.0)
    assert math.isnan(adjusted[1])
    assert adjusted[2] == pytest.approx(0.6)
    assert adjusted[3] == pytest.approx(1.0)
    assert holm_adjust([]) == []


# --- cluster bootstrap ----------------------------------------------------------------------------


def test_bootstrap_is_seeded_and_deterministic() -> None:
    rng = np.random.default_rng(7)
    values = rng.normal(size=40)
    clusters = [i // 2 for i in range(40)]
    a = cluster_bootstrap(values, clusters, seed=3)
    b = cluster_bootstrap(values, clusters, seed=3)
    c = cluster_bootstrap(values, clusters, seed=4)
    assert (a.low, a.high) == (b.low, b.high)
    assert (a.low, a.high) != (c.low, c.high)
    assert a.estimate == pytest.approx(values.mean())
    assert a.low < a.estimate < a.high
    assert a.n_clusters == 20


def test_bootstrap_resamples_whole_clusters() -> None:
    # Every cluster repeats one value 4 times. Resampling whole clusters must give exactly the
    # interval of the cluster means bootstrapped on their own (same seed, same draws).
    means = np.array([0.0, 1.0, 1.0, 0.0, 1.0, 0.5, 0.0, 1.0, 1.0, 0.25])
    repeated = np.repeat(means, 4)
    clusters = np.repeat(np.arange(10), 4)
    whole = cluster_bootstrap(repeated, clusters, seed=11)
    alone = cluster_bootstrap(means, np.arange(10), seed=11)
    assert (whole.estimate, whole.low, whole.high) == pytest.approx(
        (alone.estimate, alone.low, alone.high)
    )
    # Treating the 40 rows as independent would understate the spread.
    naive = cluster_bootstrap(repeated, np.arange(40), seed=11)
    assert naive.high - naive.low < whole.high - whole.low


def test_bootstrap_degenerate_and_ratio() -> None:
    same = cluster_bootstrap([1.0] * 10, list(range(10)))
    assert (same.estimate, same.low, same.high) == (1.0, 1.0, 1.0)
    one = cluster_bootstrap([1.0, 2.0], ["x", "x"])
    assert one.estimate == 1.5
    assert math.isnan(one.low)
    assert math.isnan(one.high)
    assert not one.excludes_zero()
    empty = cluster_bootstrap([], [])
    assert math.isnan(empty.estimate)
    ratio = cluster_bootstrap([2.0, 4.0, 6.0], [1, 2, 3], denominator=[1.0, 2.0, 3.0])
    assert (ratio.estimate, ratio.low, ratio.high) == pytest.approx((2.0, 2.0, 2.0))
    dropped = cluster_bootstrap([1.0, math.nan, 3.0], ["a", "b", "c"])
    assert dropped.estimate == 2.0
    assert dropped.n_clusters == 2


def test_bootstrap_pitfalls_worked_example() -> None:
    # 50 tasks, A 30/50, B 36/50, A-only 3, B-only 9: paired diff +0.12 with a task bootstrap
    # 95% CI of about (-0.02, 0.26) (library-pitfalls.md 5.1).
    a = [1] * 27 + [1] * 3 + [0] * 9 + [0] * 11
    b = [1] * 27 + [0] * 3 + [1] * 9 + [0] * 11
    diff = np.array(b, dtype=float) - np.array(a, dtype=float)
    res = cluster_bootstrap(diff, list(range(50)), n_resamples=4000, seed=0)
    assert res.estimate == pytest.approx(0.12)
    assert res.low == pytest.approx(-0.02, abs=0.025)
    assert res.high == pytest.approx(0.26, abs=0.025)


def test_bootstrap_bounds_memory_with_many_clusters() -> None:
    values = np.ones(30_000)
    res = cluster_bootstrap(values, np.arange(30_000), n_resamples=200)
    assert res.estimate == 1.0
    assert res.low == 1.0


def test_bootstrap_rejects_mismatched_input() -> None:
    with pytest.raises(ValueError, match="same length"):
        cluster_bootstrap([1.0, 2.0], [1])
    with pytest.raises(ValueError, match="n_resamples"):
        cluster_bootstrap([1.0, 2.0], [1, 2], n_resamples=0)
