"""Read helpers: the common questions as pandas DataFrames.

Every function takes a DuckDB connection or a :class:`~harness.store.Store` (read-only is
enough). JSON columns come back as JSON text unless ``decode_json=True``; ``finish_reasons``
(a DuckDB ``MAP``) comes back as a ``dict``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Protocol

import duckdb

from harness.errors import StoreError
from harness.store._schema import JSON_COLUMNS

if TYPE_CHECKING:  # pandas is imported where a frame is built (a run never needs it)
    import pandas as pd

__all__ = [
    "cells_df",
    "latest_run_id",
    "mode_summary_df",
    "no_progress_df",
    "resolve_run_id",
    "results_df",
    "runs_df",
    "span_tree_df",
    "spans_df",
    "tool_calls_df",
]


class _HasCon(Protocol):
    @property
    def con(self) -> duckdb.DuckDBPyConnection: ...


Source = duckdb.DuckDBPyConnection | _HasCon


def _con(source: Source) -> duckdb.DuckDBPyConnection:
    return source if isinstance(source, duckdb.DuckDBPyConnection) else source.con


def _df(source: Source, sql: str, params: list[Any] | None = None) -> pd.DataFrame:
    return _con(source).execute(sql, params or []).df()


def _decode(df: pd.DataFrame, columns: frozenset[str] | set[str]) -> pd.DataFrame:
    for c in columns & set(df.columns):
        df[c] = [json.loads(v) if isinstance(v, str) else None for v in df[c]]
    return df


def _where(**conditions: Any) -> tuple[str, list[Any]]:
    clauses = [f"{k} = ?" for k, v in conditions.items() if v is not None]
    params = [v for v in conditions.values() if v is not None]
    return (f" WHERE {' AND '.join(clauses)}" if clauses else ""), params


def runs_df(con: Source, label: str | None = None) -> pd.DataFrame:
    """``bench_runs`` (of one label), newest first, with each run's stored result count."""
    where, params = _where(label=label)
    return _df(
        con,
        "SELECT b.*, (SELECT count(*) FROM results r WHERE r.run_id = b.run_id) AS n_results "
        f"FROM bench_runs b{where} ORDER BY started_at DESC, run_id DESC",
        params,
    )


def latest_run_id(con: Source, label: str | None = None) -> str | None:
    """The most recently started run (of ``label``), or ``None`` when there is none."""
    where, params = _where(label=label)
    row = (
        _con(con)
        .execute(
            f"SELECT run_id FROM bench_runs{where} ORDER BY started_at DESC, run_id DESC LIMIT 1",
            params,
        )
        .fetchone()
    )
    return None if row is None else str(row[0])


def resolve_run_id(con: Source, run: str | None = "latest") -> str:
    """``"latest"``/``None`` -> the latest run id; an id -> itself, once checked to exist.
    Raises :class:`StoreError` naming the run otherwise."""
    if run in (None, "latest"):
        found = latest_run_id(con)
        if found is None:
            raise StoreError("the database holds no run yet")
        return found
    try:  # an id from other bytes than UTF-8 (a surrogate) names no run: DuckDB raised on it
        run.encode("utf-8")
    except UnicodeEncodeError:
        row = None
    else:
        row = _con(con).execute("SELECT run_id FROM bench_runs WHERE run_id = ?", [run]).fetchone()
    if row is None:
        raise StoreError(f"no run {run!r} in the database (see `SELECT * FROM bench_runs`)")
    return str(row[0])


def results_df(
    con: Source,
    run_id: str,
    *,
    latest_only: bool = True,
    decode_json: bool = False,
    with_transcript: bool = False,
) -> pd.DataFrame:
    """The results of a run, one row per cell (the latest; every row with ``latest_only=False``),
    ordered by suite, task, mode, provider, epoch. The compressed ``transcript`` column is left
    out unless ``with_transcript`` (see :mod:`harness.store._transcript` to decode it)."""
    table = "v_run_cells" if latest_only else "results"
    columns = "*" if with_transcript else "* EXCLUDE (transcript)"
    df = _df(
        con,
        f"SELECT {columns} FROM {table} WHERE run_id = ? "
        "ORDER BY suite, task_id, mode, provider, epoch, finished_at, result_id",
        [run_id],
    )
    return _decode(df, JSON_COLUMNS) if decode_json else df


