"""Which tracer a run reports to: the per-provider tracer cache, the settings that
:func:`~harness.telemetry.configure_tracing` registers for its providers, and the global
provider check."""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Tracer

from harness._version import __version__
from harness.telemetry import _conventions as c

__all__ = [
    "DEFAULT_CONTENT_MAX_CHARS",
    "TraceSettings",
    "global_tracer_provider",
    "register_settings",
    "settings_for",
    "tracer_and_settings",
    "tracer_for",
]

#: Default cap on recorded text (Tempo truncates attributes at 2 KiB by default).
DEFAULT_CONTENT_MAX_CHARS = 2000


@dataclass(frozen=True, slots=True)
class TraceSettings:
    """Per-provider defaults, registered by :func:`~harness.telemetry.configure_tracing`."""

    capture_content: bool = False
    content_max_chars: int = DEFAULT_CONTENT_MAX_CHARS


_SETTINGS: weakref.WeakKeyDictionary[Any, TraceSettings] = weakref.WeakKeyDictionary()
_TRACERS: weakref.WeakKeyDictionary[Any, Tracer | None] = weakref.WeakKeyDictionary()


# The provider of the last run, with its tracer and settings: most processes trace to one.
_LAST: tuple[Any, Tracer | None, TraceSettings | None] | None = None


def register_settings(provider: Any, settings: TraceSettings) -> None:
    global _LAST
    _SETTINGS[provider] = settings
    _LAST = None


def tracer_and_settings(provider: Any) -> tuple[Tracer | None, TraceSettings | None]:
    """:func:`tracer_for` and :func:`settings_for`, with a fast path for the last provider."""
    global _LAST
    last = _LAST
    if last is not None and last[0] is provider:
        return last[1], last[2]
    tracer, settings = tracer_for(provider), settings_for(provider)
    _LAST = (provider, tracer, settings)
    return tracer, settings


def settings_for(provider: Any) -> TraceSettings | None:
    try:
        return _SETTINGS.get(provider)
    except TypeError:  # not weak-referenceable
        return None


def _make_tracer(provider: Any) -> Tracer | None:
    tracer = provider.get_tracer(c.SCOPE_NAME, __version__)
    return None if isinstance(tracer, trace.NoOpTracer) else tracer


def tracer_for(provider: Any) -> Tracer | None:
    """The harness tracer of ``provider`` (cached per provider); None for a no-op tracer."""
    try:
        if provider in _TRACERS:
            return _TRACERS[provider]
    except TypeError:  # not weak-referenceable: no cache
        return _make_tracer(provider)
    tracer = _TRACERS[provider] = _make_tracer(provider)
    return tracer


def global_tracer_provider() -> Any:
    """The global provider, or None when none is configured (the default proxy / no-op)."""
    provider = trace.get_tracer_provider()
    if isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
        return None
    return provider
