"""The light tracer's old import path: it lives in :mod:`harness.telemetry._light`."""

from __future__ import annotations

from harness.telemetry._light import (
    DEFAULT_BATCH_SPANS,
    DEFAULT_FLUSH_AFTER_S,
    LightSpan,
    LightTracer,
    LightTracerProvider,
)

__all__ = [
    "DEFAULT_BATCH_SPANS",
    "DEFAULT_FLUSH_AFTER_S",
    "LightSpan",
    "LightTracer",
    "LightTracerProvider",
]
