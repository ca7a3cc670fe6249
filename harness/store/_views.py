"""The store's views (docs/sql.md): ``results`` and ``spans`` (the compacted tables plus the
shards not compacted yet) and the views derived from them. They are dropped and re-created after
every read-write open (:func:`create_views`), so changing one needs no migration; a reader that
must leave damaged shards out gets its own temporary copies (:func:`skip_shards`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Collection, Sequence
from pathlib import Path

import duckdb

from harness.errors import StoreError
from harness.store._schema import JSON_COLUMNS, SPAN_JSON_COLUMNS

__all__ = [
    "VIEWS",
    "changed_views",
    "create_views",
    "drop_views",
    "runs_literal",
    "shadowing_functions",
    "skip_shards",
]

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
        str(r[0]).lower(): str(r[0])  # DuckDB's names ignore case: `Results` is `results`
        for r in con.execute(
            "SELECT view_name FROM duckdb_views() WHERE NOT internal AND schema_name = 'main'"
        ).fetchall()
    }
    for name in reversed(VIEWS):
        if name in views:
            held = views[name].replace('"', '""')
            con.execute(f'DROP VIEW "{held}"')


def create_views(con: duckdb.DuckDBPyConnection, runs: Path, *, temp: bool = False) -> None:
    """(Re)create every view (in dependency order: ``VIEWS`` is ordered); ``runs`` is the folder
    of run shards (absolute: a view is resolved in the reader's working directory). ``temp``:
    views of this connection alone, found before the file's (how a reader reads a file whose
    views were changed by hand without writing to it)."""
    if not temp:
        drop_views(con)
    literal = runs_literal(runs)
    kind = "OR REPLACE TEMP VIEW" if temp else "VIEW"
    for name, sql in VIEWS.items():
        con.execute(f"CREATE {kind} {name} AS {sql.replace('{runs}', literal)}")


def changed_views(
    con: duckdb.DuckDBPyConnection, runs: Path, *, anywhere: bool = False
) -> list[str]:
    """The names of :data:`VIEWS` the file does not hold as the harness writes them over
    ``runs``: replaced by a table or redefined by hand (a reader's query then failed on its
    columns, or read what the edit chose), or, unless ``anywhere``, written over another
    folder (a file moved with its runs). Compared as parse trees (``json_serialize_sql``, no
    files read): DuckDB prints a ``REPLACE`` list in an order that varies, so it is sorted."""
    held = {
        str(name).lower(): sql  # a view redefined as `Results` is `results` to DuckDB
        for name, sql in con.execute(
            "SELECT view_name, sql FROM duckdb_views() WHERE NOT internal "
            "AND database_name = current_database() AND schema_name = 'main'"
        ).fetchall()
    }
    bodies = tuple((n, _body(n, str(held[n]))) for n in VIEWS if isinstance(held.get(n), str))
    return list(_differing(bodies, runs_literal(runs), anywhere))


@functools.lru_cache(maxsize=32)
def _differing(
    bodies: tuple[tuple[str, str], ...], literal: str, anywhere: bool
) -> tuple[str, ...]:
    """:func:`changed_views` for the views a file holds (name, query): remembered, as a file's
    views are the same text from one open to the next (a viewer opens one per request)."""
    con = duckdb.connect()
    try:
        trees = _trees(con, [b for _, b in bodies], anywhere)
        theirs = dict(zip((n for n, _ in bodies), trees, strict=True))
        ours = _trees(con, [sql.replace("{runs}", literal) for sql in VIEWS.values()], anywhere)
    finally:
        con.close()
    return tuple(n for n, t in zip(VIEWS, ours, strict=True) if n not in theirs or theirs[n] != t)


def shadowing_functions(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The functions the file defines under the name of one of DuckDB's own (``CREATE MACRO
    avg(x) AS 42``, a table macro ``read_parquet``), each as ``DROP MACRO`` names it: the views
    and every report call them instead (``avg`` made the views' means 42; ``read_parquet``
    broke every view with an error naming neither it nor the fix: round 15 probe)."""
    # DuckDB's own functions named as DuckDB's: a table macro ``duckdb_functions`` returning no
    # row, or a macro ``current_database()``, hid every other one (adversary round 17, part B)
    own = con.execute(
        "SELECT DISTINCT function_name, function_type FROM system.main.duckdb_functions() "
        "WHERE NOT internal AND database_name = system.main.current_database() "
        "AND schema_name = 'main'"
    ).fetchall()
    if not own:
        return []
    names = {str(n).lower() for n, _ in own}
    builtin = {
        str(r[0]).lower()
        for r in con.execute(
            "SELECT DISTINCT function_name FROM system.main.duckdb_functions() WHERE internal"
        ).fetchall()
        if str(r[0]).lower() in names
    }
    return sorted(
        f"{'TABLE ' if kind == 'table_macro' else ''}{name}"
        for name, kind in own
        if str(name).lower() in builtin
    )


