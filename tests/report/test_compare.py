"""Paired comparisons: counts, task-level sign test (McNemar with one epoch), one Holm family
for every claim, bootstrap intervals and the verdict wording."""

from __future__ import annotations

import math
from collections.abc import Callable

import pandas as pd
import pytest

from harness.report import holm_adjust, mcnemar_exact, paired_comparisons

Paired = Callable[..., pd.DataFrame]
Counts = Callable[[int, int, int, int], list[tuple[bool, bool]]]


def test_pitfalls_example_is_no_evidence(paired: Paired, counts: Counts) -> None:
    # 50 tasks: A 30/50, B 36/50, A-only 3, B-only 9 -> +12 pts, p = 0.146.
    df = paired("react", "reflexion", counts(27, 3, 9, 11))
    c = paired_comparisons(df).iloc[0]
    assert (c["provider"], c["mode_a"], c["mode_b"]) == ("live", "react", "reflexion")
    assert (c["n_pairs"], c["tasks"]) == (50, 50)
    assert (c["a_passed"], c["b_passed"], c["both_passed"], c["neither_passed"]) == (30, 36, 27, 11)
    assert (c["only_a"], c["only_b"]) == (3, 9)
    assert (c["rate_a"], c["rate_b"]) == pytest.approx((0.60, 0.72))
    assert c["diff"] == pytest.approx(0.12)
    assert c["p_value"] == pytest.approx(2 * 299 / 4096)
    assert c["p_holm"] == pytest.approx(c["p_value"])  # equal costs: the only test made
    assert c["diff_ci_low"] <= 0 < c["diff_ci_high"]
    assert c["verdict"] == (
        "reflexion vs react (live): +12 pts over 50 tasks, Holm-adjusted p=0.15 — "
        "no evidence of a difference; detectable at 80% power over 50 tasks: 20 pts or more"
    )
    # 12 of 50 tasks untied: the power of the sign test at +19.x pts with that discordance.
    assert c["discordance"] == pytest.approx(12 / 50)
    assert 0.19 < c["mdd"] <= 0.20


def test_clear_difference_is_called(paired: Paired, counts: Counts) -> None:
    df = paired("react", "reflexion", counts(20, 0, 10, 10))
    c = paired_comparisons(df).iloc[0]
    assert c["p_value"] == pytest.approx(2 / 1024)
    assert c["verdict"] == (
        "reflexion vs react (live): +25 pts over 40 tasks, Holm-adjusted p=0.002 — "
        "reflexion passes more often than react"
    )
    worse = paired_comparisons(df, modes=["reflexion", "react"]).iloc[0]
    assert (worse["mode_a"], worse["mode_b"], worse["only_a"], worse["only_b"]) == (
        "reflexion",
        "react",
        10,
        0,
    )
    assert worse["verdict"].endswith(
        "-25 pts over 40 tasks, Holm-adjusted p=0.002 — react passes less often than reflexion"
    )


def test_identical_modes(paired: Paired, counts: Counts) -> None:
    c = paired_comparisons(paired("a", "b", counts(5, 0, 0, 5))).iloc[0]
    assert c["p_value"] == 1.0
    assert c["verdict"] == (
        "b vs a (live): ±0 pts over 10 tasks, Holm-adjusted p=1 — no evidence of a difference "
        "(they agree on every cell); detectable at 80% power over 10 tasks: 68 pts or more"
    )


def test_three_modes_are_holm_adjusted(rows: Callable[..., pd.DataFrame]) -> None:
    outcomes = {
        "plan": [True] * 10 + [False] * 20,
        "react": [True] * 18 + [False] * 12,
        "reflexion": [True] * 28 + [False] * 2,
    }
    df = rows(
        *[
            {"mode": m, "task_id": f"t{i}", "passed": p}
            for m, ps in outcomes.items()
            for i, p in enumerate(ps)
        ]
    )
    c = paired_comparisons(df)
    assert list(zip(c["mode_a"], c["mode_b"], strict=True)) == [
        ("plan", "react"),
        ("plan", "reflexion"),
        ("react", "reflexion"),
    ]
    assert list(c["only_b"]) == [8, 18, 10]
    expected_p = [mcnemar_exact(0, 8), mcnemar_exact(0, 18), mcnemar_exact(0, 10)]
    assert list(c["p_value"]) == pytest.approx(expected_p)
    assert list(c["p_holm"]) == pytest.approx(holm_adjust(expected_p))
    # sorted: p1 < p2 < p0 -> multipliers 3, 2, 1
    assert list(c["p_holm"]) == pytest.approx(
        [1 * expected_p[0], 3 * expected_p[1], 2 * expected_p[2]]
    )
    assert "Holm-adjusted p=" in c["verdict"].iloc[0]


def test_pairs_only_on_shared_cells(rows: Callable[..., pd.DataFrame]) -> None:
    df = rows(
        {"mode": "a", "task_id": "t1", "passed": True},
        {"mode": "b", "task_id": "t1", "passed": False},
        {"mode": "a", "task_id": "t2", "passed": True},  # b never ran t2
        {"mode": "b", "task_id": "t3", "passed": True},  # a never ran t3
        {"mode": "a", "task_id": "t1", "provider": "other", "passed": True},
    )
    c = paired_comparisons(df)
    assert list(c["provider"]) == ["live"]  # "other" has one mode only
    assert (c["n_pairs"].iloc[0], c["only_a"].iloc[0]) == (1, 1)


