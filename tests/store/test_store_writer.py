"""The writer: runs opening and closing, rows checked, bulk input forms, resume helpers."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest

import harness
from harness.errors import UnknownRun
from harness.store import Store, StoreError, crashed_row, result_row, results_df, runs_df
from harness.store._rows import cell_key, rows_to_arrow

RowFactory = Callable[..., dict[str, Any]]  # the make_row fixture (conftest.py)


def status(store: Store, run_id: str) -> tuple[str, bool]:
    row = store.con.execute(
        "SELECT status, finished_at IS NOT NULL FROM bench_runs WHERE run_id = ?", [run_id]
    ).fetchone()
    assert row is not None
    return row[0], row[1]


def test_begin_run_records_the_matrix(store: Store) -> None:
    run = store.begin_run(
        label="nightly",
        suites=["arithmetic", "files"],
        modes=["react"],
        providers=["mock"],
        epochs=3,
        config={"concurrency": 4, "record_mode": "none"},
        git_sha="abc123",
    )
    row = runs_df(store).iloc[0]
    assert row["run_id"] == run
    assert (row["status"], row["label"], row["git_sha"], row["epochs"]) == (
        "running", "nightly", "abc123", 3,
    )  # fmt: skip
    assert list(row["suites"]) == ["arithmetic", "files"]
    assert row["config"] == '{"concurrency":4,"record_mode":"none"}'
    assert row["harness_version"] == harness.__version__
    assert row["pid"] > 0
    assert row["host"]
    assert pd.isna(row["finished_at"])
    with pytest.raises(StoreError, match="already exists"):
        store.begin_run(run_id=run)


@pytest.mark.parametrize("end", ["finished", "interrupted", "failed"])
def test_finish_run(store: Store, end: str) -> None:
    run = store.begin_run()
    store.finish_run(run, end, error="why" if end == "failed" else None)  # type: ignore[arg-type]
    assert status(store, run) == (end, True)


def test_finish_run_errors(store: Store) -> None:
    with pytest.raises(StoreError, match="no run 'x'"):
        store.finish_run("x")
    with pytest.raises(StoreError, match="status must be"):
        store.finish_run("x", "done")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("exc", "expected"),
    [(None, "finished"), (KeyboardInterrupt, "interrupted"),
     (asyncio.CancelledError, "interrupted"), (RuntimeError, "failed")],
)  # fmt: skip
def test_context_manager_closes_open_runs(
    db_path: Path, exc: type[BaseException] | None, expected: str
) -> None:
    with pytest.raises(exc) if exc else _nothing(), Store.open(db_path) as store:
        run = store.begin_run()
        done = store.begin_run()
        store.finish_run(done)
        if exc:
            raise exc
    with Store.open(db_path, read_only=True) as ro:
        assert status(ro, run) == (expected, True)
        assert status(ro, done) == ("finished", True)


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def test_rows_are_checked(store: Store, make_row: RowFactory) -> None:
    run = store.begin_run()
    with pytest.raises(StoreError, match=r"row 0 \(s/t1/react/mock\): unknown column\(s\) \['x'\]"):
        store.write_result(make_row(run, x=1))
    with pytest.raises(StoreError, match=r"row 1 .*missing \['passed'\]"):
        store.write_results([make_row(run), make_row(run, passed=None)])
    with pytest.raises(StoreError, match="column 'epoch'"):
        store.write_result(make_row(run, epoch="first"))
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(StoreError, match="column 'deliverable': cannot encode as JSON"):
        store.write_result(make_row(run, deliverable=loop))
    with pytest.raises(UnknownRun, match=r"unknown run\(s\) \['nope'\]: begin_run first"):
        store.write_results([make_row(run), make_row("nope")])
    assert results_df(store, run).empty


def test_result_row_from_a_real_result(store: Store) -> None:
    result = harness.run(
        "q",
        provider="mock",
        provider_opts={"turns": [{"text": "hi", "usage": {"input_tokens": 7}}]},
    )
    run = store.begin_run()
    row = result_row(result, run_id=run, suite="s", task_id="t", mode="react", passed=True,
                     grader_explanation="ok", cassette="c.yaml")  # fmt: skip
    store.write_result(row)
    store.write_result(crashed_row(run_id=run, suite="s", task_id="u", mode="react",
                                   provider="mock", epoch=0, error="RuntimeError: x"))  # fmt: skip
    df = results_df(store, run, decode_json=True).set_index("task_id")
    t = df.loc["t"]
    assert (t["finish_reason"], t["category"], t["text"], t["input_tokens"]) == (
        "stop", "success", "hi", 7,
    )  # fmt: skip
    assert (t["provider"], t["score"], t["cassette"]) == ("mock", 1.0, "c.yaml")
    assert t["cell_key"] == cell_key("s", "t", "react", "mock", 0) == "s/t/react/mock/e0"
    assert t["calls"][0]["usage"]["input_tokens"] == 7  # CallRecord dataclasses as JSON
    assert t["calls"][0]["purpose"] == result.calls[0].purpose
    u = df.loc["u"]
    assert (bool(u["passed"]), u["error"], u["score"]) == (False, "RuntimeError: x", 0.0)


def test_bulk_forms(store: Store, make_row: RowFactory) -> None:
    run = store.begin_run()
    rows = [make_row(run, f"t{i}", cost_usd=i / 4, calls=[{"i": i}]) for i in range(4)]
    assert store.write_results(rows[:2]) == 2
    table = rows_to_arrow(rows[2:3])
    assert store.write_results(table) == 1
    frame = pd.DataFrame([{k: v for k, v in rows[3].items() if k != "calls"}])
    frame["calls"] = '{"i":3}'  # DataFrame / Arrow input: JSON columns as JSON text
    assert store.write_results(frame) == 1
    assert store.write_results([]) == 0
    df = results_df(store, run)
    assert list(df["cost_usd"]) == [0.0, 0.25, 0.5, 0.75]
    assert list(df["cell_key"]) == [f"s/t{i}/react/mock/e0" for i in range(4)]
    assert list(df["result_id"]) == sorted(df["result_id"])
    with pytest.raises(StoreError, match=r"unknown columns \['bogus'\]"):
        store.write_results(pa.table({"bogus": [1]}))


def test_resume_helpers(store: Store, make_row: RowFactory) -> None:
    run = store.begin_run(label="L", modes=["react"], providers=["mock"], epochs=1)
    store.write_results(
        [make_row(run, "t1"), make_row(run, "t2", passed=False, error="boom", finish_reason=None)]
    )
    store.finish_run(run, "interrupted")
    assert store.existing_cells("L") == {"s/t1/react/mock/e0", "s/t2/react/mock/e0"}
    assert store.existing_cells("L", include_crashed=False) == {"s/t1/react/mock/e0"}
    assert store.existing_cells("other") == set()
    again = store.begin_run(label="L", modes=["reflexion"], providers=["mock"], epochs=2,
                            resume=True)  # fmt: skip
    assert again == run
    row = runs_df(store, "L").iloc[0]
    assert (row["status"], row["resumed"], row["epochs"]) == ("running", 1, 2)
    assert list(row["modes"]) == ["react", "reflexion"]
    assert pd.isna(row["finished_at"])
    store.write_result(make_row(run, "t2"))  # the crashed cell, run again
    assert store.existing_cells("L", include_crashed=False) == {
        "s/t1/react/mock/e0", "s/t2/react/mock/e0",
    }  # fmt: skip
    fresh = store.begin_run(label="new", resume=True)  # nothing to resume: a new run
    assert fresh != run


def test_read_only_store_refuses_writes(store: Store, db_path: Path) -> None:
    run = store.begin_run()
    with Store.open(db_path, read_only=True) as ro:  # a reader in the writer's process
        assert ro.read_only
        with pytest.raises(StoreError, match="read-only"):
            ro.begin_run()
        assert list(runs_df(ro)["run_id"]) == [run]
    store.finish_run(run)  # the writer is unaffected by the reader's close
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.begin_run()


def test_read_only_needs_an_existing_file(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no results database"):
        Store.open(tmp_path / "none.duckdb", read_only=True)


def test_not_a_database(tmp_path: Path) -> None:
    bad = tmp_path / "bad.duckdb"
    bad.write_text("not a database" * 1000)
    with pytest.raises(StoreError, match="cannot open"):
        Store.open(bad)
