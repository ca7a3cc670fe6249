"""The store's schema: the v1 DDL, the migration list and the views.

Versioning: ``schema_version`` holds one row per applied migration. ``MIGRATIONS[i]`` takes a file
from version ``i`` to ``i + 1`` (``MIGRATIONS[0]`` creates the v1 tables in an empty file), so
:data:`SCHEMA_VERSION` is ``len(MIGRATIONS)``. To change the schema, append a function (an
``ALTER TABLE ... ADD COLUMN`` usually) and never edit one that has shipped: files written by
older code are upgraded by running the functions they have not seen, each in its own
transaction. A file whose version is higher than the code's is refused (:class:`SchemaTooNew`).

The views are derived: they are dropped and re-created after every read-write open, so changing
one needs no migration. Since v5 the tables ``results_compacted`` and ``spans_compacted`` hold
the rows of compacted runs, and ``results`` and ``spans`` are views: those tables plus the Parquet
shards that runs write under ``<db folder>/runs/<run_id>/`` (see :mod:`harness.store._shards`).
A migration that adds a ``results`` column alters ``results_compacted`` (and adds the column to
:data:`RESULT_COLUMNS`, from which shards take their schema).

Every timestamp is UTC, stored without a time zone (``TIMESTAMP``; spans ``TIMESTAMP_NS``):
``TIMESTAMPTZ`` would make the Python client depend on pytz and print local times.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from harness._version import __version__
from harness.errors import SchemaTooNew

__all__ = [
    "CELL_STATUSES",
    "JSON_COLUMNS",
    "MIGRATIONS",
    "RESULT_COLUMNS",
    "RUN_STATUSES",
    "SCHEMA_VERSION",
    "SPAN_JSON_COLUMNS",
    "VIEWS",
    "Migration",
    "check_version",
    "create_views",
    "drop_views",
    "migrate",
    "schema_version",
]


Migration = Callable[[duckdb.DuckDBPyConnection], None]

RUN_STATUSES = ("running", "finished", "interrupted", "failed")

_V1_BENCH_RUNS = f"""
CREATE TABLE bench_runs (
    run_id          VARCHAR PRIMARY KEY,
    started_at      TIMESTAMP NOT NULL,
    finished_at     TIMESTAMP,
    status          VARCHAR NOT NULL DEFAULT 'running'
                    CHECK (status IN ({", ".join(f"'{s}'" for s in RUN_STATUSES)})),
    label           VARCHAR,
    git_sha         VARCHAR,
    harness_version VARCHAR,
    suites          VARCHAR[],
    modes           VARCHAR[],
    providers       VARCHAR[],
    epochs          INTEGER,
    config          JSON,
    pid             INTEGER,
    host            VARCHAR,
    error           VARCHAR,
    resumed         INTEGER NOT NULL DEFAULT 0
)"""

# Column -> DuckDB type; the order is the table's.
RESULT_COLUMNS: dict[str, str] = {
    "result_id": "BIGINT NOT NULL DEFAULT nextval('results_seq')",
    "run_id": "VARCHAR NOT NULL",
    "cell_key": "VARCHAR NOT NULL",
    "suite": "VARCHAR NOT NULL",
    "task_id": "VARCHAR NOT NULL",
    "mode": "VARCHAR NOT NULL",
    "provider": "VARCHAR NOT NULL",
    "model": "VARCHAR",
    "epoch": "INTEGER NOT NULL",
    "passed": "BOOLEAN NOT NULL",
    "score": "DOUBLE",
    "grader_explanation": "VARCHAR",
    "finish_reason": "VARCHAR",
    "category": "VARCHAR",
    "halted_reason": "VARCHAR",
    "error": "VARCHAR",
    "iterations": "INTEGER",
    "tool_calls": "INTEGER",
    "llm_calls": "INTEGER",
    "input_tokens": "BIGINT",
    "output_tokens": "BIGINT",
    "reasoning_tokens": "BIGINT",
    "cache_read_tokens": "BIGINT",
    "cache_write_tokens": "BIGINT",
    "cost_usd": "DOUBLE",
    "duration_ms": "DOUBLE",
    "trace_id": "VARCHAR",
    "cassette": "VARCHAR",
    "deliverable": "JSON",
    "text": "VARCHAR",
    "error_diagnostic": "JSON",
    "no_progress_snapshot": "JSON",
    "calls": "JSON",
    "finished_at": "TIMESTAMP NOT NULL",
}
_V1_RESULTS = (
    "CREATE TABLE results (\n    "
    + ",\n    ".join(f"{k} {v}" for k, v in RESULT_COLUMNS.items())
    + "\n)"
)
#: Added by migration 2: ``passed`` | ``failed`` | ``error`` (could not be scored; the cause
#: is in ``error``). Error cells are left out of pass rates and comparisons.
RESULT_COLUMNS["status"] = "VARCHAR"
#: Added by migration 3: the result's messages, zlib-compressed JSON, bounded in size
#: (:mod:`harness.store._transcript`).
RESULT_COLUMNS["transcript"] = "BLOB"
#: Added by migration 4: what grading the cell cost (LLM judges' calls), USD, apart from the
#: run's own ``cost_usd``; 0 when no grader called a model, NULL in rows stored before v4.
RESULT_COLUMNS["grading_cost_usd"] = "DOUBLE"
#: Added by migration 6: replayed requests that differed from the recorded ones (cassette
#: drift); 0 for a faithful replay and for recordings, NULL in rows stored before v6.
RESULT_COLUMNS["drift"] = "INTEGER"
#: Added by migration 7: ``Result.turns`` without the user text: per user turn
#: ``{"steps": [[[name, args], ...], ...], "reply", "finish_reason"}`` (plus ``added_tools``
#: when the turn added some), the calls as the model made them; NULL in rows stored before v7.
RESULT_COLUMNS["turns"] = "JSON"
JSON_COLUMNS = frozenset(k for k, v in RESULT_COLUMNS.items() if v.startswith("JSON"))
CELL_STATUSES = ("passed", "failed", "error")

_V1_SPANS = """
CREATE TABLE spans (
    run_id          VARCHAR NOT NULL,
    trace_id        VARCHAR NOT NULL,
    span_id         VARCHAR NOT NULL,
    parent_span_id  VARCHAR,
    name            VARCHAR NOT NULL,
    kind            VARCHAR,
    start_time      TIMESTAMP_NS,
    end_time        TIMESTAMP_NS,
    duration_ms     DOUBLE,
    status_code     VARCHAR,
    status_message  VARCHAR,
    attributes      JSON,
    events          JSON
)"""


def _v1(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("CREATE SEQUENCE results_seq START 1")
    con.execute(_V1_BENCH_RUNS)
    con.execute(_V1_RESULTS)
    con.execute(_V1_SPANS)


def _v2(con: duckdb.DuckDBPyConnection) -> None:
    """results.status; older rows: passed, error when the runner stored an error, else failed."""
    con.execute("ALTER TABLE results ADD COLUMN status VARCHAR")
    con.execute(
        "UPDATE results SET status = CASE WHEN passed THEN 'passed' "
        "WHEN error IS NOT NULL THEN 'error' ELSE 'failed' END"
    )


def _v3(con: duckdb.DuckDBPyConnection) -> None:
    """results.transcript (older rows: NULL, the viewer says the transcript was not stored)."""
    con.execute("ALTER TABLE results ADD COLUMN transcript BLOB")


def _v4(con: duckdb.DuckDBPyConnection) -> None:
    """results.grading_cost_usd (LLM judges); NULL for older rows (not known)."""
    con.execute("ALTER TABLE results ADD COLUMN grading_cost_usd DOUBLE")


def _v5(con: duckdb.DuckDBPyConnection) -> None:
    """Shards: the tables become the compacted store; ``results`` and ``spans`` become views
    over them and the Parquet shards of runs (see :func:`create_views`); ``compacted_shards``
    lists the shard files whose rows are in the tables already."""
    drop_views(con)
    con.execute("ALTER TABLE results RENAME TO results_compacted")
    con.execute("ALTER TABLE spans RENAME TO spans_compacted")
    con.execute(
        "CREATE TABLE compacted_shards (file VARCHAR PRIMARY KEY, run_id VARCHAR NOT NULL, "
        "kind VARCHAR NOT NULL, rows BIGINT NOT NULL, compacted_at TIMESTAMP NOT NULL)"
    )


def _v6(con: duckdb.DuckDBPyConnection) -> None:
    """results.drift (replayed requests unlike the recorded ones); NULL for older rows."""
    con.execute("ALTER TABLE results_compacted ADD COLUMN drift INTEGER")


def _v7(con: duckdb.DuckDBPyConnection) -> None:
    """results.turns (the calls of each step of each user turn); NULL for older rows."""
    con.execute("ALTER TABLE results_compacted ADD COLUMN turns JSON")


MIGRATIONS: tuple[Migration, ...] = (_v1, _v2, _v3, _v4, _v5, _v6, _v7)
SCHEMA_VERSION = len(MIGRATIONS)


def schema_version(con: duckdb.DuckDBPyConnection) -> int:
    """The file's schema version: 0 for an empty file (no ``schema_version`` table)."""
    row = con.execute(
        "SELECT count(*) FROM information_schema.tables "
        "WHERE table_name = 'schema_version' AND table_schema = 'main'"
    ).fetchone()
    if not row or not row[0]:
        return 0
    got = con.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()
    return int(got[0]) if got else 0