def test_no_common_cells(rows: Callable[..., pd.DataFrame]) -> None:
    df = rows({"mode": "a", "task_id": "x"}, {"mode": "b", "task_id": "y"})
    c = paired_comparisons(df).iloc[0]
    assert c["n_pairs"] == 0
    assert c["verdict"] == "b vs a (live): no cells in common — nothing to compare"
    assert c["cost_verdict"] == "cost unknown for these cells"


def test_cost_difference_and_ratio(paired: Paired, counts: Counts) -> None:
    costs = [(0.01 * (i + 1), 0.02 * (i + 1)) for i in range(20)]
    c = paired_comparisons(paired("a", "b", counts(20, 0, 0, 0), costs=costs)).iloc[0]
    assert c["cost_pairs"] == 20
    assert c["cost_diff"] == pytest.approx(sum(0.01 * (i + 1) for i in range(20)) / 20)
    assert c["cost_ratio"] == pytest.approx(2.0)
    assert (c["cost_ratio_ci_low"], c["cost_ratio_ci_high"]) == pytest.approx((2.0, 2.0))
    assert 0 < c["cost_diff_ci_low"] < c["cost_diff"] < c["cost_diff_ci_high"]
    assert c["cost_verdict"].startswith("b - a: +$0.105 per cell (95% CI +$")
    assert c["p_cost"] == pytest.approx(2 / 2**20)  # Wilcoxon: all 20 tasks cost more
    assert c["cost_verdict"].endswith("2.00× the cost; Holm-adjusted p<0.001) — b costs more")


def test_unknown_costs_are_left_out(paired: Paired, counts: Counts) -> None:
    costs = [(0.01, 0.01), (float("nan"), 0.5), (0.02, 0.02)]
    c = paired_comparisons(paired("a", "b", counts(3, 0, 0, 0), costs=costs)).iloc[0]
    assert c["cost_pairs"] == 2
    assert c["cost_diff"] == 0.0
    assert c["cost_verdict"].endswith("no evidence of a cost difference")


def test_repeated_epochs_are_not_new_tasks(paired: Paired, counts: Counts) -> None:
    # One task flips in all 12 epochs: McNemar on 12 "independent" pairs would say p < 0.001,
    # but it is one task out of 3; the task-level sign test has 1 untied task: p = 1.
    outcomes = counts(1, 0, 1, 1)
    c = paired_comparisons(paired("a", "b", outcomes, epochs=12)).iloc[0]
    assert (c["n_pairs"], c["tasks"], c["only_b"]) == (36, 3, 12)
    assert c["p_value"] == 1.0
    assert c["diff_ci_low"] <= 0
    # Three tasks: even all three going one way give p = 0.25.
    assert c["verdict"].endswith(
        "— cannot reach significance with 3 tasks (the smallest possible p is 0.25): "
        "no verdict either way"
    )
    assert not c["can_reach"]


def test_results_are_reproducible(paired: Paired, counts: Counts) -> None:
    df = paired("a", "b", counts(10, 4, 7, 9), epochs=2)
    one = paired_comparisons(df, seed=5)
    two = paired_comparisons(df, seed=5)
    pd.testing.assert_frame_equal(one, two)


def test_tiny_p_value_wording(paired: Paired, counts: Counts) -> None:
    c = paired_comparisons(paired("a", "b", counts(0, 0, 20, 0))).iloc[0]
    assert c["verdict"] == (
        "b vs a (live): +100 pts over 20 tasks, Holm-adjusted p<0.001 — b passes more often than a"
    )


def test_four_tasks_cannot_reach_significance(paired: Paired, counts: Counts) -> None:
    c = paired_comparisons(paired("a", "b", counts(0, 0, 4, 0))).iloc[0]
    assert c["p_value"] == pytest.approx(0.125)
    assert (c["tasks"], c["min_p"], bool(c["can_reach"])) == (4, 0.125, False)
    assert math.isnan(c["mdd"])
    assert c["verdict"] == (
        "b vs a (live): +100 pts over 4 tasks — cannot reach significance with 4 tasks "
        "(the smallest possible p is 0.125): no verdict either way"
    )


def test_scripted_provider_is_a_suite_check_outside_the_family(
    paired: Paired, counts: Counts
) -> None:
    live = paired("a", "b", counts(20, 0, 10, 10))
    mock = paired("a", "b", counts(0, 0, 40, 0), provider="mock")
    both = paired_comparisons(pd.concat([live, mock], ignore_index=True))
    alone = paired_comparisons(live)
    real = both[both["provider"] == "live"].iloc[0]
    scripted = both[both["provider"] == "mock"].iloc[0]
    # The live comparison's correction is as if the scripted one did not exist.
    assert real["p_holm"] == pytest.approx(alone.iloc[0]["p_holm"])
    assert bool(scripted["scripted"])
    assert math.isnan(scripted["p_value"])
    assert math.isnan(scripted["p_holm"])
    text = scripted["verdict"]
    assert text.startswith("b vs a (mock, scripted): suite check, not a finding about the modes")
    for word in ("p=", "evidence", "significan", "more often"):
        assert word not in text
    assert "no claim" in scripted["cost_verdict"]
