"""The results store: DuckDB tables ``bench_runs``, ``results`` and ``spans``, the views of
docs/sql.md, and pandas read helpers.

Importing ``harness`` never imports this package (it needs duckdb, pandas and pyarrow).
"""

from __future__ import annotations

from harness.store._queries import (
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
from harness.store._rows import cell_key, crashed_row, result_row
from harness.store._schema import SCHEMA_VERSION
from harness.store._writer import DEFAULT_DB, RunStatus, Store
from harness.store.errors import SchemaTooNew, StoreError, StoreLocked

__all__ = [
    "DEFAULT_DB",
    "SCHEMA_VERSION",
    "RunStatus",
    "SchemaTooNew",
    "Store",
    "StoreError",
    "StoreLocked",
    "cell_key",
    "cells_df",
    "crashed_row",
    "latest_run_id",
    "mode_summary_df",
    "no_progress_df",
    "resolve_run_id",
    "result_row",
    "results_df",
    "runs_df",
    "span_tree_df",
    "spans_df",
    "tool_calls_df",
]
