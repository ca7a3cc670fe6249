"""The views and read helpers on a database built from known results: every number asserted."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from harness.errors import StoreError
from harness.store import (
    Store,
    cells_df,
    latest_run_id,
    mode_summary_df,
    no_progress_df,
    resolve_run_id,
    results_df,
    runs_df,
    span_tree_df,
    spans_df,
    tool_calls_df,
)

T0 = datetime(2026, 1, 1, 12, 0, 0)

RowFactory = Callable[..., dict[str, Any]]  # the make_row fixture (conftest.py)


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def cell(
    make_row: RowFactory,
    run_id: str,
    task: str,
    minute: int,
    *,
    cost: float | None,
    tokens: tuple[int, int],
    iterations: int,
    **more: Any,
) -> dict[str, Any]:
    return make_row(
        run_id,
        task,
        cost_usd=cost,
        input_tokens=tokens[0],
        output_tokens=tokens[1],
        iterations=iterations,
        llm_calls=iterations + 1,
        tool_calls=iterations,
        duration_ms=1000.0 * iterations,
        finished_at=at(minute),
        **more,
    )


@pytest.fixture
def known(store: Store, make_row: RowFactory) -> dict[str, str]:
    """Run A (label L1): react/mock t1..t4 (t4 crashed, then re-ran), reflexion/mock t1 (no
    progress) and t2 (crashed), react/openai t1 e0/e1. Run B (label L1, later): react/mock t1
    failed. Run C (no label): react/mock t1."""
    a = store.begin_run(label="L1", run_id="A", suites=["s"], modes=["react", "reflexion"])
    snapshot = [{"role": "assistant", "content": "again"}]
    store.write_results(
        [
            cell(make_row, a, "t1", 1, cost=0.25, tokens=(100, 10), iterations=2),
            cell(
                make_row, a, "t2", 2, cost=0.75, tokens=(300, 30), iterations=4, passed=False,
                finish_reason="error_max_turns",
            ),
            cell(
                make_row, a, "t3", 3, cost=None, tokens=(50, 5), iterations=1,
                finish_reason="submitted", deliverable={"answer": 395},
            ),
            make_row(a, "t4", passed=False, finish_reason=None, error="boom", finished_at=at(4)),
            cell(
                make_row, a, "t1", 6, cost=0.5, tokens=(500, 50), iterations=6, passed=False,
                mode="reflexion", finish_reason="error_no_progress",
                no_progress_snapshot=snapshot,
            ),
            make_row(
                a, "t2", mode="reflexion", passed=False, finish_reason=None, error="crash",
                finished_at=at(7),
            ),
            cell(make_row, a, "t1", 8, cost=0.25, tokens=(10, 1), iterations=1, provider="openai"),
            cell(
                make_row, a, "t1", 9, cost=1.0, tokens=(30, 3), iterations=3, provider="openai",
                epoch=1, passed=False,
            ),
        ]
    )  # fmt: skip
    # The crashed t4 re-ran later in the same run (write_result: the per-cell path).
    store.write_result(cell(make_row, a, "t4", 10, cost=0.5, tokens=(200, 20), iterations=3))
    store.finish_run(a)
    b = store.begin_run(label="L1", run_id="B")
    store.write_result(
        cell(make_row, b, "t1", 20, cost=0.125, tokens=(1, 1), iterations=1, passed=False)
    )
    store.finish_run(b, "interrupted")
    c = store.begin_run(run_id="C")
    store.write_result(cell(make_row, c, "t1", 30, cost=0.25, tokens=(1, 1), iterations=1))
    store.finish_run(c)
    return {"a": a, "b": b, "c": c}


def test_mode_summary_numbers(store: Store, known: dict[str, str]) -> None:
    df = mode_summary_df(store, "A")
    rows = {(r["mode"], r["provider"]): r for r in df.to_dict("records")}
    assert list(zip(df["mode"], df["provider"], strict=True)) == [
        ("react", "mock"),
        ("react", "openai"),
        ("reflexion", "mock"),
    ]
    react = rows["react", "mock"]
    assert {k: react[k] for k in ("run_id", "label", "n", "passed", "failed", "crashed")} == {
        "run_id": "A", "label": "L1", "n": 4, "passed": 3, "failed": 1, "crashed": 0,
    }  # fmt: skip
    assert react["pass_rate"] == 0.75
    assert react["cost_known"] == 3  # t3's cost is unknown (NULL), not zero
    assert react["mean_cost_usd"] == 0.5  # (0.25 + 0.75 + 0.5) / 3
    assert react["median_cost_usd"] == 0.5
    assert react["total_cost_usd"] == 1.5
    assert react["mean_input_tokens"] == 162.5  # (100 + 300 + 50 + 200) / 4
    assert react["mean_output_tokens"] == 16.25
    assert react["mean_total_tokens"] == 178.75
    assert react["total_input_tokens"] == 650
    assert react["total_output_tokens"] == 65
    assert react["mean_iterations"] == 2.5
    assert react["mean_llm_calls"] == 3.5
    assert react["mean_tool_calls"] == 2.5
    assert react["mean_duration_ms"] == 2500.0
    assert react["finish_reasons"] == {"stop": 2, "error_max_turns": 1, "submitted": 1}

    openai = rows["react", "openai"]
    assert (openai["n"], openai["passed"], openai["pass_rate"]) == (2, 1, 0.5)
    assert openai["median_cost_usd"] == 0.625  # even count: the mean of the middle two
    assert openai["mean_cost_usd"] == 0.625
    assert openai["total_cost_usd"] == 1.25
    assert openai["finish_reasons"] == {"stop": 2}

    reflexion = rows["reflexion", "mock"]
    assert (reflexion["n"], reflexion["passed"], reflexion["crashed"]) == (2, 0, 1)
    assert reflexion["pass_rate"] == 0.0
    assert reflexion["cost_known"] == 1
    assert reflexion["mean_cost_usd"] == reflexion["total_cost_usd"] == 0.5
    assert reflexion["mean_input_tokens"] == 500.0  # the crashed cell has no tokens
    assert reflexion["mean_iterations"] == 6.0
    assert reflexion["finish_reasons"] == {"error_no_progress": 1, "crashed": 1}


def test_mode_summary_of_every_run(store: Store, known: dict[str, str]) -> None:
    df = mode_summary_df(store)
    assert list(df["run_id"]) == ["A", "A", "A", "B", "C"]
    b = df[df["run_id"] == "B"].iloc[0]
    assert (b["n"], b["passed"], b["pass_rate"], b["total_cost_usd"]) == (1, 0, 0.0, 0.125)


def test_cells_latest_per_series(store: Store, known: dict[str, str]) -> None:
    df = cells_df(store)
    assert sorted(set(df["series"])) == ["C", "L1"]
    l1 = df[df["series"] == "L1"]
    assert len(l1) == 8
    keys = list(zip(l1["task_id"], l1["mode"], l1["provider"], l1["epoch"], strict=True))
    assert keys == [  # ordered by suite, task, mode, provider, epoch
        ("t1", "react", "mock", 0),
        ("t1", "react", "openai", 0),
        ("t1", "react", "openai", 1),
        ("t1", "reflexion", "mock", 0),
        ("t2", "react", "mock", 0),
        ("t2", "reflexion", "mock", 0),
        ("t3", "react", "mock", 0),
        ("t4", "react", "mock", 0),
    ]
    latest = l1.set_index(["mode", "provider", "task_id", "epoch"])
    # t1 react/mock: run B's later (failed) result wins over run A's pass.
    assert latest.loc[("react", "mock", "t1", 0), "run_id"] == "B"
    assert not latest.loc[("react", "mock", "t1", 0), "passed"]
    # t4: the re-run after the crash.
    assert pd.isna(latest.loc[("react", "mock", "t4", 0), "error"])  # type: ignore[arg-type]
    assert bool(latest.loc[("react", "mock", "t4", 0), "passed"])
    assert list(cells_df(store, "C")["run_id"]) == ["C"]
    assert set(l1["cell_key"]) >= {"s/t1/react/mock/e0", "s/t1/react/openai/e1"}


def test_results_df_latest_and_all(store: Store, known: dict[str, str]) -> None:
    assert len(results_df(store, "A")) == 8
    every = results_df(store, "A", latest_only=False)
    assert len(every) == 9
    t4 = every[every["task_id"] == "t4"]
    assert list(t4["error"].fillna("-")) == ["boom", "-"]
    decoded = results_df(store, "A", decode_json=True)
    t3 = decoded[decoded["task_id"] == "t3"].iloc[0]
    assert t3["deliverable"] == {"answer": 395}
    assert results_df(store, "A")["deliverable"].dropna().tolist() == ['{"answer":395}']


def test_no_progress_cells(store: Store, known: dict[str, str]) -> None:
    df = no_progress_df(store, "A")
    assert df[["mode", "task_id", "iterations"]].to_dict("records") == [
        {"mode": "reflexion", "task_id": "t1", "iterations": 6}
    ]
    assert df["no_progress_snapshot"][0] == [{"role": "assistant", "content": "again"}]


def test_runs_and_run_ids(store: Store, known: dict[str, str]) -> None:
    runs = runs_df(store)
    assert list(runs["run_id"]) == ["C", "B", "A"]  # newest first
    assert list(runs["status"]) == ["finished", "interrupted", "finished"]
    assert list(runs["n_results"]) == [1, 1, 9]
    assert list(runs_df(store, "L1")["run_id"]) == ["B", "A"]
    assert latest_run_id(store) == "C"
    assert latest_run_id(store, "L1") == "B"
    assert latest_run_id(store, "nope") is None
    assert resolve_run_id(store, "latest") == "C"
    assert resolve_run_id(store, "A") == "A"
    with pytest.raises(StoreError, match="no run 'Z'"):
        resolve_run_id(store, "Z")


def test_resolve_on_an_empty_database(store: Store) -> None:
    with pytest.raises(StoreError, match="no run yet"):
        resolve_run_id(store)


# --- spans ---------------------------------------------------------------------------------


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def span(
    span_id: str,
    name: str,
    start_ms: int,
    dur_ms: int,
    parent: str = "",
    *,
    error: bool = False,
    trace: str = "t" * 32,
    **attrs: Any,
) -> dict[str, Any]:
    start = 1_700_000_000_000_000_000 + start_ms * 1_000_000
    return {
        "traceId": trace,
        "spanId": span_id,
        "parentSpanId": parent,
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + dur_ms * 1_000_000),
        "attributes": [_attr(k.replace("_", "."), v) for k, v in attrs.items()],
        "status": {"code": 2, "message": "failed"} if error else {"code": 0},
        "resource": {"attributes": []},
        "scope": {"name": "harness", "version": ""},
    }


def write_jsonl(path: Path, spans: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(s) + "\n" for s in spans), encoding="utf-8")
    return path


def test_tool_calls_and_span_tree(store: Store, known: dict[str, str], tmp_path: Path) -> None:
    tool = "gen_ai_tool_name"
    tool_attr: dict[str, Any] = {tool: "calculator"}
    spans = [
        span("r", "invoke_agent react", 0, 100),
        span("i1", "iteration 1", 1, 50, "r"),
        span("c1", "chat m", 2, 20, "i1"),
        span("x1", "execute_tool calculator", 30, 10, "i1", **tool_attr),
        span("x2", "execute_tool calculator", 31, 20, "i1", error=True, **tool_attr),
        span("i2", "iteration 2", 60, 30, "r"),
        span("x3", "execute_tool calculator", 61, 30, "i2", **tool_attr),
        span("x4", "execute_tool kv_get", 62, 5, "i2"),  # no tool attribute: from the name
    ]
    store.ingest_spans("A", write_jsonl(tmp_path / "s.jsonl", spans))
    df = tool_calls_df(store, "A")
    assert df[["tool", "calls", "errors"]].to_dict("records") == [
        {"tool": "calculator", "calls": 3, "errors": 1},
        {"tool": "kv_get", "calls": 1, "errors": 0},
    ]
    calc = df.iloc[0]
    assert calc["error_rate"] == 1 / 3
    assert (calc["mean_ms"], calc["median_ms"], calc["max_ms"]) == (20.0, 20.0, 30.0)
    assert calc["p95_ms"] == pytest.approx(29.0)
    tree = span_tree_df(store, "t" * 32)
    assert list(tree["span"]) == [
        "invoke_agent react",
        "  iteration 1",
        "    chat m",
        "    execute_tool calculator",
        "    execute_tool calculator",
        "  iteration 2",
        "    execute_tool calculator",
        "    execute_tool kv_get",
    ]
    assert list(tree["depth"]) == [0, 1, 2, 2, 2, 1, 2, 2]
    assert list(tree["span_id"])[3:5] == ["x1", "x2"]
    assert len(spans_df(store, run_id="A")) == 8
    assert spans_df(store, trace_id="nope").empty
