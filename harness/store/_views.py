"""The store's views (docs/sql.md): ``results`` and ``spans`` (the compacted tables plus the
shards not compacted yet) and the views derived from them. They are dropped and re-created after
every read-write open (:func:`create_views`), so changing one needs no migration; a reader that
must leave damaged shards out gets its own temporary copies (:func:`skip_shards`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

import duckdb

from harness.store._schema import JSON_COLUMNS, SPAN_JSON_COLUMNS

__all__ = ["VIEWS", "changed_views", "create_views", "drop_views", "skip_shards"]

_CELL = "suite, task_id, mode, provider, epoch"


def _live(kind: str, json_columns: Sequence[str]) -> str:
    """A compacted table plus the shards of ``kind`` not compacted yet (``{runs}``: the runs
    folder, filled in by :func:`create_views`); shards of runs this file does not list (another
    database in the same folder) are left out."""
    casts = ", ".join(f"{c}::JSON AS {c}" for c in json_columns)
    return f"""
SELECT * FROM {kind}_compacted
UNION ALL BY NAME
SELECT * EXCLUDE (filename) REPLACE ({casts})
FROM read_parquet('{{runs}}/*/{kind}-*.parquet', union_by_name = true, filename = true)
WHERE filename NOT IN (SELECT file FROM compacted_shards)
  AND run_id IN (SELECT run_id FROM bench_runs)"""


VIEWS: dict[str, str] = {
    "results": _live("results", sorted(JSON_COLUMNS)),
    "spans": _live("spans", SPAN_JSON_COLUMNS),
    # The latest result of each cell within each run (a cell re-run in the same run: the last).
    "v_run_cells": f"""
SELECT r.*, b.label
FROM results r LEFT JOIN bench_runs b USING (run_id)
QUALIFY row_number() OVER (
    PARTITION BY r.run_id, {_CELL} ORDER BY r.finished_at DESC, r.result_id DESC) = 1""",
    # The latest result of each cell per series: runs sharing a label form one series (resumes
    # and reruns of the same label); an unlabelled run is a series of its own.
    "v_cells": f"""
SELECT coalesce(b.label, r.run_id) AS series, b.label, r.*
FROM results r LEFT JOIN bench_runs b USING (run_id)
QUALIFY row_number() OVER (
    PARTITION BY coalesce(b.label, r.run_id), {_CELL}
    ORDER BY r.finished_at DESC, r.result_id DESC) = 1""",
    # Counted exactly as the report counts (harness/report/_tables.py): errored cells (status
    # 'error': could not be scored) are left out of every rate and mean and counted in
    # `errors`; the pass rate is the mean over tasks of each task's pass rate over its epochs;
    # costs are over the scored cells whose cost is known.
    "v_mode_summary": """
WITH scored AS (
    SELECT * FROM v_run_cells WHERE status IS DISTINCT FROM 'error'
),
per_task AS (
    SELECT run_id, mode, provider, suite, task_id, avg(passed::INTEGER) AS task_pass_rate
    FROM scored GROUP BY run_id, mode, provider, suite, task_id
),
rates AS (
    SELECT run_id, mode, provider, count(*) AS tasks, avg(task_pass_rate) AS pass_rate
    FROM per_task GROUP BY run_id, mode, provider
),
means AS (
    SELECT
        run_id, mode, provider,
        count(*) AS scored,
        count(cost_usd) AS cost_known,
        avg(cost_usd) AS mean_cost_usd,
        median(cost_usd) AS median_cost_usd,
        sum(cost_usd) AS total_cost_usd,
        avg(input_tokens) AS mean_input_tokens,
        avg(output_tokens) AS mean_output_tokens,
        avg(input_tokens + output_tokens) AS mean_total_tokens,
        sum(input_tokens) AS total_input_tokens,
        sum(output_tokens) AS total_output_tokens,
        avg(iterations) AS mean_iterations,
        avg(llm_calls) AS mean_llm_calls,
        avg(tool_calls) AS mean_tool_calls,
        avg(duration_ms) AS mean_duration_ms
    FROM scored GROUP BY run_id, mode, provider
),
everything AS (
    SELECT
        run_id,
        any_value(label) AS label,
        mode,
        provider,
        count(*) AS n,
        count_if(status IS DISTINCT FROM 'error' AND passed)::BIGINT AS passed,
        count_if(status IS DISTINCT FROM 'error' AND NOT passed)::BIGINT AS failed,
        count_if(status = 'error')::BIGINT AS errors,
        count_if(error IS NOT NULL)::BIGINT AS crashed,
        histogram(coalesce(finish_reason, 'crashed')) AS finish_reasons
    FROM v_run_cells GROUP BY run_id, mode, provider
)
SELECT
    e.run_id, e.label, e.mode, e.provider, e.n,
    coalesce(m.scored, 0)::BIGINT AS scored,
    e.passed, e.failed, e.errors,
    r.pass_rate,
    coalesce(r.tasks, 0)::BIGINT AS tasks,
    e.crashed,
    coalesce(m.cost_known, 0)::BIGINT AS cost_known,
    m.mean_cost_usd, m.median_cost_usd, m.total_cost_usd,
    m.mean_input_tokens, m.mean_output_tokens, m.mean_total_tokens,
    m.total_input_tokens, m.total_output_tokens,
    m.mean_iterations, m.mean_llm_calls, m.mean_tool_calls, m.mean_duration_ms,
    e.finish_reasons
