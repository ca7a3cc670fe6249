"""Span conversion: JSON-lines span file (OTLP-JSON field names, one span per line, as
:mod:`harness.telemetry._exporters` writes it) into a Parquet span shard in one ``COPY (SELECT
...)`` over DuckDB's ``read_json`` with an explicit column spec (no Python per span).

What the table keeps of a line: ids (``parentSpanId`` ``""`` -> NULL), ``kind`` as a name
(``internal``, ``client``...), start/end as ``TIMESTAMP_NS`` (UTC) and ``duration_ms``, the status
as ``UNSET``/``OK``/``ERROR`` plus its message, ``attributes`` flattened to one JSON object
(``{"gen_ai.tool.name": "calculator", "harness.iteration": 2}``; OTLP ``intValue`` strings become
numbers, arrays of scalars become JSON arrays) and ``events`` as a JSON array of
``{"name", "time_ns", "attributes"}`` (NULL when the span has none). ``resource`` and ``scope``
are dropped. Unreadable lines (a process killed mid-write) are skipped.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa

__all__ = ["SPAN_ARROW_SCHEMA", "new_spans_to_parquet", "spans_to_parquet"]

#: The columns of a span shard (and of the ``spans`` view).
SPAN_ARROW_SCHEMA: pa.Schema = pa.schema(
    [  # type: ignore[arg-type]
        ("run_id", pa.string()),
        ("trace_id", pa.string()),
        ("span_id", pa.string()),
        ("parent_span_id", pa.string()),
        ("name", pa.string()),
        ("kind", pa.string()),
        ("start_time", pa.timestamp("ns")),
        ("end_time", pa.timestamp("ns")),
        ("duration_ms", pa.float64()),
        ("status_code", pa.string()),
        ("status_message", pa.string()),
        ("attributes", pa.string()),
        ("events", pa.string()),
    ]
)

_ANY = (
    "STRUCT(stringValue VARCHAR, intValue VARCHAR, doubleValue DOUBLE, boolValue BOOLEAN, "
    'arrayValue STRUCT("values" STRUCT(stringValue VARCHAR, intValue VARCHAR, '
    "doubleValue DOUBLE, boolValue BOOLEAN)[]), kvlistValue JSON, bytesValue VARCHAR)"
)
_ATTRS = f"STRUCT(key VARCHAR, value {_ANY})[]"
_COLUMNS = {
    "traceId": "VARCHAR",
    "spanId": "VARCHAR",
    "parentSpanId": "VARCHAR",
    "name": "VARCHAR",
    "kind": "INTEGER",
    "startTimeUnixNano": "VARCHAR",
    "endTimeUnixNano": "VARCHAR",
    "attributes": _ATTRS,
    "events": f"STRUCT(timeUnixNano VARCHAR, name VARCHAR, attributes {_ATTRS})[]",
    "status": "STRUCT(code INTEGER, message VARCHAR)",
}


def _scalar(v: str) -> str:
    """SQL: an OTLP scalar AnyValue struct -> JSON text (NULL when it holds none)."""
    return (
        f"coalesce(to_json({v}.stringValue)::VARCHAR, "
        f"coalesce(try_cast({v}.intValue AS BIGINT)::VARCHAR, to_json({v}.intValue)::VARCHAR), "
        f"CASE WHEN isfinite({v}.doubleValue) THEN {v}.doubleValue::VARCHAR "
        f"ELSE to_json({v}.doubleValue::VARCHAR)::VARCHAR END, "
        f"{v}.boolValue::VARCHAR)"
    )


def _value(v: str) -> str:
    """SQL: any OTLP AnyValue struct -> JSON text."""
    array = (
        f"'[' || coalesce(array_to_string(list_transform({v}.arrayValue.\"values\", "
        f"lambda x: coalesce({_scalar('x')}, 'null')), ','), '') || ']'"
    )
    return (
        f"coalesce({_scalar(v)}, "
        f"CASE WHEN {v}.arrayValue IS NOT NULL THEN {array} END, "
        f"{v}.kvlistValue::VARCHAR, to_json({v}.bytesValue)::VARCHAR, 'null')"
    )


def _object(attrs: str) -> str:
    """SQL: an OTLP attribute list -> one JSON object, as text."""
    return (
        f"'{{' || array_to_string(list_transform({attrs}, "
        f"lambda a: to_json(a.key)::VARCHAR || ':' || {_value('a.value')}), ',') || '}}'"
    )


def _events(events: str) -> str:
    each = (
        "'{\"name\":' || to_json(e.name)::VARCHAR || ',\"time_ns\":' || "
        "coalesce(try_cast(e.timeUnixNano AS BIGINT), 0)::VARCHAR || ',\"attributes\":' || "
        f"coalesce({_object('e.attributes')}, '{{}}') || '}}'"
    )
    return (
        f"CASE WHEN len({events}) > 0 THEN "
        f"('[' || array_to_string(list_transform({events}, lambda e: {each}), ',') || ']')::JSON "
        "END"
    )


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _select(path: Path, run_id: str) -> str:
    columns = ", ".join(f"{k}: '{v}'" for k, v in _COLUMNS.items())
    return f"""
