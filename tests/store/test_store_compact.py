"""Compaction of a long run: exact duplicates dropped across batches, and the memory of one
batch, not of the run (issue 12: peak RSS flat in the number of cells)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from harness.store import Store
from harness.store import _compact as compact_module
from harness.store._spans import SPAN_ARROW_SCHEMA


def _spans(run_id: str, ids: range, trace: str = "t") -> pa.Table:
    n = len(ids)
    start = datetime(2026, 1, 1)
    columns: dict[str, list[Any]] = {
        "run_id": [run_id] * n,
        "trace_id": [f"{trace}{i // 10:031x}" for i in ids],
        "span_id": [f"{i:016x}" for i in ids],
        "parent_span_id": [None] * n,
        "name": ["chat mock"] * n,
        "kind": ["client"] * n,
        "start_time": [start] * n,
        "end_time": [start] * n,
        "duration_ms": [0.0] * n,
        "status_code": ["UNSET"] * n,
        "status_message": [None] * n,
        "attributes": ['{"k": 1}'] * n,
        "events": [None] * n,
    }
    return pa.table(columns, schema=SPAN_ARROW_SCHEMA)


def _finished_run(store: Store, make: Callable[[str], list[pa.Table]]) -> str:
    run_id = store.begin_run(label="long")
    shards = make(run_id)
    folder = store.runs / run_id
    folder.mkdir(parents=True, exist_ok=True)
    for n, table in enumerate(shards):
        pq.write_table(table, folder / f"spans-test-{n:06d}.parquet")
    store.finish_run(run_id, "finished")
    return run_id


def _count(store: Store, run_id: str) -> tuple[int, int]:
    with store._access.moment() as con:
        row = con.execute(
            "SELECT count(*), count(DISTINCT (trace_id, span_id)) FROM spans_compacted "
            "WHERE run_id = ?",
            [run_id],
        ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


def test_duplicates_across_batches_are_stored_once(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(compact_module, "BATCH_FILES", 2)

    def make(run_id: str) -> list[pa.Table]:
        shards = [_spans(run_id, range(i * 50, i * 50 + 50)) for i in range(5)]
        return [*shards, _spans(run_id, range(120))]  # repeats spans of the first 3 shards

    run_id = _finished_run(store, make)
    stats = store.compact()
    assert stats.spans == 250
    assert _count(store, run_id) == (250, 250)
    assert store.compact().spans == 0


def test_memory_is_that_of_a_batch_not_of_the_run(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A memory limit that one batch fits in but the run's compacted spans do not: the
    duplicate check must not build a table of every span the run already compacted (it did,
    ran out of memory and was retried without the limit)."""
    monkeypatch.setattr(compact_module, "BATCH_FILES", 2)
    limited = ("memory_limit = '32MB'", "threads = 1", "preserve_insertion_order = false")
    monkeypatch.setattr(compact_module, "COMPACT_SETTINGS", limited)
    retried: list[str] = []
    real = compact_module._compact_all

    def once(con: duckdb.DuckDBPyConnection, *args: object) -> None:
        retried.append(str(con.execute("SELECT current_setting('memory_limit')").fetchone()))
        real(con, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(compact_module, "_compact_all", once)
    per_shard, shards = 2_000, 100
    run_id = _finished_run(
        store,
        lambda run: [_spans(run, range(i * per_shard, (i + 1) * per_shard)) for i in range(shards)],
    )
    stats = store.compact()
    assert stats.spans == per_shard * shards
    assert _count(store, run_id) == (per_shard * shards,) * 2
    assert len(retried) == 1, f"ran out of memory and was retried without the limit: {retried}"
