"""``v_mode_summary`` counts exactly what the report counts: errored cells are out of every rate
and mean, the pass rate is over tasks, costs over the scored cells whose cost is known."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from harness.report import build_report, load_run
from harness.store import Store, mode_summary_df


def _frame() -> pd.DataFrame:
    rows = []
    for provider in ("mock", "live"):
        for mode in ("react", "reflexion"):
            for t in range(5):
                for epoch in range(3):
                    passed = (t + epoch + (mode == "react")) % 3 != 0
                    errored = (t == 4 and epoch == 2) or (
                        mode == "reflexion" and t == 0 and epoch == 1
                    )
                    rows.append(
                        {
                            "run_id": "R",
                            "suite": "s",
                            "task_id": f"t{t}",
                            "mode": mode,
                            "provider": provider,
                            "model": "m",
                            "epoch": epoch,
                            # An errored cell, as the runner stores one: not passed, zeros for
                            # what it never got to (the view used to average those zeros in).
                            "passed": False if errored else passed,
                            "status": "error" if errored else ("passed" if passed else "failed"),
                            "error": "CassetteMiss: boom" if errored else None,
                            "finish_reason": None if errored else "stop",
                            "iterations": 0 if errored else 1 + (t + epoch) % 4,
                            "tool_calls": 0 if errored else (t * epoch) % 3,
                            "llm_calls": 0 if errored else 2 + t % 2,
                            "input_tokens": 0 if errored else 100 * (t + 1) + epoch,
                            "output_tokens": 0 if errored else 10 + t,
                            "cost_usd": None
                            if (errored or (t == 2 and epoch == 0))
                            else (0.0 if provider == "mock" else 0.001 * (t + 1) * (epoch + 1)),
                            "duration_ms": 5.0,
                        }
                    )
    return pd.DataFrame(rows)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "harness.duckdb"
    with Store.open(path) as store:
        store.begin_run(run_id="R", label="views")
        store.write_results(_frame())
        store.finish_run("R")
    return path


def test_view_and_report_give_the_same_numbers(db: Path) -> None:
    store = Store.open(db, read_only=True)
    try:
        view = mode_summary_df(store, "R").set_index(["mode", "provider"])
    finally:
        store.close()
    _, frame = load_run(db, "R")
    report = build_report(frame, n_resamples=100).summary.set_index(["mode", "provider"])
    assert sorted(view.index) == sorted(report.index)
    pairs = {
        "scored": "n",
        "passed": "passed",
        "errors": "errors",
        "tasks": "tasks",
        "pass_rate": "pass_rate",
        "cost_known": "cost_known",
        "mean_cost_usd": "cost_mean",
        "median_cost_usd": "cost_median",
        "total_cost_usd": "cost_total",
        "mean_input_tokens": "input_tokens_mean",
        "mean_output_tokens": "output_tokens_mean",
        "mean_iterations": "iterations_mean",
        "mean_llm_calls": "llm_calls_mean",
        "mean_tool_calls": "tool_calls_mean",
    }
    for key in view.index:
        for v, r in pairs.items():
            assert float(view.loc[key, v]) == pytest.approx(float(report.loc[key, r])), (key, v)
    # Errored cells are counted apart: 2 per (provider, reflexion), 1 per (provider, react).
    # (pandas-stubs types .loc[key, column], and .loc[key] of a MultiIndex, as any one scalar)
    assert int(view.loc[("reflexion", "live"), "errors"]) == 2  # type: ignore[arg-type]
    assert int(view.loc[("reflexion", "live"), "n"]) == 15  # type: ignore[arg-type]
    assert int(view.loc[("reflexion", "live"), "scored"]) == 13  # type: ignore[arg-type]
    # The task-weighted pass rate differs from passed / scored when epochs are uneven.
    row: pd.Series[Any] = view.loc[("reflexion", "live")]  # type: ignore[assignment]
    assert row["pass_rate"] != pytest.approx(row["passed"] / row["scored"])
    # Mock cost is 0.0, not NULL: it counts as known.
    assert float(view.loc[("react", "mock"), "total_cost_usd"]) == 0.0  # type: ignore[arg-type]
    # 15 - 1 errored - 1 unknown
    assert int(view.loc[("react", "mock"), "cost_known"]) == 13  # type: ignore[arg-type]
