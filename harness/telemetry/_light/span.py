"""The light tracer's span (:class:`LightSpan`): plain fields, the SDK's limits and status
rules, handed to its local root's buffer (:class:`Run`) when it ends. The attribute rules are in
:mod:`~harness.telemetry._light.attributes`; the provider, the tracer and the buffers' writing in
:mod:`~harness.telemetry._light.provider`, which this module knows only as :class:`SpanSource`
(what a span needs of its tracer).
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Mapping, Sequence
from random import getrandbits
from types import TracebackType
from typing import Any, Protocol

from opentelemetry import trace
from opentelemetry.sdk.trace import SpanLimits
from opentelemetry.trace import SpanContext, Status, StatusCode, TraceFlags, TraceState
from opentelemetry.util import types

from harness.telemetry._light.attributes import clean_attributes, clean_value, put
from harness.telemetry._otlpjson import SpanFields

__all__ = ["Buffers", "LightSpan", "Run", "SpanSource"]

_OK: int = StatusCode.OK.value
_SCALARS = (bool, int, float)

Event = tuple[int, str, Mapping[str, Any] | None]
LinkFields = tuple[int, int, Mapping[str, Any] | None]


class Run:
    """The buffer of one local root's ended spans, not yet written (see
    :mod:`harness.telemetry._light`)."""

    __slots__ = ("done", "root", "since", "spans")

    def __init__(self) -> None:
        self.spans: list[LightSpan] = []
        self.root: LightSpan | None = None
        self.done = False
        self.since = 0.0


class Buffers(Protocol):
    """What a span needs of its provider (``LightTracerProvider``): a buffer for the spans of
    a new local root, and the news that a span ended into its buffer."""

    def _open(self, root: LightSpan) -> Run: ...

    def _ended(self, span: LightSpan, run: Run) -> None: ...


class SpanSource(Protocol):
    """What a span needs of its tracer (``LightTracer``): its provider, the span limits, and
    the end of each line of its spans."""

    @property
    def provider(self) -> Buffers: ...

    @property
    def limits(self) -> SpanLimits: ...

    @property
    def max_len(self) -> int | None: ...

    @property
    def max_attrs(self) -> int | None: ...

    @property
    def tail(self) -> str: ...


class LightSpan(trace.Span):
    """A span of :class:`~harness.telemetry._light.LightTracer`: plain fields, handed to its
    run's buffer when it ends. Made by ``LightTracer.start_span`` only."""

    __slots__ = (
        "_attrs",
        "_end",
        "_flags",
        "_kind",
        "_name",
        "_parent_id",
        "_run",
        "_span_id",
        "_start",
        "_state",
        "_trace_id",
        "_tracer",
    )
    # Set on few spans: class defaults, overridden in the instance dict (the API's Span has no
    # __slots__, so every span has one) when set, to keep span creation short.
    _events: list[Event] | None = None
    _links: list[LinkFields] | None = None
    _dropped_attrs = 0
    _dropped_events = 0
    _code = 0
    _message: str | None = None
    _ctx: SpanContext | None = None
    _record_exception = True
    _set_status_on_exception = True

    def __init__(
        self,
        tracer: SpanSource,
        run: Run | None,
        trace_id: int,
        parent_id: int | None,
        flags: int,
        state: TraceState | None,
        name: str,
        kind: int,
        start: int,
    ) -> None:
        self._tracer = tracer
        self._trace_id = trace_id
        self._span_id = getrandbits(64) or 1
        self._parent_id = parent_id
        self._flags = flags
        self._state = state
        self._name = name
        self._kind = kind  # the OTLP number
        self._start = start
        self._end: int | None = None
        self._attrs: dict[str, Any] = {}
        self._run = run if run is not None else tracer.provider._open(self)

    # --- the Span API ------------------------------------------------------------------------

    def get_span_context(self) -> SpanContext:
        ctx = self._ctx
        if ctx is None:
            ctx = self._ctx = SpanContext(
                self._trace_id, self._span_id, False, TraceFlags(self._flags), self._state
            )
        return ctx

    def is_recording(self) -> bool:
        return self._end is None

    def set_attribute(self, key: str, value: types.AnyValue) -> None:
        if self._end is not None:
            return
        if not key or not isinstance(key, str):
            self._dropped_attrs += 1
            return
        v: Any = value
        max_len = self._tracer.max_len
        if type(v) is str:
            if max_len is not None and len(v) > max_len:
                v = v[:max_len]
        elif type(v) not in _SCALARS:
            v = clean_value(v, max_len)
        self._dropped_attrs += put(self._attrs, key, v, self._tracer.max_attrs)

    def set_attributes(self, attributes: Mapping[str, types.AnyValue]) -> None:
        if self._end is not None or not attributes:
            return
        tracer = self._tracer
        if not self._attrs:
            self._attrs, dropped = clean_attributes(attributes, tracer.max_len, tracer.max_attrs)
        else:
            cleaned, dropped = clean_attributes(attributes, tracer.max_len, None)
            for k, v in cleaned.items():
                dropped += put(self._attrs, k, v, tracer.max_attrs)
        self._dropped_attrs += dropped

    def add_event(
        self, name: str, attributes: types.Attributes = None, timestamp: int | None = None
    ) -> None:
        if self._end is not None:
            return
        limits = self._tracer.limits
        attrs = None
        if attributes:
            attrs = clean_attributes(
                attributes, limits.max_attribute_length, limits.max_event_attributes
            )[0]
        events = self._events
        if events is None:
            events = self._events = []
        max_events = limits.max_events
        if max_events is not None and len(events) >= max_events:
            self._dropped_events += 1
            if not max_events:
                return
            del events[0]
        events.append((timestamp if timestamp is not None else time.time_ns(), name, attrs))

    def add_link(self, context: SpanContext, attributes: types.Attributes = None) -> None:
        if self._end is not None:
            return
        if not context or not (context.is_valid or attributes or context.trace_state):
            return  # the SDK's _is_valid_link
        limits = self._tracer.limits
        links = self._links
        if links is None:
            links = self._links = []
        if limits.max_links is not None and len(links) >= limits.max_links:
            if not limits.max_links:
                return
            del links[0]
        attrs = None
        if attributes:
            attrs = clean_attributes(
                attributes, limits.max_attribute_length, limits.max_link_attributes
            )[0]
        links.append((context.trace_id, context.span_id, attrs))

    def update_name(self, name: str) -> None:
        if self._end is None:
            self._name = name

    def set_status(self, status: Status | StatusCode, description: str | None = None) -> None:
        if self._end is not None or self._code == _OK:  # OK is final
            return
        if isinstance(status, StatusCode):
            status = Status(status, description)  # keeps a description only with ERROR
        if status.status_code is StatusCode.UNSET:
            return
        self._code = status.status_code.value
        self._message = status.description

    def record_exception(
        self,
        exception: BaseException,
        attributes: types.Attributes = None,
        timestamp: int | None = None,
        escaped: bool = False,
    ) -> None:
        """An ``exception`` event, as the SDK records it."""
        module = type(exception).__module__
        qualname = type(exception).__qualname__
        attrs: dict[str, Any] = {
            "exception.type": (
                f"{module}.{qualname}" if module and module != "builtins" else qualname
            ),
            "exception.message": str(exception),
            "exception.stacktrace": "".join(traceback.format_exception(exception)),
            "exception.escaped": str(escaped),
        }
        if attributes:
            attrs.update(attributes)
        self.add_event("exception", attrs, timestamp)

    def end(self, end_time: int | None = None) -> None:
        if self._end is not None:
            return
        self._end = end_time if end_time is not None else time.time_ns()
        run = self._run
        run.spans.append(self)
        self._tracer.provider._ended(self, run)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        """As the SDK's span: an exception leaving the ``with`` is recorded, status ERROR."""
        if exc_val is not None and self._end is None:
            if self._record_exception:
                self.record_exception(exc_val, escaped=True)
            if self._set_status_on_exception:
                self.set_status(Status(StatusCode.ERROR, f"{type(exc_val).__name__}: {exc_val}"))
        self.end()

    def amend(
        self,
        attributes: Mapping[str, types.AnyValue],
        events: Sequence[tuple[str, types.Attributes]] = (),
    ) -> None:
        """Add ``attributes`` and ``events`` (name, attributes: timestamped now) to this span
        after it ended, within the same limits as before: for a held root that no one else
        holds (:meth:`LightTracerProvider.release`)."""
        end, self._end = self._end, None
        try:
            self.set_attributes(attributes)
            for name, attrs in events:
                self.add_event(name, attrs)
        finally:
            self._end = end

    # --- reading -----------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self._name

    @property
    def parent_span_id(self) -> int | None:
        return self._parent_id

    @property
    def attributes(self) -> Mapping[str, Any]:
        return self._attrs

    def span_fields(self) -> SpanFields:
        """What the encoder takes (:func:`~harness.telemetry._otlpjson.encode_fields`)."""
        return (
            self._trace_id,
            self._span_id,
            self._parent_id,
            self._name,
            self._kind,
            self._start,
            self._end or 0,
            self._attrs,
            self._events or (),
            self._links or (),
            self._dropped_attrs,
            self._dropped_events,
            self._code,
            self._message,
        )

    def __repr__(self) -> str:
        return f"LightSpan({self._name!r}, span_id=0x{self._span_id:016x})"