FROM everything e
LEFT JOIN means m USING (run_id, mode, provider)
LEFT JOIN rates r USING (run_id, mode, provider)""",
    "v_tool_calls": """
SELECT
    run_id,
    coalesce(attributes->>'$."gen_ai.tool.name"', substr(name, 14)) AS tool,
    count(*) AS calls,
    count_if(status_code = 'ERROR')::BIGINT AS errors,
    count_if(status_code = 'ERROR') / count(*) AS error_rate,
    avg(duration_ms) AS mean_ms,
    median(duration_ms) AS median_ms,
    quantile_cont(duration_ms, 0.95) AS p95_ms,
    max(duration_ms) AS max_ms
FROM spans
WHERE name LIKE 'execute_tool %'
GROUP BY ALL""",
}


def drop_views(con: duckdb.DuckDBPyConnection) -> None:
    """Drop every view (before a migration changes the tables under them)."""
    views = {
        str(r[0])
        for r in con.execute(
            "SELECT view_name FROM duckdb_views() WHERE NOT internal AND schema_name = 'main'"
        ).fetchall()
    }
    for name in reversed(VIEWS):
        if name in views:
            con.execute(f"DROP VIEW {name}")


def create_views(con: duckdb.DuckDBPyConnection, runs: Path) -> None:
    """(Re)create every view (in dependency order: ``VIEWS`` is ordered); ``runs`` is the folder
    of run shards (absolute: a view is resolved in the reader's working directory)."""
    drop_views(con)
    literal = str(runs.resolve()).replace("'", "''")
    for name, sql in VIEWS.items():
        con.execute(f"CREATE VIEW {name} AS {sql.replace('{runs}', literal)}")


def changed_views(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The names of :data:`VIEWS` the file does not hold as views: replaced by a table by hand
    (a reader's query then failed on its columns: a DuckDB traceback, exit 1, from ``report``,
    ``gate`` and ``baseline save``). A view redefined by hand is not found: DuckDB prints a
    view's SQL in an order that varies (its ``REPLACE`` list), so the text cannot be compared."""
    held = {
        str(r[0])
        for r in con.execute(
            "SELECT view_name FROM duckdb_views() WHERE NOT internal "
            "AND database_name = current_database() AND schema_name = 'main'"
        ).fetchall()
    }
    return [name for name in VIEWS if name not in held]


def skip_shards(con: duckdb.DuckDBPyConnection, runs: Path, skip: Collection[Path]) -> None:
    """Views of this connection alone (``TEMP``, found before the file's) that read every shard
    but ``skip``: how a reader leaves damaged shards out without moving them. They list the
    shards there are now (a reader's connection is short-lived; a writer quarantines)."""
    runs = runs.resolve()
    literal = str(runs).replace("'", "''")
    left_out = {str(Path(p).resolve()) for p in skip}
    for name, sql in VIEWS.items():
        for kind in ("results", "spans"):
            pattern = f"read_parquet('{{runs}}/*/{kind}-*.parquet'"
            if pattern in sql:
                files = [
                    str(f) for f in sorted(runs.glob(f"*/{kind}-*.parquet"))
                    if str(f) not in left_out and str(f.resolve()) not in left_out
                    and f.is_file() and not f.is_symlink()
                ]  # fmt: skip
                listing = ", ".join("'" + f.replace("'", "''") + "'" for f in files)
                sql = sql.replace(pattern, f"read_parquet([{listing}]")
        con.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS {sql.replace('{runs}', literal)}")
