"""Grades in the traces: a graded run's verdict on its root span (docs/tracing.md).

The bench grades a cell after its run has ended, so the run's root span is already closed when the
verdict is known. Root spans that wait for a verdict are therefore *held* when they end (not
exported), and released by :func:`record_verdict`, which adds the verdict to the copy that is
exported:

- the ``gen_ai.evaluation.result`` span event of the GenAI evaluation conventions
  (``gen_ai.evaluation.name`` = ``harness.verdict``, ``gen_ai.evaluation.score.value``,
  ``gen_ai.evaluation.score.label`` = the cell status ``passed`` / ``failed`` / ``error``,
  ``gen_ai.evaluation.explanation``; ``error.type`` when the cell could not be scored);
- flat attributes for filtering (``harness.cell.status``, ``harness.cell.passed``,
  ``harness.cell.score``, ``harness.grader.kind``): Phoenix's span filters and attribute search,
  Jaeger's and Tempo's tag search read attributes, not events.

A held root that gets no verdict (its cell crashed before grading, or nobody records one) is
released unchanged when the provider shuts down, and the oldest held root is released unchanged
when more than :data:`MAX_HELD` wait; ``force_flush`` leaves held roots alone (a verdict may
still come). A root is exported exactly once either way.

Which roots are held: with ``configure_tracing(hold_roots=True)`` (the bench's tracing) every
trace root of a run (an ``invoke_agent`` span without a parent); by default none, so a provider
whose owner never records verdicts exports every span as it ends.

Both tracers hold: the SDK's through :class:`HoldingSpanProcessor`, a span processor wrapping the
exporting ones, which exports a patched copy of the held ``ReadableSpan``; the light tracer
through its ``hold`` hook (:class:`~harness.telemetry._light.LightTracerProvider`), which amends the
held ``LightSpan`` itself before writing it.
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Generic, TypeVar

from opentelemetry.context import Context
from opentelemetry.sdk.trace import Event, ReadableSpan, Span, SpanLimits, SpanProcessor

from harness.telemetry import _conventions as c

__all__ = [
    "MAX_HELD",
    "HeldRoots",
    "HoldingSpanProcessor",
    "hold_predicate",
    "record_verdict",
    "register_holder",
    "verdict_fields",
]

log = logging.getLogger("harness.telemetry")

#: Roots held at most at once; beyond this the oldest is released unchanged (a bench records
#: each verdict right after its run, so about as many roots as cells run at once are held).
MAX_HELD = 4096
#: Longest explanation kept on the event.
EXPLANATION_MAX_CHARS = 1000
_LABELS = ("passed", "failed", "error")

S = TypeVar("S")

#: provider -> the function releasing its held roots (see :func:`register_holder`).
_HOLDERS: weakref.WeakKeyDictionary[Any, Callable[[int, Mapping[str, Any] | None], bool]] = (
    weakref.WeakKeyDictionary()
)


def hold_predicate(hold_roots: bool) -> Callable[[Mapping[str, Any]], bool] | None:
    """Whether a trace root with these attributes is held (None: nothing is held)."""
    if not hold_roots:
        return None
    return _is_run_root


def _is_run_root(attrs: Mapping[str, Any]) -> bool:
    return attrs.get(c.GEN_AI_OPERATION_NAME) == c.OP_INVOKE_AGENT


def verdict_fields(verdict: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The root span's attributes and the ``gen_ai.evaluation.result`` event's attributes of
    ``verdict``: ``status`` (``passed`` / ``failed`` / ``error``; else derived from ``passed``),
    ``passed``, ``score`` (a number), ``grader`` (its kind), ``explanation``, and optionally
    ``name`` (the evaluation name, default ``harness.verdict``) and ``error_type``."""
    passed = verdict.get("passed")
    status = verdict.get("status")
    if status not in _LABELS:
        if status is not None:
            raise ValueError(f"verdict status must be one of {_LABELS}, got {status!r}")
        if passed is None:
            raise ValueError("a verdict needs a status or passed")
        status = "passed" if passed else "failed"
    if passed is None:
        passed = status == "passed"
    attrs: dict[str, Any] = {c.HARNESS_CELL_STATUS: status, c.HARNESS_CELL_PASSED: bool(passed)}
    event: dict[str, Any] = {
        c.GEN_AI_EVALUATION_NAME: str(verdict.get("name") or c.EVALUATION_NAME),
        c.GEN_AI_EVALUATION_SCORE_LABEL: status,
    }
    score = verdict.get("score")
    if score is not None:
        value = float(score)
        if math.isfinite(value):
            attrs[c.HARNESS_CELL_SCORE] = value
            event[c.GEN_AI_EVALUATION_SCORE_VALUE] = value
    grader = verdict.get("grader")
    if grader:
        attrs[c.HARNESS_GRADER_KIND] = str(grader)
    explanation = verdict.get("explanation")
    if explanation:
        event[c.GEN_AI_EVALUATION_EXPLANATION] = str(explanation)[:EXPLANATION_MAX_CHARS]
    if status == "error":  # the cell could not be scored: the evaluation itself failed
        event[c.ERROR_TYPE] = str(verdict.get("error_type") or "cell_error")
    return attrs, event