SELECT
    {_literal(run_id)} AS run_id,
    traceId AS trace_id,
    spanId AS span_id,
    nullif(parentSpanId, '') AS parent_span_id,
    coalesce(name, '') AS name,
    ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'][kind + 1] AS kind,
    make_timestamp_ns(try_cast(startTimeUnixNano AS BIGINT)) AS start_time,
    make_timestamp_ns(try_cast(endTimeUnixNano AS BIGINT)) AS end_time,
    (try_cast(endTimeUnixNano AS BIGINT) - try_cast(startTimeUnixNano AS BIGINT)) / 1e6
        AS duration_ms,
    CASE status.code WHEN 1 THEN 'OK' WHEN 2 THEN 'ERROR' ELSE 'UNSET' END AS status_code,
    nullif(status.message, '') AS status_message,
    coalesce({_object("attributes")}, '{{}}')::JSON::VARCHAR AS attributes,
    {_events("events")}::VARCHAR AS events
FROM read_json({_literal(str(path))}, format = 'newline_delimited', ignore_errors = true,
               maximum_object_size = 67108864, columns = {{{columns}}})
WHERE traceId IS NOT NULL AND spanId IS NOT NULL"""


def spans_to_parquet(
    con: duckdb.DuckDBPyConnection,
    source: Path,
    dest: Path,
    run_id: str,
    *,
    where: str = "",
) -> int:
    """Convert the span lines of ``source`` into a Parquet file ``dest`` (the ``spans``
    columns, JSON as text) under ``run_id``; ``where`` filters the rows (SQL over ``s``).
    Returns the spans written (``dest`` holds no rows when 0)."""
    if source.stat().st_size == 0:
        return 0
    filters = f"WHERE {where}" if where else ""
    row = con.execute(
        f"COPY (SELECT * FROM ({_select(source, run_id)}) s {filters}) "
        f"TO {_literal(str(dest))} (FORMAT parquet)"
    ).fetchone()
    return int(row[0]) if row else 0


def new_spans_to_parquet(
    con: duckdb.DuckDBPyConnection,
    source: Path,
    dest: Path,
    run_id: str,
    *,
    only_run_traces: bool = False,
) -> int:
    """:func:`spans_to_parquet` of the spans the catalog ``con`` does not hold for the run yet
    (same trace and span id); ``only_run_traces`` keeps only spans whose trace id is a
    ``results.trace_id`` of the run."""
    filters = [
        "NOT EXISTS (SELECT 1 FROM spans o WHERE o.run_id = s.run_id "
        "AND o.trace_id = s.trace_id AND o.span_id = s.span_id)"
    ]
    if only_run_traces:
        filters.append(
            "s.trace_id IN (SELECT trace_id FROM results "
            "WHERE run_id = s.run_id AND trace_id IS NOT NULL)"
        )
    return spans_to_parquet(con, source, dest, run_id, where=" AND ".join(filters))
