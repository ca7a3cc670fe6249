"""The minimum detectable difference is stated in the units of the difference it sits beside
(pass-rate points over tasks, epochs averaged per task), and a simulation of the bench's designs
finds it where it says: the real difference with 80% power, within 3 points, with one epoch and
with two (scripts/power_simulation.py, smaller here)."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pandas as pd
import pytest

from harness.report._compare import below_mdd_note, paired_comparisons
from harness.report._power import detectable_pass_rate_difference, minimum_detectable_difference

ROOT = Path(__file__).resolve().parents[2]


def _simulation() -> ModuleType:
    path = ROOT / "scripts" / "power_simulation.py"
    spec = importlib.util.spec_from_file_location("power_simulation", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _rows(outcomes: dict[str, list[tuple[bool, bool]]]) -> pd.DataFrame:
    """Results of modes a and b: task -> [(a passed, b passed) per epoch]."""
    rows: list[dict[str, Any]] = []
    for task, epochs in outcomes.items():
        for epoch, pair in enumerate(epochs):
            for mode, passed in zip(("a", "b"), pair, strict=True):
                rows.append({"run_id": "r", "suite": "s", "task_id": task, "mode": mode,
                             "provider": "p", "model": "m", "epoch": epoch, "passed": passed,
                             "score": float(passed), "status": "passed" if passed else "failed",
                             "cost_usd": 0.001, "finish_reason": "stop"})  # fmt: skip
    return pd.DataFrame(rows)


def test_with_two_epochs_split_tasks_make_the_mdd_half_the_sign_scale_one() -> None:
    """B better on 10 of 40 tasks, each split 1-0 over two epochs: the report shows +12.5 pts,
    and the MDD sits beside it in those points (it was stated on the sign scale, twice that)."""
    tasks = {f"t{i}": [(False, i < 10), (False, False)] for i in range(40)}
    (c,) = paired_comparisons(_rows(tasks), modes=["a", "b"]).to_dict("records")
    assert c["diff"] == pytest.approx(0.125)
    assert (c["size_b_better"], math.isnan(c["size_a_better"])) == (0.5, True)
    sign_scale = minimum_detectable_difference(40, 0.25)
    assert c["mdd"] == pytest.approx(sign_scale / 2)
    one_epoch = {f"t{i}": [(False, i < 10)] for i in range(40)}
    (c1,) = paired_comparisons(_rows(one_epoch), modes=["a", "b"]).to_dict("records")
    assert c1["diff"] == pytest.approx(0.25)
    assert c1["mdd"] == pytest.approx(sign_scale)  # one epoch: the scales agree


def test_a_significant_difference_below_the_mdd_says_why() -> None:
    row = {"mdd": 0.11, "diff": -0.062}
    assert below_mdd_note(row) == (
        "smaller than the 11 pts detectable at 80% power: a difference of this size is found "
        "less than 80% of the time, and this one was"
    )
    assert below_mdd_note({"mdd": 0.05, "diff": -0.062}) == ""
    assert below_mdd_note({"mdd": math.nan, "diff": 0.3}) == ""
    # 99 tasks over two epochs, each untied one split 1-0: B better on 20, A on 6. +7.1 pts,
    # p = 0.0094, and 7.5 pts detectable at 80% power.
    tasks = {f"t{i}": [(i < 6, 6 <= i < 26), (False, False)] for i in range(99)}
    (c,) = paired_comparisons(_rows(tasks), modes=["a", "b"]).to_dict("records")
    assert c["p_holm"] == pytest.approx(0.00936, abs=1e-4)
    assert (c["diff"], c["mdd"]) == pytest.approx((0.0707, 0.0745), abs=1e-4)
    assert "b passes more often than a (smaller than the" in c["verdict"]


def test_the_pass_rate_mdd_weighs_each_side_by_its_size() -> None:
    delta = minimum_detectable_difference(99, 0.4)
    lead, trail = (0.4 + delta) / 2, (0.4 - delta) / 2
    got = detectable_pass_rate_difference(99, 0.4, 0.6, 0.55)
    assert got == pytest.approx(0.6 * lead - 0.55 * trail)
    assert detectable_pass_rate_difference(99, 0.4, 0.5) == pytest.approx(0.5 * delta)
    assert math.isnan(detectable_pass_rate_difference(5, 0.4, 0.5))
    with pytest.raises(ValueError, match="sizes must be in"):
        detectable_pass_rate_difference(99, 0.4, 0.0)


@pytest.mark.timeout(300)  # a few seconds of CPU; the machine may be shared
@pytest.mark.parametrize("epochs", [1, 2])
def test_simulation_finds_the_stated_mdd_at_80_percent_power(epochs: int) -> None:
    """99 tasks (every built-in one), a small model's spread of task difficulties: the real
    difference that the sign test finds 80% of the time is the MDD the report states on such
    data, within 3 points; under the null the test rejects at most 5% of the time."""
    sim = _simulation()
    check, points = sim.check(99, epochs, -1.0, 2.5, reps=600, seed=7, step=0.1)
    assert check.null_rejections <= 0.05
    assert abs(check.diff_at_80 - check.mdd_at_80) <= 0.03, check
    assert abs(check.power_at_stated - 0.8) <= 0.08, check  # 600 draws a point: noisy
    assert points[-1].power >= 0.8
