"""The results store: DuckDB tables ``bench_runs``, ``results`` and ``spans``, the views of
docs/sql.md, and pandas read helpers.

Importing ``harness`` never imports this package (it needs duckdb, pandas and pyarrow).
"""

from __future__ import annotations

from harness.errors import SchemaTooNew, StoreError, StoreLocked
from harness.store._browse import (
    GridFilters,
    cell_detail,
    cell_spans,
    report_frame,
    run_grid,
    runs_overview,
)
from harness.store._compare_runs import compare_cells
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
from harness.store._transcript import decode_transcript, encode_transcript
from harness.store._writer import Store

__all__ = [
    "SCHEMA_VERSION",
    "GridFilters",
    "SchemaTooNew",
    "Store",
    "StoreError",
    "StoreLocked",
    "cell_detail",
    "cell_key",
    "cell_spans",
    "cells_df",
    "compare_cells",
    "crashed_row",
    "decode_transcript",
    "encode_transcript",
    "latest_run_id",
    "mode_summary_df",
    "no_progress_df",
    "report_frame",
    "resolve_run_id",
    "result_row",
    "results_df",
    "run_grid",
    "runs_df",
    "runs_overview",
    "span_tree_df",
    "spans_df",
    "tool_calls_df",
]
