"""A lightweight tracer for the span file alone: the part of the OpenTelemetry Tracer/Span API
the harness uses, writing the same OTLP-JSON lines as the SDK path without the SDK's span
objects, locks, span processors or export thread.

:func:`~harness.telemetry.configure_tracing` uses it when spans only go to a local file (no
OTLP, no in-memory exporter, no ``sdk=True``, the default sampler). The subscriber is the same
on both paths: :class:`LightTracer` and :class:`LightSpan` subclass
the API's ``Tracer`` and ``Span``, so ``trace.set_span_in_context``, ``use_span``,
``get_current_span`` and other libraries' tracers (their spans under a harness span) work as
usual.

What it writes is what the SDK path writes: random non-zero ids, parent links, kinds, attributes
(cleaned and bounded by the same ``SpanLimits``), events, links, the status rules (OK is final,
a description only with ERROR), the provider's ``Resource`` and the tracer's scope, encoded by
:func:`~harness.telemetry._otlpjson.encode_fields`, the SDK file exporter's encoder. Sampling is
the SDK default, ParentBased(AlwaysOn): under an unsampled parent a span is a
``NonRecordingSpan``.

Buffering: the spans of a *local root* (a span with no light parent: a run's root span, with
everything started under it, a sub-agent's run included) collect in one buffer, encoded and
written (one ``write`` and ``flush``) when the local root ends, when it holds ``batch_spans``
spans, or at a span end once its oldest span has waited ``flush_after_s``.
:meth:`LightTracerProvider.force_flush` and :meth:`~LightTracerProvider.shutdown` (called by the
tracing handle, at exit and on Ctrl-C too) write every buffer. What a hard kill (SIGKILL,
``os._exit``, an interpreter crash) can lose: per unfinished run, at most ``batch_spans - 1``
ended spans, plus its spans that never ended (as with the SDK); a finished run is on disk.

It uses OpenTelemetry's public API only (``opentelemetry.trace``, ``opentelemetry.context``, the
SDK's ``Resource`` and ``SpanLimits``), so that a new OpenTelemetry release cannot break it
through a private name; ``nox -s telemetry_latest`` runs the telemetry tests against the newest
release, past the upper bound in pyproject.toml. Modules: ``provider`` (the provider, its
buffers, the tracer), ``span`` (the span) and ``attributes`` (the SDK's attribute rules).
"""

from __future__ import annotations

from harness.telemetry._light.provider import (
    DEFAULT_BATCH_SPANS,
    DEFAULT_FLUSH_AFTER_S,
    LightTracer,
    LightTracerProvider,
)
from harness.telemetry._light.span import LightSpan

__all__ = [
    "DEFAULT_BATCH_SPANS",
    "DEFAULT_FLUSH_AFTER_S",
    "LightSpan",
    "LightTracer",
    "LightTracerProvider",
]
