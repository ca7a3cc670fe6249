"""Every number of the summary, finish-reason and pass@k tables on known results."""

from __future__ import annotations

import math
from collections.abc import Callable

import pandas as pd
import pytest
from statsmodels.stats.proportion import proportion_confint  # type: ignore[import-untyped]

from harness.report import (
    ReportInputError,
    finish_reason_table,
    pass_k_table,
    prepare_results,
    summary_table,
)

Rows = Callable[..., pd.DataFrame]


@pytest.fixture
def known(rows: Rows) -> pd.DataFrame:
    react = [
        # passed, cost, in, out, iterations, llm, tools, ms, finish
        (True, 0.01, 100, 10, 1, 2, 1, 100, "stop"),
        (True, 0.02, 200, 20, 2, 2, 1, 200, "stop"),
        (False, None, 300, 30, 3, 3, 2, 300, "error_max_turns"),
        (True, 0.03, 400, 40, 4, 3, 2, 400, "submitted"),
        (False, 0.04, 500, 50, 5, 5, 4, 1000, "error_max_turns"),
    ]
    reflexion = [
        (True, 0.02, 150, 15, 2, 3, 1, 150, "stop"),
        (True, 0.04, 250, 25, 2, 3, 1, 250, "stop"),
        (True, 0.05, 350, 35, 3, 4, 2, 350, "stop"),
        (True, 0.05, 450, 45, 6, 7, 5, 450, "submitted"),
        (False, 0.09, 550, 55, 7, 8, 6, 550, "error_no_progress"),
    ]
    specs = []
    for mode, cells in (("react", react), ("reflexion", reflexion)):
        for i, (passed, cost, tin, tout, it, llm, tools, ms, fin) in enumerate(cells):
            specs.append(
                {
                    "mode": mode,
                    "task_id": f"t{i + 1}",
                    "passed": passed,
                    "cost_usd": cost,
                    "input_tokens": tin,
                    "output_tokens": tout,
                    "iterations": it,
                    "llm_calls": llm,
                    "tool_calls": tools,
                    "duration_ms": ms,
                    "finish_reason": fin,
                }
            )
    return rows(*specs)


def test_summary_every_number(known: pd.DataFrame) -> None:
    s = summary_table(known).set_index("mode")
    assert list(s.index) == ["react", "reflexion"]
    r = s.loc["react"]
    assert (r["provider"], r["n"], r["passed"]) == ("live", 5, 3)
    assert r["pass_rate"] == pytest.approx(0.6)
    assert (r["pass_ci_low"], r["pass_ci_high"]) == pytest.approx(
        proportion_confint(3, 5, method="wilson")
    )
    assert r["pass_ci_low"] == pytest.approx(0.2307, abs=1e-4)
    assert r["pass_ci_high"] == pytest.approx(0.8824, abs=1e-4)
    assert (r["cost_known"], r["cost_unknown"]) == (4, 1)
    assert r["cost_mean"] == pytest.approx(0.025)
    assert r["cost_median"] == pytest.approx(0.025)
    assert r["cost_total"] == pytest.approx(0.10)
    assert r["input_tokens_mean"] == pytest.approx(300)
    assert r["output_tokens_mean"] == pytest.approx(30)
    assert r["tokens_total"] == pytest.approx(1650)
    assert r["iterations_mean"] == pytest.approx(3)
    assert r["iterations_median"] == pytest.approx(3)
    assert r["llm_calls_mean"] == pytest.approx(3)
    assert r["tool_calls_mean"] == pytest.approx(2)
    assert r["duration_ms_median"] == pytest.approx(300)
    assert r["finish_reasons"] == "error_max_turns 2, stop 2, submitted 1"

    f = s.loc["reflexion"]
    assert (f["n"], f["passed"], f["pass_rate"]) == (5, 4, pytest.approx(0.8))
    assert (f["pass_ci_low"], f["pass_ci_high"]) == pytest.approx((0.3755, 0.9638), abs=1e-4)
    assert (f["cost_known"], f["cost_unknown"]) == (5, 0)
    assert f["cost_mean"] == pytest.approx(0.05)
    assert f["cost_median"] == pytest.approx(0.05)
    assert f["cost_total"] == pytest.approx(0.25)
    assert f["input_tokens_mean"] == pytest.approx(350)
    assert f["output_tokens_mean"] == pytest.approx(35)
    assert f["tokens_total"] == pytest.approx(1925)
    assert f["iterations_mean"] == pytest.approx(4)
    assert f["iterations_median"] == pytest.approx(3)
    assert f["llm_calls_mean"] == pytest.approx(5)
    assert f["tool_calls_mean"] == pytest.approx(3)
    assert f["duration_ms_median"] == pytest.approx(350)
    assert f["finish_reasons"] == "stop 3, error_no_progress 1, submitted 1"


