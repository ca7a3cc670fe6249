"""The telemetry package uses OpenTelemetry's public API only (no private names, modules or
fields, so a new release cannot break it underneath), and the light tracer's
``start_as_current_span``, rebuilt on public APIs, behaves as the SDK's: a context manager, and a
decorator of sync and async functions with a new span per call."""

from __future__ import annotations

import ast
import asyncio
import re
from pathlib import Path

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import harness.telemetry
from harness.telemetry import read_spans
from harness.telemetry._exporters import JsonLinesSpanExporter
from harness.telemetry._light import LightTracerProvider

TELEMETRY = Path(harness.telemetry.__file__).parent
# Private fields of OpenTelemetry objects that the package once read, and must not again.
PRIVATE_FIELDS = {
    "_value_",
    "_context",
    "_parent",
    "_kind",
    "_start_time",
    "_end_time",
    "_attributes",
    "_status",
    "_events",
    "_links",
    "_resource",
}
_IDS = re.compile(r'"(traceId|spanId|parentSpanId)":"[0-9a-f]+"')
_TIMES = re.compile(r'"(startTimeUnixNano|endTimeUnixNano|timeUnixNano)":"\d+"')


def private_uses(source: str) -> list[str]:
    """Private OpenTelemetry names a module imports, and private fields it reads (of anything
    but ``self``: a LightSpan's own ``_kind`` is not the SDK's)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("opentelemetry"):
            module = node.module or ""
            if any(part.startswith("_") for part in module.split(".")):
                found.append(f"from {module}")
            found += [f"{module}.{a.name}" for a in node.names if a.name.startswith("_")]
        elif isinstance(node, ast.Import):
            found += [
                a.name
                for a in node.names
                if a.name.startswith("opentelemetry")
                and any(p.startswith("_") for p in a.name.split("."))
            ]
        elif (
            isinstance(node, ast.Attribute)
            and node.attr in PRIVATE_FIELDS
            and not (isinstance(node.value, ast.Name) and node.value.id == "self")  # its own
        ):
            found.append(f".{node.attr}")
    return found


def test_telemetry_uses_public_opentelemetry_apis_only() -> None:
    problems = {
        str(path.relative_to(TELEMETRY)): uses
        for path in sorted(TELEMETRY.rglob("*.py"))
        if (uses := private_uses(path.read_text()))
    }
    assert problems == {}


def test_the_check_finds_private_uses() -> None:
    source = (
        "from opentelemetry.trace.propagation import _SPAN_KEY\n"
        "from opentelemetry.util._decorator import x\n"
        "import opentelemetry.util._once\n"
        "k = kind._value_ + span._start_time + self._kind\n"
    )
    assert sorted(private_uses(source)) == [
        "._start_time",
        "._value_",
        "from opentelemetry.util._decorator",
        "opentelemetry.trace.propagation._SPAN_KEY",
        "opentelemetry.util._once",
    ]


def script(tracer: trace.Tracer) -> None:
    """start_as_current_span used every way: a context manager, and a decorator of a sync and
    an async function called twice each."""

    @tracer.start_as_current_span("sync")
    def work(n: int) -> int:
        tracer.start_span("sync child").end()
        return n + 1

    @tracer.start_as_current_span("async")
    async def awork(n: int) -> int:
        span = trace.get_current_span()
        assert span.is_recording()
        await asyncio.sleep(0.01)
        tracer.start_span("async child").end()
        return n * 2

    with tracer.start_as_current_span("root") as root:
        assert trace.get_current_span() is root
        assert [work(1), work(2)] == [2, 3]
        assert asyncio.run(awork(3)) == 6
        assert asyncio.run(awork(4)) == 8
    assert trace.get_current_span() is trace.INVALID_SPAN


def normalized(path: Path) -> list[str]:
    text = _TIMES.sub(lambda m: f'"{m.group(1)}":"T"', _IDS.sub(r'"\1":"ID"', path.read_text()))
    return sorted(text.splitlines())


def test_start_as_current_span_decorates_as_the_sdks_does(tmp_path: Path) -> None:
    resource = Resource.create({"service.name": "decorators"})
    sdk = TracerProvider(resource=resource)
    sdk.add_span_processor(SimpleSpanProcessor(JsonLinesSpanExporter(tmp_path / "sdk.jsonl")))
    light = LightTracerProvider(JsonLinesSpanExporter(tmp_path / "light.jsonl"), resource=resource)
    for provider in (sdk, light):
        script(provider.get_tracer("decorators"))
        provider.shutdown()
    assert normalized(tmp_path / "light.jsonl") == normalized(tmp_path / "sdk.jsonl")
    spans = read_spans(tmp_path / "light.jsonl")
    by_id = {s.span_id: s for s in spans}
    parents = sorted((s.name, by_id[s.parent_span_id].name) for s in spans if s.parent_span_id)
    assert parents == [
        ("async", "root"),
        ("async", "root"),
        ("async child", "async"),
        ("async child", "async"),
        ("sync", "root"),
        ("sync", "root"),
        ("sync child", "sync"),
        ("sync child", "sync"),
    ]
    # An async function's span lasts until its coroutine has finished (its 10 ms sleep).
    assert all(s.end_ns - s.start_ns >= 10_000_000 for s in spans if s.name == "async")
