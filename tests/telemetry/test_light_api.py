"""The light tracer's API against the SDK's (the same calls write the same lines, limits and
status rules included), its buffering (per local root, batch size, age, flush, shutdown, a hard
kill), foreign parents, threads, and when configure_tracing picks it."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Link, SpanKind, Status, StatusCode

from harness.telemetry import LightTracerProvider, configure_tracing, read_spans
from harness.telemetry._exporters import JsonLinesSpanExporter
from harness.telemetry._light import LightSpan
from harness.telemetry._otlpjson import span_to_json

LIMITS: dict[str, int] = {
    "max_span_attributes": 4,
    "max_events": 2,
    "max_links": 1,
    "max_span_attribute_length": 5,
    "max_event_attributes": 2,
    "max_attribute_length": 3,
    "max_link_attributes": 1,
}
RESOURCE = Resource.create({"service.name": "api-test"})
_IDS = re.compile(r'"(traceId|spanId|parentSpanId)":"[0-9a-f]+"')
_TIMES = re.compile(r'"(startTimeUnixNano|endTimeUnixNano|timeUnixNano)":"\d+"')


class Odd:
    def __str__(self) -> str:
        return "odd"


def _fail() -> None:
    raise KeyError("gone")


def script(tracer: trace.Tracer) -> None:
    """Every API call the light tracer supports, edge cases included (explicit times)."""
    root = tracer.start_span(
        "root",
        kind=SpanKind.SERVER,
        start_time=1_000,
        attributes={"a": 1, "long": "abcdefgh", "l": [1, 2], "t": ("xyzxyz", "b"), "f": 0.5},
    )  # five attributes, limit four: the oldest goes
    ctx = trace.set_span_in_context(root)
    root.set_attribute("a", 2)  # set again: moves to the end
    root.set_attribute("", 1)  # dropped
    odd: Any = Odd()  # not an attribute type: stored as its str, as the SDK does
    root.set_attributes({"nan": float("nan"), "none": None, "odd": odd, "m": {"k": "vvvvvv"}})
    root.add_event("e1", {"x": "longer", "y": 2, "z": 3}, timestamp=1_100)
    root.add_event("e2", timestamp=1_200)
    root.add_event("e3", {"b": b"\x01\x02"}, timestamp=1_300)  # the oldest event goes
    root.update_name("root renamed")
    child = tracer.start_span(
        "child",
        context=ctx,
        kind=SpanKind.CLIENT,
        start_time=1_400,
        links=[Link(root.get_span_context(), {"la": 1, "lb": 2})],
    )
    child.add_link(root.get_span_context())  # beyond max_links: the oldest goes
    child.set_status(Status(StatusCode.OK, "ignored: only errors keep a description"))
    child.set_status(StatusCode.ERROR, "too late: OK is final")
    child.end(end_time=1_500)
    child.set_attribute("after", "end")  # ignored
    child.end(end_time=9_999)  # ignored
    failed = tracer.start_span("failed", context=ctx, kind=SpanKind.PRODUCER, start_time=1_600)
    failed.set_status(StatusCode.UNSET)  # ignored
    failed.set_status(StatusCode.ERROR, "broke")
    try:
        _fail()
    except KeyError as exc:
        failed.record_exception(exc, {"extra": 1}, timestamp=1_650)
    failed.end(end_time=1_700)
    with trace.use_span(root, end_on_exit=False):
        with tracer.start_as_current_span("ambient", kind=SpanKind.CONSUMER, start_time=1_800):
            assert trace.get_current_span().is_recording()
            inner = tracer.start_span("inner", start_time=1_900)  # parent: the ambient span
            inner.end(end_time=1_950)
        with (
            pytest.raises(ValueError, match="boom"),
            tracer.start_as_current_span("raises", start_time=2_000),
        ):
            raise ValueError("boom")
    assert trace.get_current_span() is trace.INVALID_SPAN
    root.end(end_time=3_000)


def normalized(path: Path) -> list[str]:
    text = _TIMES.sub(lambda m: f'"{m.group(1)}":"T"', _IDS.sub(r'"\1":"ID"', path.read_text()))
    return sorted(text.splitlines())


def shape(path: Path) -> set[tuple[str, str | None]]:
    """(span, parent span) names."""
    spans = read_spans(path)
    names = {s.span_id: s.name for s in spans}
    return {(s.name, names.get(s.parent_span_id or "")) for s in spans}


def test_the_same_api_calls_write_the_same_lines(tmp_path: Path) -> None:
    sdk = TracerProvider(resource=RESOURCE, span_limits=SpanLimits(**LIMITS))
    sdk.add_span_processor(SimpleSpanProcessor(JsonLinesSpanExporter(tmp_path / "sdk.jsonl")))
    light = LightTracerProvider(
        JsonLinesSpanExporter(tmp_path / "light.jsonl"),
        resource=RESOURCE,
        span_limits=SpanLimits(**LIMITS),
    )
    for provider in (sdk, light):
        script(provider.get_tracer("api", "1.2"))
        provider.shutdown()
    lines = normalized(tmp_path / "light.jsonl")
    assert len(lines) == 6
    assert lines == normalized(tmp_path / "sdk.jsonl")
    assert shape(tmp_path / "light.jsonl") == shape(tmp_path / "sdk.jsonl")
    root = next(s for s in read_spans(tmp_path / "light.jsonl") if s.name == "root renamed")
    # Four attributes at most, the oldest dropped first; strings truncated, inside mappings too.
    assert list(root.attributes) == ["nan", "none", "odd", "m"]
    assert root.attributes["m"] == {"k": "vvvvv"}
    assert [e.name for e in root.events] == ["e2", "e3"]
    # The times given are the times written.
    assert (root.start_ns, root.end_ns) == (1_000, 3_000)


def test_a_light_span_encodes_like_any_span(tmp_path: Path) -> None:
    provider = LightTracerProvider(JsonLinesSpanExporter(tmp_path / "s.jsonl"))
    span = provider.get_tracer("t").start_span("s", attributes={"k": "v"}, start_time=5)
    span.end(end_time=7)
    assert isinstance(span, LightSpan)
    d = span_to_json(span)
    assert d["name"] == "s"
    assert (d["startTimeUnixNano"], d["endTimeUnixNano"]) == ("5", "7")
    assert d["attributes"] == [{"key": "k", "value": {"stringValue": "v"}}]
    provider.shutdown()


# --- buffering ----------------------------------------------------------------------------------


def lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_a_run_is_written_when_its_root_ends(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    provider = LightTracerProvider(JsonLinesSpanExporter(path))
    tracer = provider.get_tracer("t")
    root = tracer.start_span("root")
    ctx = trace.set_span_in_context(root)
    for i in range(3):
        tracer.start_span(f"child {i}", context=ctx).end()
    assert lines(path) == 0  # buffered with its run
    root.end()
    assert lines(path) == 4
    tracer.start_span("straggler", context=ctx).end()  # after its root: written at once
    assert lines(path) == 5
    provider.shutdown()


def test_a_full_buffer_or_an_old_one_is_written(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    provider = LightTracerProvider(JsonLinesSpanExporter(path), batch_spans=3)
    tracer = provider.get_tracer("t")
    ctx = trace.set_span_in_context(tracer.start_span("root"))
    for _ in range(7):
        tracer.start_span("c", context=ctx).end()
    assert lines(path) == 6
    provider.flush_after_s = 0.0
    tracer.start_span("c", context=ctx).end()  # the 7th has waited long enough
    assert lines(path) == 8
    provider.shutdown()


def test_flush_and_shutdown_write_unfinished_runs(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    handle = configure_tracing(file=path)
    assert isinstance(handle.provider, LightTracerProvider)
    tracer = handle.provider.get_tracer("t")
    root = tracer.start_span("root")
    tracer.start_span("a", context=trace.set_span_in_context(root)).end()
    assert lines(path) == 0
    assert handle.force_flush()
    assert lines(path) == 1
    tracer.start_span("b", context=trace.set_span_in_context(root)).end()
    handle.shutdown()
    assert lines(path) == 2  # the root never ended: never written, as with the SDK
    tracer.start_span("late").end()
    assert lines(path) == 2
    assert handle.export_failures == 1  # the file is closed
    assert handle.force_flush() is False


@pytest.mark.slow
def test_a_hard_kill_loses_only_unfinished_runs(tmp_path: Path) -> None:
    """The documented bound: finished runs are on disk; an unfinished run loses its buffer."""
    path = tmp_path / "kill.jsonl"
    code = (
        "import os, harness\n"
        "from opentelemetry import trace\n"
        "from harness.telemetry import configure_tracing\n"
        f"h = configure_tracing(file={str(path)!r})\n"
        "harness.run('q', provider='mock', provider_opts={'turns': [{'text': 'hi'}]},"
        " tracer_provider=h.provider)\n"
        "t = h.provider.get_tracer('t')\n"
        "root = t.start_span('unfinished')\n"
        "t.start_span('ended', context=trace.set_span_in_context(root)).end()\n"
        "os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    names = [s.name for s in read_spans(path)]
    assert sorted(names) == ["chat mock-model", "invoke_agent react", "iteration 0"]


def test_spans_ended_from_threads_are_written_once(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    provider = LightTracerProvider(JsonLinesSpanExporter(path), batch_spans=50)
    tracer = provider.get_tracer("t")
    root = tracer.start_span("root")
    ctx = trace.set_span_in_context(root)
    stop = threading.Event()

    def flusher() -> None:
        while not stop.is_set():
            provider.force_flush()

    def worker() -> None:
        for _ in range(500):
            tracer.start_span("c", context=ctx).end()

    f = threading.Thread(target=flusher)
    workers = [threading.Thread(target=worker) for _ in range(4)]
    f.start()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    stop.set()
    f.join()
    root.end()
    provider.shutdown()
    ids = [json.loads(line)["spanId"] for line in path.read_text().splitlines()]
    assert len(ids) == 4 * 500 + 1
    assert len(set(ids)) == len(ids)


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_does_not_write_its_parents_buffer(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    provider = LightTracerProvider(JsonLinesSpanExporter(path))
    tracer = provider.get_tracer("t")
    root = tracer.start_span("root")
    tracer.start_span("parent's", context=trace.set_span_in_context(root)).end()
    pid = os.fork()
    if pid == 0:  # the child: its own span only
        try:
            tracer.start_span("child's").end()
            provider.shutdown()
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    root.end()
    provider.shutdown()
    assert sorted(s.name for s in read_spans(path)) == ["child's", "parent's", "root"]


# --- parents, ids ---------------------------------------------------------------------------------


def test_foreign_parents_and_unsampled_ones(tmp_path: Path) -> None:
    provider = LightTracerProvider(JsonLinesSpanExporter(tmp_path / "s.jsonl"))
    tracer = provider.get_tracer("t")
    sdk_span = TracerProvider().get_tracer("sdk").start_span("outer")
    child = tracer.start_span("child", context=trace.set_span_in_context(sdk_span))
    outer_ctx = sdk_span.get_span_context()
    assert child.get_span_context().trace_id == outer_ctx.trace_id
    child.end()  # a local root: written at once
    (rec,) = read_spans(tmp_path / "s.jsonl")
    assert rec.parent_span_id == format(outer_ctx.span_id, "016x")
    unsampled = trace.NonRecordingSpan(
        trace.SpanContext(0xABC, 0xDEF, is_remote=True, trace_flags=trace.TraceFlags(0))
    )
    span = tracer.start_span("skip", context=trace.set_span_in_context(unsampled))
    assert not span.is_recording()
    assert span.get_span_context().trace_id == 0xABC
    assert not span.get_span_context().trace_flags.sampled
    span.end()
    provider.shutdown()
    assert len(read_spans(tmp_path / "s.jsonl")) == 1


def test_ids_are_valid_and_contexts_sampled(tmp_path: Path) -> None:
    provider = LightTracerProvider(JsonLinesSpanExporter(tmp_path / "s.jsonl"))
    tracer = provider.get_tracer("t")
    root = tracer.start_span("root")
    ctx = root.get_span_context()
    assert ctx.is_valid
    assert ctx.trace_flags.sampled
    assert not ctx.is_remote
    assert 0 < ctx.trace_id < 2**128
    assert 0 < ctx.span_id < 2**64
    child = tracer.start_span("child", context=trace.set_span_in_context(root))
    assert child.get_span_context().trace_id == ctx.trace_id
    assert child.get_span_context().span_id != ctx.span_id
    provider.shutdown()


def test_a_lone_surrogate_still_writes_a_valid_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    provider = LightTracerProvider(JsonLinesSpanExporter(path))
    provider.get_tracer("t").start_span("s", attributes={"text": "bad \udcff byte"}).end()
    provider.shutdown()
    (rec,) = read_spans(path)
    # U+FFFD: the JSON escape "\udcff" written before was dropped by DuckDB's reader (round 12 B)
    assert rec.attributes["text"] == "bad \ufffd byte"


# --- which path configure_tracing takes -----------------------------------------------------------


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(
    ("kwargs", "env", "light"),
    [
        ({"file": "x"}, {}, True),
        ({"file": "x", "sdk": True}, {}, False),
        ({"file": "x", "in_memory": True}, {}, False),
        ({"file": "x", "otlp_endpoint": "OTLP"}, {}, False),
        ({"file": "x"}, {"OTEL_TRACES_SAMPLER": "parentbased_always_on"}, True),
        ({"file": "x"}, {"OTEL_TRACES_SAMPLER": "traceidratio"}, False),
        ({"file": "x"}, {"OTEL_SDK_DISABLED": "true"}, False),
        ({"in_memory": True}, {}, False),
    ],
)
def test_the_light_tracer_is_used_for_a_file_alone(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kwargs: dict[str, Any],
    env: dict[str, str],
    light: bool,
) -> None:
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    kwargs = dict(kwargs)
    if "file" in kwargs:
        kwargs["file"] = tmp_path / "s.jsonl"
    if kwargs.get("otlp_endpoint") == "OTLP":
        kwargs["otlp_endpoint"] = f"http://127.0.0.1:{closed_port()}"
    handle = configure_tracing(**kwargs)
    try:
        assert handle.light is light
        assert isinstance(handle.provider, LightTracerProvider) is light
        assert handle.capture_content is ("file" in kwargs and "otlp_endpoint" not in kwargs)
    finally:
        handle.shutdown(timeout_s=1)