def test_summary_groups_by_mode_and_provider(rows: Rows) -> None:
    df = rows(
        {"mode": "react", "provider": "openai", "passed": False},
        {"mode": "react", "provider": "mock", "task_id": "a"},
        {"mode": "react", "provider": "mock", "task_id": "b", "passed": False},
    )
    s = summary_table(df)
    assert list(zip(s["mode"], s["provider"], s["n"], s["passed"], strict=True)) == [
        ("react", "mock", 2, 1),
        ("react", "openai", 1, 0),
    ]


def test_summary_with_no_known_cost(rows: Rows) -> None:
    s = summary_table(rows({"cost_usd": None}, {"task_id": "u", "cost_usd": float("nan")}))
    r = s.iloc[0]
    assert (r["cost_known"], r["cost_unknown"]) == (0, 2)
    assert math.isnan(r["cost_mean"])
    assert math.isnan(r["cost_total"])


def test_finish_reason_table(known: pd.DataFrame) -> None:
    f = finish_reason_table(known).set_index("mode")
    assert list(f.columns) == [
        "provider",
        "stop",
        "error_max_turns",
        "submitted",
        "error_no_progress",
    ]
    # pandas-stubs types .loc[label, [columns]] as a Series or a DataFrame (no .tolist() there)
    assert f.loc[  # type: ignore[operator]
        "react", ["stop", "error_max_turns", "submitted", "error_no_progress"]
    ].tolist() == [2, 2, 1, 0]
    assert f.loc[  # type: ignore[operator]
        "reflexion", ["stop", "error_max_turns", "submitted", "error_no_progress"]
    ].tolist() == [3, 0, 1, 1]


def test_pass_k_over_epochs(rows: Rows) -> None:
    # Task a: 3 of 4 epochs pass; task b: 1 of 4. k defaults to 4 (every task has 4 epochs).
    specs = [{"task_id": "a", "epoch": e, "passed": e != 0} for e in range(4)]
    specs += [{"task_id": "b", "epoch": e, "passed": e == 2} for e in range(4)]
    t = pass_k_table(rows(*specs)).iloc[0]
    assert (t["tasks"], t["k"], t["tasks_short"]) == (2, 4, 0)
    assert t["pass_at_1"] == pytest.approx((0.75 + 0.25) / 2)
    assert t["pass_at_k"] == pytest.approx(1.0)
    assert t["pass_hat_k"] == pytest.approx(0.0)
    t2 = pass_k_table(rows(*specs), k=2).iloc[0]
    # pass@2: a = 1 - C(1,2)/C(4,2) = 1; b = 1 - C(3,2)/C(4,2) = 0.5. pass^2: a = 3/6, b = 0.
    assert t2["pass_at_k"] == pytest.approx(0.75)
    assert t2["pass_hat_k"] == pytest.approx(0.25)


def test_pass_k_leaves_out_short_tasks(rows: Rows) -> None:
    specs = [{"task_id": "a", "epoch": e} for e in range(3)] + [{"task_id": "b"}]
    t = pass_k_table(rows(*specs), k=3).iloc[0]
    assert (t["tasks"], t["tasks_short"], t["pass_hat_k"]) == (1, 1, 1.0)
    with pytest.raises(ReportInputError, match="k >= 1"):
        pass_k_table(rows(*specs), k=0)


def test_prepare_names_missing_columns() -> None:
    with pytest.raises(ReportInputError, match="missing column\\(s\\) epoch, passed"):
        prepare_results(
            pd.DataFrame({"suite": ["s"], "task_id": ["t"], "mode": ["m"], "provider": ["p"]})
        )


def test_prepare_dedupes_and_warns(rows: Rows) -> None:
    df = rows({"passed": True}, {"passed": False}, {"task_id": "u", "passed": None})
    prepared, warnings = prepare_results(df)
    assert len(prepared) == 2
    assert prepared.set_index("task_id").loc["t", "passed"] == False  # noqa: E712 - kept last
    assert any("duplicate" in w for w in warnings)
    assert any("without a pass/fail verdict" in w for w in warnings)


def test_prepare_accepts_minimal_frame() -> None:
    df = pd.DataFrame(
        {
            "suite": ["s"],
            "task_id": ["t"],
            "mode": ["m"],
            "provider": ["p"],
            "epoch": [0],
            "passed": [True],
        }
    )
    s = summary_table(df).iloc[0]
    assert (s["n"], s["cost_unknown"], s["finish_reasons"]) == (1, 1, "unknown 1")


def test_prepare_rejects_bad_epoch(rows: Rows) -> None:
    with pytest.raises(ReportInputError, match="epoch"):
        prepare_results(rows({"epoch": "first"}))
