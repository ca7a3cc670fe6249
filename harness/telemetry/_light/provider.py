"""The light tracer's :class:`LightTracerProvider` (the per-run buffers and their writing) and
:class:`LightTracer` (span creation: ids, parents, the default sampler). See
:mod:`harness.telemetry._light` for what it writes and when.
"""

from __future__ import annotations

import atexit
import functools
import inspect
import logging
import os
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from random import getrandbits
from types import TracebackType
from typing import Any, TypeVar, cast

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanLimits
from opentelemetry.trace import (
    Link,
    NonRecordingSpan,
    SpanContext,
    SpanKind,
    TraceFlags,
    TraceState,
)
from opentelemetry.util import types

from harness.telemetry import _conventions as c
from harness.telemetry._exporters import JsonLinesSpanExporter
from harness.telemetry._light.attributes import clean_attributes
from harness.telemetry._light.span import LightSpan, Run
from harness.telemetry._otlpjson import encode_fields, tail_json
from harness.telemetry._verdict import HeldRoots, verdict_fields

__all__ = [
    "DEFAULT_BATCH_SPANS",
    "DEFAULT_FLUSH_AFTER_S",
    "CurrentSpan",
    "LightSpan",
    "LightTracer",
    "LightTracerProvider",
]

#: Spans buffered per local root before they are written anyway.
DEFAULT_BATCH_SPANS = 256
#: A buffer whose oldest span has waited this long is written at the next span end.
DEFAULT_FLUSH_AFTER_S = 5.0

# Every provider, for the fork handler below.
_PROVIDERS: weakref.WeakSet[LightTracerProvider] = weakref.WeakSet()

_SAMPLED = TraceFlags.SAMPLED
_RANDOM = TraceFlags.RANDOM_TRACE_ID
_INTERNAL = SpanKind.INTERNAL
_F = TypeVar("_F", bound=Callable[..., Any])
_log = logging.getLogger("harness.telemetry")


