"""Telemetry test fixtures: one in-memory TracerProvider for the session (never the global one),
cleared before each test, and a small trace-reading helper."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


class Trace:
    """The finished spans of a test, with lookups by name and by parent."""

    def __init__(self, spans: tuple[ReadableSpan, ...]) -> None:
        self.spans = list(spans)

    def __len__(self) -> int:
        return len(self.spans)

    def named(self, prefix: str) -> list[ReadableSpan]:
        return sorted(
            (s for s in self.spans if s.name.startswith(prefix)), key=lambda s: s.start_time or 0
        )

    def one(self, prefix: str) -> ReadableSpan:
        found = self.named(prefix)
        assert len(found) == 1, [s.name for s in self.spans]
        return found[0]

    def parent(self, span: ReadableSpan) -> ReadableSpan | None:
        if span.parent is None:
            return None
        return next(s for s in self.spans if s.context.span_id == span.parent.span_id)

    def children(self, span: ReadableSpan) -> list[ReadableSpan]:
        sid = span.context.span_id
        return sorted(
            (s for s in self.spans if s.parent is not None and s.parent.span_id == sid),
            key=lambda s: s.start_time or 0,
        )

    def names(self, spans: list[ReadableSpan]) -> list[str]:
        return [s.name for s in spans]

    def roots(self) -> list[ReadableSpan]:
        return [s for s in self.spans if s.parent is None]

    def attrs(self, span: ReadableSpan) -> dict[str, Any]:
        return dict(span.attributes or {})

    def of_trace(self, trace_id: str) -> list[ReadableSpan]:
        return [s for s in self.spans if format(s.context.trace_id, "032x") == trace_id]


_EXPORTER = InMemorySpanExporter()
_PROVIDER = TracerProvider(shutdown_on_exit=False)
_PROVIDER.add_span_processor(SimpleSpanProcessor(_EXPORTER))


@pytest.fixture
def provider() -> Iterator[TracerProvider]:
    """The session's in-memory provider (pass it as ``tracer_provider=``), emptied per test."""
    _EXPORTER.clear()
    yield _PROVIDER
    _EXPORTER.clear()


@pytest.fixture
def spans(provider: TracerProvider) -> Any:
    """A callable returning the spans finished so far as a :class:`Trace`."""
    return lambda: Trace(_EXPORTER.get_finished_spans())
