"""Telemetry: every kernel event in an OpenTelemetry trace (docs/tracing.md).

- :class:`RunTracer` (``_subscriber``, with ``_calls`` and ``_tools``): the subscriber turning one
  run's events into spans; ``_resolve``: which tracer (and content settings) a run reports to;
- :func:`configure_tracing` (``_setup``, with ``_export``): a TracerProvider with file / OTLP /
  in-memory exporters, or for a span file alone the light tracer (the ``_light`` package: the
  same lines without the SDK's spans and batch processor);
- :class:`JsonLinesSpanExporter` (``_exporters``), :func:`read_spans` (``_readspans``): the
  JSON-lines span file, written and read back,
  encoded by ``_otlpjson`` (one encoder for both tracers);
- :func:`record_verdict` (``_verdict``): a graded run's verdict on its root span, held until
  then;
- ``_show``: the ``harness traces show`` tree; ``_conventions``: every span and attribute name.

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
    from harness.kernel._state import State, Subscriber
    from harness.telemetry._exporters import JsonLinesSpanExporter as JsonLinesSpanExporter

    # The lazy exports as a type checker sees them (``X as X``: re-exported, as mypy cannot
    # read the computed __all__): the names of _EXPORTS below, from the same modules.
    # tests/telemetry/test_exports.py checks that they agree.
    from harness.telemetry._light import LightTracerProvider as LightTracerProvider
    from harness.telemetry._readspans import SpanRecord as SpanRecord
    from harness.telemetry._readspans import read_spans as read_spans
    from harness.telemetry._setup import TracingHandle as TracingHandle
    from harness.telemetry._setup import configure_tracing as configure_tracing
    from harness.telemetry._subscriber import RunTracer as RunTracer
    from harness.telemetry._verdict import record_verdict as record_verdict

#: The one table of the public names imported on first use (they load OpenTelemetry): each
#: module and what it exports here. ``__all__`` and ``__getattr__`` are derived from it.
_EXPORTS: dict[str, tuple[str, ...]] = {
    "harness.telemetry._light": ("LightTracerProvider",),
    "harness.telemetry._exporters": ("JsonLinesSpanExporter",),
    "harness.telemetry._readspans": ("SpanRecord", "read_spans"),
    "harness.telemetry._setup": ("TracingHandle", "configure_tracing"),
    "harness.telemetry._subscriber": ("RunTracer",),
    "harness.telemetry._verdict": ("record_verdict",),
}
_LAZY = {name: module for module, names in _EXPORTS.items() for name in names}

#: The names defined here; with the lazy ones, the public API.
_EAGER = ("tracing_subscriber",)
__all__ = sorted((*_EAGER, *_LAZY))

#: The GenAI instrumentations' opt-in for message content; honoured when nothing else decides.
_CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


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
        from harness.telemetry._resolve import global_tracer_provider

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
    from harness.telemetry._resolve import DEFAULT_CONTENT_MAX_CHARS, tracer_and_settings
    from harness.telemetry._subscriber import RunTracer

    config = state.config
    tracer, settings = tracer_and_settings(provider)
    if tracer is None:  # a no-op tracer, e.g. OTEL_SDK_DISABLED=true
        return None
    capture = config.capture_content
    if capture is None:
        if settings is not None:
            capture = settings.capture_content
        else:
            capture = os.environ.get(_CAPTURE_CONTENT_ENV, "").strip().lower() in ("1", "true")
    prompt = None
    if capture:
        prompt = next((m.content for m in reversed(state.messages) if m.role == "user"), None)
    return RunTracer(
        tracer,
        mode=state.mode_name,
        session_id=state.session_id,
        provider=state.provider_name,
        capture_content=capture,
        content_max_chars=(
            settings.content_max_chars if settings is not None else DEFAULT_CONTENT_MAX_CHARS
        ),
        attributes=config.trace_attributes,
        prompt=prompt,
    )