def register_holder(
    provider: Any, release: Callable[[int, Mapping[str, Any] | None], bool]
) -> None:
    """Make :func:`record_verdict` reach ``provider``'s held roots through ``release``."""
    _HOLDERS[provider] = release


def record_verdict(tracer_provider: Any, trace_id: str | int, verdict: Mapping[str, Any]) -> bool:
    """Record a graded run's ``verdict`` on its held root span and export it.

    ``tracer_provider`` is the provider the run traced to (a ``TracingHandle`` works too),
    ``trace_id`` the run's ``Result.trace_id`` (32 hex digits). The verdict's keys: ``status``
    (``passed`` / ``failed`` / ``error``), ``passed``, ``score``, ``grader`` (the grader kind),
    ``explanation`` (see :func:`verdict_fields`). Returns False, and changes nothing, when no
    root of that trace is held there: a provider that holds nothing (not configured by
    :func:`~harness.telemetry.configure_tracing` with ``hold_roots=True``), a root that was not
    held, already released, or released at shutdown (the root is exported then, unchanged).
    Never raises for a bad provider or trace id; a malformed verdict raises ValueError before
    anything is released."""
    provider = getattr(tracer_provider, "provider", tracer_provider)  # a TracingHandle
    try:
        release = _HOLDERS.get(provider)
    except TypeError:  # not weak-referenceable: nothing of ours
        return False
    if release is None:
        return False
    try:
        tid = trace_id if isinstance(trace_id, int) else int(trace_id, 16)
    except (TypeError, ValueError):
        return False
    verdict_fields(verdict)  # raises for a malformed verdict, before the root is taken
    return release(tid, verdict)


class HeldRoots(Generic[S]):
    """Held root spans by trace id, oldest first; thread-safe. ``overflow`` gets (outside the
    lock) a root released unchanged because more than ``limit`` were held."""

    def __init__(self, overflow: Callable[[S], None], limit: int = MAX_HELD) -> None:
        self._spans: OrderedDict[int, S] = OrderedDict()
        self._lock = threading.Lock()
        self._overflow = overflow
        self._limit = max(1, limit)
        self.closed = False

    def __len__(self) -> int:
        return len(self._spans)

    def hold(self, trace_id: int, span: S) -> bool:
        """Hold ``span``; False (not held: export it now) once :meth:`take_all` closed it, or
        when a root of the same trace is held already."""
        out: list[S] = []
        with self._lock:
            if self.closed or trace_id in self._spans:
                return False
            self._spans[trace_id] = span
            while len(self._spans) > self._limit:
                out.append(self._spans.popitem(last=False)[1])
        for old in out:
            log.debug("harness: over %d roots wait for a verdict; the oldest goes", self._limit)
            self._overflow(old)
        return True

    def take(self, trace_id: int) -> S | None:
        with self._lock:
            return self._spans.pop(trace_id, None)

    def take_all(self) -> list[S]:
        """Every held span, oldest first; nothing is held any more after this."""
        with self._lock:
            spans = list(self._spans.values())
            self._spans.clear()
            self.closed = True
        return spans

    def clear(self) -> None:
        """Forget every held span (a forked child: they are the parent's to export)."""
        self._lock = threading.Lock()
        self._spans.clear()


# --- the SDK's TracerProvider -----------------------------------------------------------------


class _Amended(ReadableSpan):
    """A held span's exported copy: its fields plus the verdict, with its dropped counts."""

    def __init__(self, span: ReadableSpan, attrs: Mapping[str, Any], events: Sequence[Event],
                 dropped: tuple[int, int, int]) -> None:  # fmt: skip
        super().__init__(
            name=span.name,
            context=span.context,
            parent=span.parent,
            resource=span.resource,
            attributes=attrs,
            events=events,
            links=span.links,
            kind=span.kind,
            status=span.status,
            start_time=span.start_time,
            end_time=span.end_time,
            instrumentation_scope=span.instrumentation_scope,
        )
        self._dropped = dropped

    @property
    def dropped_attributes(self) -> int:
        return self._dropped[0]

    @property
    def dropped_events(self) -> int:
        return self._dropped[1]

    @property
    def dropped_links(self) -> int:
        return self._dropped[2]


