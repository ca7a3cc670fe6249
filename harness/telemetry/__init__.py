"""Telemetry: every kernel event in an OpenTelemetry trace (DESIGN.md section 4).

- :class:`RunTracer` (``subscriber``, with ``_calls`` and ``_tools``): the subscriber turning one
  run's events into spans; ``resolve``: which tracer (and content settings) a run reports to;
- :func:`configure_tracing` (``setup``, with ``_export``): a TracerProvider with file / OTLP /
  in-memory exporters, or for a span file alone the light tracer (``light``, with
  ``_lightspan``: the same lines without the SDK's spans and batch processor);
- :class:`JsonLinesSpanExporter`, :func:`read_spans` (``exporters``): the JSON-lines span file,
  encoded by ``otlpjson`` (one encoder for both tracers);
- ``show``: the ``harness traces show`` tree; ``conventions``: every span and attribute name.

The facade calls :func:`tracing_subscriber` for each run. It imports OpenTelemetry only when
tracing is active (a ``tracer_provider=`` option, or a configured global provider), so untraced
runs pay nothing and ``import harness`` never loads OpenTelemetry.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.kernel.state import State, Subscriber
    from harness.telemetry.exporters import JsonLinesSpanExporter, SpanRecord, read_spans
    from harness.telemetry.light import LightTracerProvider
    from harness.telemetry.setup import TracingHandle, configure_tracing
    from harness.telemetry.subscriber import RunTracer

__all__ = [
    "CAPTURE_CONTENT_ENV",
    "JsonLinesSpanExporter",
    "LightTracerProvider",
    "RunTracer",
    "SpanRecord",
    "TracingHandle",
    "configure_tracing",
    "read_spans",
    "tracing_subscriber",
]

#: The GenAI instrumentations' opt-in for message content; honoured when nothing else decides.
CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

_LAZY = {
    "JsonLinesSpanExporter": "harness.telemetry.exporters",
    "SpanRecord": "harness.telemetry.exporters",
    "read_spans": "harness.telemetry.exporters",
    "LightTracerProvider": "harness.telemetry.light",
    "TracingHandle": "harness.telemetry.setup",
    "configure_tracing": "harness.telemetry.setup",
    "RunTracer": "harness.telemetry.subscriber",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def tracing_subscriber(state: State) -> Subscriber | None:
    """The trace subscriber of a run about to start, or None when tracing is off.

    Traces go to the run's ``tracer_provider`` option, else to the global OpenTelemetry
    provider; when neither is configured there is no subscriber at all (and no import).
    """
    config = state.config
    provider = config.tracer_provider
    if provider is None:
        # Nobody can have set a global provider without importing opentelemetry.trace (the
        # env var lets the API load one by entry point on first use).
        if "opentelemetry.trace" not in sys.modules and not os.environ.get(
            "OTEL_PYTHON_TRACER_PROVIDER"
        ):
            return None
        from harness.telemetry.resolve import global_tracer_provider

        provider = global_tracer_provider()
        if provider is None:
            return None
    try:
        return _start(state, provider)
    except Exception:  # tracing must never keep a run from starting
        logging.getLogger("harness.telemetry").warning(
            "harness: cannot start tracing this run; it runs untraced", exc_info=True
        )
        return None


def _start(state: State, provider: Any) -> Subscriber | None:
    from harness.telemetry.resolve import DEFAULT_CONTENT_MAX_CHARS, tracer_and_settings
    from harness.telemetry.subscriber import RunTracer

    config = state.config
    tracer, settings = tracer_and_settings(provider)
    if tracer is None:  # a no-op tracer, e.g. OTEL_SDK_DISABLED=true
        return None
    capture = config.capture_content
    if capture is None:
        if settings is not None:
            capture = settings.capture_content
        else:
            capture = os.environ.get(CAPTURE_CONTENT_ENV, "").strip().lower() in ("1", "true")
    prompt = None
    if capture:
        prompt = next((m.content for m in reversed(state.messages) if m.role == "user"), None)
    return RunTracer(
        tracer,
        mode=state.mode.name,
        session_id=state.session_id,
        provider=state.provider.name,
        capture_content=capture,
        content_max_chars=(
            settings.content_max_chars if settings is not None else DEFAULT_CONTENT_MAX_CHARS
        ),
        attributes=config.trace_attributes,
        prompt=prompt,
    )
