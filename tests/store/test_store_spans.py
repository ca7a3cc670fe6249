"""Span ingest from the JSON-lines span file: a real traced run, hand-written OTLP-JSON lines,
re-ingest, a torn last line, and the trace filter."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import harness
from harness.errors import StoreError
from harness.store import Store, result_row, spans_df
from harness.telemetry import configure_tracing, read_spans

LINE = {
    "traceId": "a" * 32,
    "spanId": "b" * 16,
    "parentSpanId": "",
    "name": "chat gemma",
    "kind": 3,
    "startTimeUnixNano": "1700000000000000001",
    "endTimeUnixNano": 1700000000250000001,  # a number where OTLP-JSON has a string: accepted
    "attributes": [
        {"key": "s", "value": {"stringValue": 'say "hi"\n'}},
        {"key": "i", "value": {"intValue": "9007199254740993"}},
        {"key": "d", "value": {"doubleValue": 0.5}},
        {"key": "nan", "value": {"doubleValue": "NaN"}},
        {"key": "b", "value": {"boolValue": False}},
        {
            "key": "a",
            "value": {"arrayValue": {"values": [{"stringValue": "x"}, {"intValue": "2"}]}},
        },
        {"key": "e", "value": {"arrayValue": {}}},
    ],
    "events": [
        {
            "timeUnixNano": "1700000000100000000",
            "name": "harness.usage",
            "attributes": [{"key": "n", "value": {"intValue": "3"}}],
        },
        {"timeUnixNano": "1700000000200000000", "name": "bare"},
    ],
    "status": {"code": 1},
    "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "harness"}}]},
    "scope": {"name": "harness", "version": ""},
}

RowFactory = Callable[..., dict[str, Any]]  # the make_row fixture (conftest.py)


def lines(path: Path, *spans: dict[str, Any], tail: str = "") -> Path:
    with path.open("a", encoding="utf-8") as f:
        f.write("".join(json.dumps(s) + "\n" for s in spans) + tail)
    return path


def test_a_hand_written_line_is_decoded(store: Store, tmp_path: Path) -> None:
    run = store.begin_run()
    assert store.ingest_spans(run, lines(tmp_path / "s.jsonl", LINE)) == 1
    row = spans_df(store, run).iloc[0]
    assert (row["trace_id"], row["span_id"], row["name"]) == ("a" * 32, "b" * 16, "chat gemma")
    assert row["parent_span_id"] is None or row["parent_span_id"] != row["parent_span_id"]
    assert (row["kind"], row["status_code"]) == ("client", "OK")
    assert row["duration_ms"] == 250.0
    assert str(row["start_time"]) == "2023-11-14 22:13:20.000000001"  # TIMESTAMP_NS, UTC
    assert json.loads(row["attributes"]) == {
        "s": 'say "hi"\n',
        "i": 9007199254740993,  # beyond a double's exact range: kept exact
        "d": 0.5,
        "nan": "nan",
        "b": False,
        "a": ["x", 2],
        "e": [],
    }
    assert json.loads(row["events"]) == [
        {"name": "harness.usage", "time_ns": 1700000000100000000, "attributes": {"n": 3}},
        {"name": "bare", "time_ns": 1700000000200000000, "attributes": {}},
    ]


def test_reingest_adds_only_new_spans_and_skips_a_torn_line(store: Store, tmp_path: Path) -> None:
    run = store.begin_run()
    path = lines(tmp_path / "s.jsonl", LINE, tail='{"traceId": "c", "spanId": "d", "na')
    assert store.ingest_spans(run, path) == 1  # the torn last line is skipped
    assert store.ingest_spans(run, path) == 0
    path.write_text(json.dumps(LINE) + "\n" + json.dumps({**LINE, "spanId": "c" * 16}) + "\n")
    assert store.ingest_spans(run, path) == 1
    other = store.begin_run()
    assert store.ingest_spans(other, path) == 2  # another run's copy is its own
    assert len(spans_df(store)) == 4


def test_only_run_traces(store: Store, tmp_path: Path, make_row: RowFactory) -> None:
    run = store.begin_run()
    store.write_result(make_row(run, trace_id="a" * 32))
    path = lines(tmp_path / "s.jsonl", LINE, {**LINE, "traceId": "f" * 32})
    assert store.ingest_spans(run, path, only_run_traces=True) == 1
    assert list(spans_df(store, run)["trace_id"]) == ["a" * 32]


def test_ingest_errors(store: Store, tmp_path: Path) -> None:
    run = store.begin_run()
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert store.ingest_spans(run, empty) == 0
    with pytest.raises(StoreError, match="no span file"):
        store.ingest_spans(run, tmp_path / "missing.jsonl")
    with pytest.raises(StoreError, match="no run 'nope'"):
        store.ingest_spans("nope", empty)


def test_a_traced_run_matches_read_spans(store: Store, tmp_path: Path) -> None:
    """The SQL decoding agrees with harness.telemetry's own reader, span by span."""
    path = tmp_path / "run.jsonl"
    with configure_tracing(file=path) as tracing:
        result = harness.run(
            "What is 17*23?",
            provider="mock",
            tools=["calculator"],
            provider_opts={
                "turns": [
                    {"tool_calls": [{"name": "calculator", "arguments": {"expression": "17*23"}}]},
                    {"text": "391", "usage": {"input_tokens": 9, "output_tokens": 2}},
                ]
            },
            tracer_provider=tracing.provider,
        )
    run = store.begin_run(label="traced")
    store.write_result(
        result_row(result, run_id=run, suite="arithmetic", task_id="mul", passed=True)
    )
    records = read_spans(path)
    assert store.ingest_spans(run, path, only_run_traces=True) == len(records) > 3
    df = spans_df(store, run).set_index("span_id")
    for rec in records:
        row = df.loc[rec.span_id]
        assert row["name"] == rec.name
        assert row["trace_id"] == rec.trace_id == result.trace_id
        assert (row["parent_span_id"] if rec.parent_span_id else None) == rec.parent_span_id
        assert row["kind"] == rec.kind_name
        assert row["duration_ms"] == pytest.approx(rec.duration_ms)
        assert row["status_code"] == {0: "UNSET", 1: "OK", 2: "ERROR"}[rec.status_code]
        assert isinstance(row["attributes"], str)  # JSON text
        assert json.loads(row["attributes"]) == rec.attributes
        events = json.loads(row["events"]) if isinstance(row["events"], str) else []
        assert [(e["name"], e["time_ns"], e["attributes"]) for e in events] == [
            (e.name, e.time_ns, e.attributes) for e in rec.events
        ]
    tools = store.con.execute(
        "SELECT tool, calls, errors FROM v_tool_calls WHERE run_id = ?", [run]
    ).fetchall()
    assert tools == [("calculator", 1, 0)]