def _limited(attrs: dict[str, Any], max_count: int | None, max_len: int | None) -> int:
    """Cut ``attrs`` in place to the span limits (the oldest keys go first); how many went."""
    if max_len is not None:
        for k, v in attrs.items():
            if isinstance(v, str) and len(v) > max_len:
                attrs[k] = v[:max_len]
    dropped = 0
    if max_count is not None:
        while len(attrs) > max_count:
            del attrs[next(iter(attrs))]
            dropped += 1
    return dropped


def amended_span(
    span: ReadableSpan, verdict: Mapping[str, Any], limits: SpanLimits | None = None
) -> ReadableSpan:
    """A copy of the ended ``span`` with ``verdict``'s attributes and event (within ``limits``,
    default ``SpanLimits()``: the same rules as for spans still open)."""
    limits = limits or SpanLimits()
    add, event_attrs = verdict_fields(verdict)
    attrs = dict(span.attributes or {})
    for k in add:  # a key set again moves to the end, as on a live span
        attrs.pop(k, None)
    attrs.update(add)
    dropped_attrs = span.dropped_attributes + _limited(
        attrs, limits.max_span_attributes, limits.max_span_attribute_length
    )
    _limited(event_attrs, limits.max_event_attributes, limits.max_attribute_length)
    events: list[Event] = list(span.events)
    events.append(Event(c.EVENT_EVALUATION_RESULT, event_attrs, time.time_ns()))
    dropped_events = span.dropped_events
    max_events = limits.max_events
    if max_events is not None and len(events) > max_events:
        extra = len(events) - max_events
        del events[:extra]
        dropped_events += extra
    return _Amended(span, attrs, events, (dropped_attrs, dropped_events, span.dropped_links))


class HoldingSpanProcessor(SpanProcessor):
    """Wraps the exporting span processors of a TracerProvider: trace roots that ``hold``
    accepts are kept when they end, and handed on by :meth:`release` (with a verdict) or at
    :meth:`shutdown` (unchanged). Everything else passes straight through."""

    def __init__(
        self,
        processors: Iterable[SpanProcessor],
        hold: Callable[[Mapping[str, Any]], bool],
        limits: SpanLimits | None = None,
        max_held: int = MAX_HELD,
    ) -> None:
        self._processors = tuple(processors)
        self._hold = hold
        self._limits = limits
        self._held: HeldRoots[ReadableSpan] = HeldRoots(self._emit, max_held)
        _PROCESSORS.add(self)

    @property
    def held(self) -> int:
        """How many roots wait for a verdict."""
        return len(self._held)

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        for p in self._processors:
            p.on_start(span, parent_context=parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        context = span.context
        if (
            span.parent is None
            and context is not None
            and self._hold(span.attributes or {})
            and self._held.hold(context.trace_id, span)
        ):
            return
        self._emit(span)

    def _emit(self, span: ReadableSpan) -> None:
        for p in self._processors:
            p.on_end(span)

    def release(self, trace_id: int, verdict: Mapping[str, Any] | None) -> bool:
        """Export the held root of ``trace_id`` with ``verdict`` (None: unchanged); False when
        none is held."""
        span = self._held.take(trace_id)
        if span is None:
            return False
        try:
            out = amended_span(span, verdict, self._limits) if verdict is not None else span
        except Exception:  # never lose the span for a bad verdict
            log.warning("harness: cannot add the verdict to trace %032x", trace_id, exc_info=True)
            out = span
        self._emit(out)
        return True

    def shutdown(self) -> None:
        for span in self._held.take_all():
            self._emit(span)
        for p in self._processors:
            p.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        deadline = time.monotonic() + timeout_millis / 1000
        ok = True
        for p in self._processors:
            left = max(0, int((deadline - time.monotonic()) * 1000))
            ok = p.force_flush(left) and ok
        return ok


#: Every holding processor, for the fork handler below.
_PROCESSORS: weakref.WeakSet[HoldingSpanProcessor] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    """A forked child does not export its parent's held roots (as the SDK's batch processor
    drops its queue there)."""
    for processor in list(_PROCESSORS):
        processor._held.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