def cells_df(con: Source, series: str | None = None, *, decode_json: bool = False) -> pd.DataFrame:
    """``v_cells``: the latest result per cell of each series (a label, or an unlabelled run)."""
    where, params = _where(series=series)
    df = _df(
        con,
        f"SELECT * EXCLUDE (transcript) FROM v_cells{where} "
        "ORDER BY series, suite, task_id, mode, provider, epoch",
        params,
    )
    return _decode(df, JSON_COLUMNS) if decode_json else df


def mode_summary_df(con: Source, run_id: str | None = None) -> pd.DataFrame:
    """``v_mode_summary`` (of one run), ordered by run, mode, provider."""
    where, params = _where(run_id=run_id)
    df = _df(con, f"SELECT * FROM v_mode_summary{where} ORDER BY run_id, mode, provider", params)
    import pandas as pd  # only a reader needs pandas (see the TYPE_CHECKING import)

    df["finish_reasons"] = pd.Series(
        [_as_dict(m) for m in df["finish_reasons"]], index=df.index, dtype=object
    )
    return df


def _as_dict(value: Any) -> dict[str, int]:
    if isinstance(value, dict) and set(value) == {"key", "value"}:  # older clients' MAP form
        return {str(k): int(v) for k, v in zip(value["key"], value["value"], strict=True)}
    if isinstance(value, dict):
        return {str(k): int(v) for k, v in value.items()}
    return {}


def tool_calls_df(con: Source, run_id: str | None = None) -> pd.DataFrame:
    """``v_tool_calls`` (of one run): per tool, calls, errors, error rate and latency."""
    where, params = _where(run_id=run_id)
    return _df(con, f"SELECT * FROM v_tool_calls{where} ORDER BY run_id, calls DESC, tool", params)


def spans_df(con: Source, run_id: str | None = None, trace_id: str | None = None) -> pd.DataFrame:
    """Spans (of a run and/or a trace), in start order."""
    where, params = _where(run_id=run_id, trace_id=trace_id)
    return _df(con, f"SELECT * FROM spans{where} ORDER BY start_time, span_id", params)


SPAN_TREE_SQL = """
WITH RECURSIVE tree AS (
    SELECT span_id, parent_span_id, name, start_time, duration_ms, status_code, 0 AS depth,
           [start_time] AS path
    FROM spans
    WHERE trace_id = $trace AND ($run IS NULL OR run_id = $run)
      AND (parent_span_id IS NULL OR parent_span_id NOT IN (
           SELECT span_id FROM spans WHERE trace_id = $trace))
    UNION ALL
    SELECT s.span_id, s.parent_span_id, s.name, s.start_time, s.duration_ms, s.status_code,
           t.depth + 1, list_append(t.path, s.start_time)
    FROM spans s JOIN tree t ON s.parent_span_id = t.span_id
    WHERE s.trace_id = $trace AND ($run IS NULL OR s.run_id = $run)
)
SELECT repeat('  ', depth) || name AS span, depth, span_id, parent_span_id, start_time,
       duration_ms, status_code
FROM tree ORDER BY path, span_id"""


def span_tree_df(con: Source, trace_id: str, run_id: str | None = None) -> pd.DataFrame:
    """One trace as an indented tree (recursive CTE), children after their parent in start
    order; spans whose parent is missing are shown as roots."""
    return _con(con).execute(SPAN_TREE_SQL, {"trace": trace_id, "run": run_id}).df()


def no_progress_df(con: Source, run_id: str, *, decode_json: bool = True) -> pd.DataFrame:
    """The cells of a run that ended in ``error_no_progress``, with their snapshot."""
    df = _df(
        con,
        "SELECT suite, task_id, mode, provider, epoch, iterations, trace_id, "
        "no_progress_snapshot FROM v_run_cells WHERE run_id = ? "
        "AND finish_reason = 'error_no_progress' ORDER BY suite, task_id, mode, provider, epoch",
        [run_id],
    )
    return _decode(df, {"no_progress_snapshot"}) if decode_json else df