def runs_literal(runs: Path) -> str:
    """``runs`` as a SQL string for the views' globs; a :class:`StoreError` when its path holds
    a glob character, which DuckDB would read as a pattern (a database in ``d[1]/`` was said to
    have no files, or to miss its table ``bench_runs``: adversary round 15 probe), or a ``\\``,
    which it reads as ``/``."""
    folder = str(runs.resolve())
    if any(c in folder for c in "[]?*\\"):
        raise StoreError(
            f"{folder}: DuckDB reads a path holding '[', ']', '?' or '*' as a pattern, and "
            "'\\' as '/': the views could not find the runs there; keep the database in a "
            "folder without them"
        )
    return folder.replace("'", "''")


def _body(name: str, sql: str) -> str:
    """The query of a view as ``duckdb_views()`` prints it (``CREATE VIEW name AS q;``); '' for
    a view made otherwise (with column names, say), which then differs from ours."""
    head = f"CREATE VIEW {name} AS "
    return sql[len(head) : -1] if sql.startswith(head) and sql.endswith(";") else ""


def _trees(con: duckdb.DuckDBPyConnection, queries: list[str], anywhere: bool) -> list[object]:
    """Each query's parse tree without source positions, ``REPLACE`` lists sorted and (if
    ``anywhere``) the runs folder of shard globs left out; None for a query that does not
    parse or nests too deep to compare."""
    if not queries:
        return []
    try:
        rows = con.execute("SELECT json_serialize_sql(q) FROM unnest(?) AS t(q)", [queries])
        texts = [str(r[0]) for r in rows.fetchall()]
    except duckdb.Error:
        return [None] * len(queries)
    out: list[object] = []
    for text in texts:
        try:
            tree = json.loads(text)
            out.append(None if tree.get("error") else _canonical(tree, anywhere))
        except (ValueError, RecursionError, AttributeError):
            out.append(None)
    return out


_GLOBS = ("/*/results-*.parquet", "/*/spans-*.parquet")


def _canonical(node: object, anywhere: bool) -> object:
    if isinstance(node, list):
        return [_canonical(v, anywhere) for v in node]
    if not isinstance(node, dict):
        return node
    out = {
        k: _canonical(v, anywhere) for k, v in node.items() if not k.startswith("query_location")
    }
    replaced = out.get("replace_list")
    if isinstance(replaced, list):
        out["replace_list"] = sorted(replaced, key=lambda e: json.dumps(e, sort_keys=True))
    text = out.get("text")
    if anywhere and isinstance(text, str):
        out["text"] = next((f"{{runs}}{g}" for g in _GLOBS if text.endswith(g)), text)
    return out


def skip_shards(con: duckdb.DuckDBPyConnection, runs: Path, skip: Collection[Path]) -> None:
    """Views of this connection alone (``TEMP``, found before the file's) that read every shard
    but ``skip``: how a reader leaves damaged shards out without moving them. They list the
    shards there are now (a reader's connection is short-lived; a writer quarantines)."""
    runs = runs.resolve()
    literal = runs_literal(runs)
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