class LightTracerProvider(trace.TracerProvider):
    """A TracerProvider writing its spans to a JSON-lines span file (see the module docs).
    Pass it as ``tracer_provider=`` like any provider; :meth:`shutdown` writes what is left."""

    def __init__(
        self,
        file: JsonLinesSpanExporter,
        *,
        resource: Resource | None = None,
        span_limits: SpanLimits | None = None,
        batch_spans: int = DEFAULT_BATCH_SPANS,
        flush_after_s: float = DEFAULT_FLUSH_AFTER_S,
        shutdown_on_exit: bool = True,
        hold: Callable[[Mapping[str, Any]], bool] | None = None,
    ) -> None:
        """``file``: where the lines go; ``resource`` and ``span_limits`` as for the SDK's
        TracerProvider (default: ``Resource.create({})``, ``SpanLimits()`` from the
        environment); ``shutdown_on_exit`` registers :meth:`shutdown` with ``atexit`` (the
        tracing handle of configure_tracing does that itself); ``hold`` tells from a trace
        root's attributes whether it waits for a verdict when it ends (:meth:`release`, see
        :mod:`harness.telemetry._verdict`)."""
        self.file = file
        self.resource = resource if resource is not None else Resource.create({})
        self.span_limits = span_limits if span_limits is not None else SpanLimits()
        self.batch_spans = max(1, batch_spans)
        self.flush_after_s = flush_after_s
        self.write_failures = 0
        self._tracers: dict[tuple[str, str | None, str | None], LightTracer] = {}
        self._live: set[Run] = set()
        self._lock = threading.Lock()
        self._closed = False
        self.hold = hold
        self._held: HeldRoots[LightSpan] = HeldRoots(self._write_span)
        _PROVIDERS.add(self)
        if shutdown_on_exit:
            atexit.register(self.shutdown)

    def get_tracer(
        self,
        instrumenting_module_name: str,
        instrumenting_library_version: str | None = None,
        schema_url: str | None = None,
        attributes: types.Attributes | None = None,
    ) -> LightTracer:
        key = (instrumenting_module_name or "", instrumenting_library_version, schema_url)
        tracer = self._tracers.get(key)
        if tracer is None:
            with self._lock:
                tracer = self._tracers.get(key)
                if tracer is None:
                    tracer = self._tracers[key] = LightTracer(self, key[0], key[1])
        return tracer

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Write every buffered span, of finished and unfinished runs alike (not the roots held
        for a verdict: that may still come)."""
        with self._lock:
            runs = list(self._live)
        for run in runs:
            self._write(run)
        return not self._closed

    def shutdown(self) -> None:
        """Write every buffered span and every held root (unchanged), and close the file.
        Idempotent."""
        if self._closed:
            return
        self.force_flush()
        for span in self._held.take_all():
            self._write_span(span)
        self._closed = True
        self.file.shutdown()
        atexit.unregister(self.shutdown)

    def _after_fork(self) -> None:
        """In a forked child: the parent's buffered spans are the parent's to write (as the
        SDK's batch processor drops its queue), and no lock may stay held by a parent thread."""
        self._lock = threading.Lock()
        self.file.after_fork()
        for run in self._live:
            run.spans.clear()
        self._held.clear()

    # --- verdicts (harness.telemetry._verdict) -------------------------------------------------

    def release(self, trace_id: int, verdict: Mapping[str, Any] | None = None) -> bool:
        """Write the held root of ``trace_id`` with ``verdict``'s attributes and
        ``gen_ai.evaluation.result`` event (None: unchanged); False when none is held."""
        span = self._held.take(trace_id)
        if span is None:
            return False
        if verdict is not None:
            try:
                attrs, event = verdict_fields(verdict)
                span.amend(attrs, [(c.EVENT_EVALUATION_RESULT, event)])
            except Exception:  # never lose the span for a bad verdict
                _log.warning("harness: cannot add the verdict to trace %032x", trace_id,
                             exc_info=True)  # fmt: skip
        self._write_span(span)
        return True

    @property
    def held(self) -> int:
        """How many roots wait for a verdict."""
        return len(self._held)

    # --- buffers (called by LightSpan) ---------------------------------------------------------

    def _open(self, root: LightSpan) -> Run:
        run = Run()
        run.root = root
        if not self._closed:  # after shutdown its spans are dropped (a failed write each)
            with self._lock:
                self._live.add(run)
        return run

    def _ended(self, span: LightSpan, run: Run) -> None:
        """A span of ``run`` ended and is in its buffer."""
        n = len(run.spans)
        if span is run.root:
            run.done = True
            run.root = None  # no cycle left for the garbage collector
            hold = self.hold
            held = hold is not None and span._parent_id is None and hold(span._attrs)
            with self._lock:
                self._live.discard(run)
                if held:  # out of the buffer before anyone else writes it
                    try:
                        run.spans.remove(span)
                    except ValueError:  # a concurrent force_flush wrote it already
                        held = False
            if held and not self._held.hold(span._trace_id, span):
                self._write_span(span)  # shut down meanwhile, or the trace's root is held
            self._write(run)
        elif run.done or n >= self.batch_spans:  # a straggler after its root, or a full buffer
            self._write(run)
        elif n == 1:
            run.since = time.monotonic()
        elif time.monotonic() - run.since >= self.flush_after_s:
            self._write(run)

    def _write_span(self, span: LightSpan) -> None:
        if not self.file.write_text(encode_fields(span.span_fields()) + span._tracer.tail):
            self.write_failures += 1

    def _write(self, run: Run) -> None:
        spans = run.spans
        if not spans:
            return
        # Only the writers take the lock (a run's spans can be written from two threads: its
        # own and a force_flush). A span appended meanwhile lands after ``n`` and stays.
        with self._lock:
            n = len(spans)
            batch = spans[:n]
            del spans[:n]
        parts = []
        for span in batch:
            parts.append(encode_fields(span.span_fields()))
            parts.append(span._tracer.tail)
        if not self.file.write_text("".join(parts)):
            self.write_failures += 1


class LightTracer(trace.Tracer):
    """The Tracer of :class:`LightTracerProvider`, one per instrumentation scope."""

    def __init__(self, provider: LightTracerProvider, name: str, version: str | None) -> None:
        self.provider = provider
        self.name = name
        self.version = version
        self.limits = limits = provider.span_limits
        self.max_len = limits.max_span_attribute_length
        self.max_attrs = limits.max_span_attributes
        #: ``resource``, ``scope`` and the end of each line of this tracer's spans.
        self.tail = tail_json(
            provider.resource.attributes, {"name": name, "version": version or ""}
        )

    def start_span(
        self,
        name: str,
        context: Context | None = None,
        kind: SpanKind = _INTERNAL,
        attributes: types.Attributes = None,
        links: Sequence[Link] | None = (),
        start_time: int | None = None,
        record_exception: bool = True,
        set_status_on_exception: bool = True,
    ) -> trace.Span:
        parent = trace.get_current_span(context)  # INVALID_SPAN when there is none
        state: TraceState | None
        if type(parent) is LightSpan and parent._tracer.provider is self.provider:
            trace_id, parent_id = parent._trace_id, parent._span_id
            flags, state, run = parent._flags, parent._state, parent._run
        else:
            sc = parent.get_span_context()
            run = None
            if sc is not None and sc.is_valid:  # a foreign (SDK, remote) parent
                trace_id, parent_id, state = sc.trace_id, sc.span_id, sc.trace_state
                flags = sc.trace_flags & _RANDOM
                if not sc.trace_flags.sampled:  # ParentBased: no span under an unsampled one
                    span_id = getrandbits(64) or 1
                    return NonRecordingSpan(
                        SpanContext(trace_id, span_id, False, TraceFlags(flags), state)
                    )
                flags |= _SAMPLED
            else:
                trace_id, parent_id, state = getrandbits(128) or 1, None, None
                flags = _SAMPLED | _RANDOM
        span = LightSpan(
            self,
            run,
            trace_id,
            parent_id,
            flags,
            state,
            name,
            1 if kind is _INTERNAL else kind.value + 1,  # OTLP counts from UNSPECIFIED=0
            start_time if start_time is not None else time.time_ns(),
        )
        if attributes:
            span._attrs, span._dropped_attrs = clean_attributes(
                attributes, self.max_len, self.max_attrs
            )
        if links:
            for link in links:
                span.add_link(link.context, link.attributes)
        if not record_exception:
            span._record_exception = False
        if not set_status_on_exception:
            span._set_status_on_exception = False
        return span

    # The API types this method's result with a private class (``_AgnosticContextManager``);
    # CurrentSpan does the same job (a context manager that also decorates sync and async
    # functions) on public APIs only.
    def start_as_current_span(  # type: ignore[override]
        self,
        name: str,
        context: Context | None = None,
        kind: SpanKind = _INTERNAL,
        attributes: types.Attributes = None,
        links: Sequence[Link] | None = (),
        start_time: int | None = None,
        record_exception: bool = True,
        set_status_on_exception: bool = True,
        end_on_exit: bool = True,
    ) -> CurrentSpan:
        start = functools.partial(
            self.start_span, name, context, kind, attributes, links, start_time,
            record_exception, set_status_on_exception,
        )  # fmt: skip
        return CurrentSpan(start, end_on_exit, record_exception, set_status_on_exception)


class CurrentSpan(AbstractContextManager[trace.Span]):
    """What :meth:`LightTracer.start_as_current_span` returns: a context manager that starts a
    span on entry and makes it current (``trace.use_span``), ending it on exit. As the API's
    own, it also decorates a function, sync or async, with a new span per call (an async
    function's span lasts until its coroutine finishes)."""

    def __init__(
        self,
        start: Callable[[], trace.Span],
        end_on_exit: bool,
        record_exception: bool,
        set_status_on_exception: bool,
    ) -> None:
        self._start = start
        self._options = (end_on_exit, record_exception, set_status_on_exception)
        self._use: AbstractContextManager[trace.Span] | None = None

    def __enter__(self) -> trace.Span:
        end_on_exit, record_exception, set_status_on_exception = self._options
        self._use = trace.use_span(
            self._start(),
            end_on_exit=end_on_exit,
            record_exception=record_exception,
            set_status_on_exception=set_status_on_exception,
        )
        return self._use.__enter__()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        use, self._use = self._use, None
        return use.__exit__(exc_type, exc, tb) if use is not None else None

    def _again(self) -> CurrentSpan:
        return CurrentSpan(self._start, *self._options)

    def __call__(self, func: _F) -> _F:
        if inspect.iscoroutinefunction(func):

            @functools.wraps(func)
            async def traced_async(*args: Any, **kwargs: Any) -> Any:
                with self._again():
                    return await func(*args, **kwargs)

            return cast("_F", traced_async)

        @functools.wraps(func)
        def traced(*args: Any, **kwargs: Any) -> Any:
            with self._again():
                return func(*args, **kwargs)

        return cast("_F", traced)


def _after_fork_in_child() -> None:
    for provider in list(_PROVIDERS):
        provider._after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
