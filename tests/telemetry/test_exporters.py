"""The JSON-lines span file: OTLP-JSON field names, value encodings, reading it back."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

import harness
from harness import tool
from harness.telemetry import _conventions as c
from harness.telemetry import configure_tracing, read_spans
from harness.telemetry._exporters import JsonLinesSpanExporter
from harness.telemetry._otlpjson import decode_attributes, encode_attributes, span_to_json
from harness.telemetry._readspans import iter_span_lines


@tool
def lookup(k: int = 0) -> str:
    """Look something up."""
    return f"value {k}"


def _provider(path: Path) -> tuple[TracerProvider, InMemorySpanExporter, JsonLinesSpanExporter]:
    provider = TracerProvider(shutdown_on_exit=False)
    memory = InMemorySpanExporter()
    file = JsonLinesSpanExporter(path)
    provider.add_span_processor(SimpleSpanProcessor(memory))
    provider.add_span_processor(SimpleSpanProcessor(file))
    return provider, memory, file


def test_attribute_values_round_trip() -> None:
    attrs: dict[str, Any] = {
        "s": 'text ü "quoted" \n',
        "i": 2**62,
        "neg": -3,
        "f": 0.25,
        "b": True,
        "nb": False,
        "strs": ("a", "b"),
        "ints": (1, 2),
        "floats": (1.5,),
        "bools": (True, False),
        "empty": (),
    }
    encoded = encode_attributes(attrs)
    assert encoded[0] == {"key": "s", "value": {"stringValue": attrs["s"]}}
    assert encoded[1] == {"key": "i", "value": {"intValue": str(2**62)}}  # int64 as a string
    assert encoded[3] == {"key": "f", "value": {"doubleValue": 0.25}}
    assert encoded[4] == {"key": "b", "value": {"boolValue": True}}
    assert encoded[6] == {
        "key": "strs",
        "value": {"arrayValue": {"values": [{"stringValue": "a"}, {"stringValue": "b"}]}},
    }
    decoded = decode_attributes(encoded)
    assert decoded == {k: list(v) if isinstance(v, tuple) else v for k, v in attrs.items()}
    # Numbers are accepted where strings are expected, as OTLP/JSON readers must.
    assert decode_attributes([{"key": "n", "value": {"intValue": 5}}]) == {"n": 5}
    # Non-finite floats stay valid JSON.
    nan = encode_attributes({"x": math.nan, "y": math.inf})
    json.dumps(nan, allow_nan=False)
    assert math.isnan(decode_attributes(nan)["x"])
    assert decode_attributes(nan)["y"] == math.inf


def test_span_lines_use_otlp_json_names(tmp_path: Path) -> None:
    path = tmp_path / "spans.jsonl"
    provider, memory, file = _provider(path)
    tracer = provider.get_tracer("harness", "9.9")
    with tracer.start_as_current_span("parent", kind=SpanKind.CLIENT) as parent:
        parent.set_attribute("k", 1)
        with tracer.start_as_current_span("child") as child:
            child.add_event("ev", {"n": 2})
            child.set_status(StatusCode.ERROR, "broke")
    provider.shutdown()
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    child_d, parent_d = (json.loads(line) for line in lines)
    for d in (child_d, parent_d):
        assert set(d) >= {
            "traceId",
            "spanId",
            "parentSpanId",
            "name",
            "kind",
            "startTimeUnixNano",
            "endTimeUnixNano",
            "attributes",
            "status",
            "resource",
            "scope",
        }
        assert len(d["traceId"]) == 32
        assert len(d["spanId"]) == 16
        assert isinstance(d["startTimeUnixNano"], str)
        assert d["scope"] == {"name": "harness", "version": "9.9"}
        assert {"key": "telemetry.sdk.language", "value": {"stringValue": "python"}} in d[
            "resource"
        ]["attributes"]
    assert parent_d["kind"] == 3  # OTLP SPAN_KIND_CLIENT
    assert child_d["kind"] == 1  # OTLP SPAN_KIND_INTERNAL
    assert parent_d["parentSpanId"] == ""
    assert child_d["parentSpanId"] == parent_d["spanId"]
    assert child_d["status"] == {"code": 2, "message": "broke"}
    assert parent_d["status"] == {"code": 0}
    assert child_d["events"][0]["name"] == "ev"
    assert child_d["events"][0]["attributes"] == [{"key": "n", "value": {"intValue": "2"}}]
    # span_to_json gives the same dict, minus resource and scope.
    (child_span, _parent_span) = memory.get_finished_spans()
    expected = {k: v for k, v in child_d.items() if k not in ("resource", "scope")}
    assert span_to_json(child_span) == expected
    assert file.export([child_span]).name == "FAILURE"  # closed after shutdown


def test_a_traced_run_round_trips_through_the_file(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    with configure_tracing(file=path, in_memory=True) as tracing:
        assert tracing.capture_content is True  # spans stay on this machine: on by default
        r = harness.run(
            "q",
            provider="mock",
            tools=[lookup],
            provider_opts={
                "turns": [
                    {"tool_calls": [{"name": "lookup", "arguments": {"k": 1}}]},
                    {"text": "done", "usage": {"input_tokens": 9, "output_tokens": 2}},
                ]
            },
            tracer_provider=tracing.provider,
        )
        memory = {s.context.span_id: s for s in tracing.finished_spans()}
    records = read_spans(path)
    assert len(records) == len(memory) == 6
    assert {s.trace_id for s in records} == {r.trace_id}
    for rec in records:
        span = memory[int(rec.span_id, 16)]
        assert rec.name == span.name
        assert rec.kind == span.kind.value + 1
        assert rec.start_ns == span.start_time
        assert rec.end_ns == span.end_time
        assert rec.parent_span_id == (
            f"{span.parent.span_id:016x}" if span.parent is not None else None
        )
        expected = {
            k: list(v) if isinstance(v, tuple) else v for k, v in (span.attributes or {}).items()
        }
        assert rec.attributes == expected
        assert [(e.name, e.time_ns) for e in rec.events] == [
            (e.name, e.timestamp) for e in span.events
        ]
        assert rec.status_code == span.status.status_code.value
        assert rec.resource["service.name"] == "harness"
        assert rec.scope == c.SCOPE_NAME
    (root,) = [s for s in records if s.parent_span_id is None]
    assert root.attributes[c.HARNESS_RUN_FINISH_REASON] == "stop"
    assert root.duration_ms > 0
    chat = [s for s in records if s.name.startswith("chat")][-1]
    assert chat.attributes[c.GEN_AI_USAGE_INPUT_TOKENS] == 9
    content = next(e for e in chat.events if e.name == c.EVENT_CONTENT)
    assert content.attributes[c.HARNESS_CONTENT_TEXT] == "done"
    assert read_spans(path, trace_id="0" * 32) == []


def test_reader_skips_torn_and_foreign_lines(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "spans.jsonl"
    provider, _, _ = _provider(path)
    with provider.get_tracer("t").start_as_current_span("one"):
        pass
    provider.shutdown()
    good = path.read_text(encoding="utf-8")
    path.write_text(good + "\n" + '{"not": "a span"}\n' + good[: len(good) // 2], encoding="utf-8")
    assert [s.name for s in read_spans(path)] == ["one"]
    assert len(list(iter_span_lines(path))) == 1
    assert any("not a JSON span" in r.getMessage() for r in caplog.records)


def test_exporter_appends_by_default(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "dir" / "spans.jsonl"
    for _ in range(2):
        provider, _, _ = _provider(path)
        with provider.get_tracer("t").start_as_current_span("s"):
            pass
        provider.shutdown()
    assert len(read_spans(path)) == 2
