"""Per-cell diff against a baseline run."""

from __future__ import annotations

import math
from collections.abc import Callable

import pandas as pd
import pytest

from harness.report import baseline_diff, diff_counts

Rows = Callable[..., pd.DataFrame]


def test_every_status_and_cost_change(rows: Rows) -> None:
    base = rows(
        {"task_id": "flip-down", "passed": True, "cost_usd": 0.10},
        {"task_id": "flip-up", "passed": False, "cost_usd": 0.10},
        {"task_id": "keep-pass", "passed": True, "cost_usd": 0.10},
        {"task_id": "keep-fail", "passed": False, "cost_usd": None},
        {"task_id": "gone", "passed": True},
        {"task_id": "model", "passed": True, "model": "old"},
    )
    now = rows(
        {
            "task_id": "flip-down",
            "passed": False,
            "cost_usd": 0.30,
            "finish_reason": "error_max_turns",
        },
        {"task_id": "flip-up", "passed": True, "cost_usd": 0.05},
        {"task_id": "keep-pass", "passed": True, "cost_usd": 0.10},
        {"task_id": "keep-fail", "passed": False, "cost_usd": 0.2},
        {"task_id": "fresh", "passed": True},
        {"task_id": "model", "passed": True, "model": "new"},
    )
    d = baseline_diff(now, base)
    by_task = d.set_index("task_id")
    assert by_task["status"].to_dict() == {
        "flip-down": "newly_failing",
        "flip-up": "newly_passing",
        "keep-pass": "still_passing",
        "keep-fail": "still_failing",
        "gone": "missing",
        "fresh": "new",
        "model": "still_passing",
    }
    assert by_task["cost_change"].to_dict() == {
        "flip-down": "up",
        "flip-up": "down",
        "keep-pass": "same",
        "keep-fail": "unknown",
        "gone": "unknown",
        "fresh": "unknown",
        "model": "same",
    }
    assert by_task.loc["flip-down", "cost_delta"] == pytest.approx(0.20)
    assert by_task.loc["flip-down", "finish_reason_now"] == "error_max_turns"
    assert bool(by_task.loc["model", "model_changed"]) is True
    assert math.isnan(by_task.loc["keep-fail", "cost_base"])  # type: ignore[arg-type]  # a float column
    # Newly failing first, then newly passing.
    assert list(d["task_id"][:2]) == ["flip-down", "flip-up"]
    assert diff_counts(d) == {
        "newly_failing": 1,
        "newly_passing": 1,
        "still_failing": 1,
        "still_passing": 2,
        "new": 1,
        "missing": 1,
        "cost_up": 1,
        "cost_down": 1,
        "model_changed": 1,
    }


def test_cells_are_matched_on_the_whole_key(rows: Rows) -> None:
    base = rows({"epoch": 0}, {"epoch": 1}, {"provider": "openai"})
    now = rows({"epoch": 0, "passed": False}, {"epoch": 1}, {"mode": "reflexion"})
    counts = diff_counts(baseline_diff(now, base))
    assert (counts["newly_failing"], counts["still_passing"]) == (1, 1)
    assert (counts["new"], counts["missing"]) == (1, 1)