def check_version(found: int, supported: int, where: str) -> None:
    if found > supported:
        raise SchemaTooNew(
            f"{where} has store schema v{found}, but this harness ({__version__}) supports up to "
            f"v{supported}: upgrade harness to read it (files are never downgraded)"
        )


def migrate(
    con: duckdb.DuckDBPyConnection,
    migrations: Sequence[Migration] = MIGRATIONS,
    *,
    where: str = "the database",
) -> tuple[int, int]:
    """Bring the file up to ``len(migrations)``; return (version before, version after)."""
    target = len(migrations)
    found = schema_version(con)
    check_version(found, target, where)
    if found == target:
        return found, found
    if found == 0:
        con.execute(
            "CREATE TABLE IF NOT EXISTS schema_version "
            "(version INTEGER PRIMARY KEY, applied_at TIMESTAMP NOT NULL, harness_version VARCHAR)"
        )
    for version in range(found + 1, target + 1):
        con.execute("BEGIN TRANSACTION")
        try:
            migrations[version - 1](con)
            con.execute(
                "INSERT INTO schema_version VALUES (?, ?, ?)",
                [version, datetime.now(UTC).replace(tzinfo=None), __version__],
            )
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
    return found, target


# --- views -------------------------------------------------------------------------------------

_CELL = "suite, task_id, mode, provider, epoch"
SPAN_JSON_COLUMNS = ("attributes", "events")


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
