"""A TracerProvider for the harness: resource, exporters, bounded shutdown.

    with configure_tracing(file="reports/traces.jsonl") as tracing:
        harness.run("...", tracer_provider=tracing.provider)

Exporters: a JSON-lines span file and OTLP (http/protobuf or gRPC) behind a
``BatchSpanProcessor`` (never on the hot path), the SDK's in-memory exporter behind a
``SimpleSpanProcessor`` (tests). A span file alone gets the light tracer instead
(:mod:`harness.telemetry._light`: the same lines at a fraction of the cost) unless ``sdk=True``.
The OTLP endpoint comes from the arguments or the standard ``OTEL_EXPORTER_OTLP_*`` variables.
An unreachable collector never fails or stalls a run (:mod:`harness.telemetry._export`): its
export errors become one warning line, batches are dropped while it stays down, and
:meth:`TracingHandle.shutdown` returns within its timeout. Spans are flushed at exit (``atexit``)
and when the handle is used as a context manager, Ctrl-C included.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import TracebackType
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from harness._version import __version__
from harness.errors import ConfigError
from harness.telemetry import _conventions as c
from harness.telemetry._export import Guarded, OtlpProtocol, otlp_exporter, quiet
from harness.telemetry._exporters import JsonLinesSpanExporter, ScrubbingSpanExporter
from harness.telemetry._light import LightTracerProvider
from harness.telemetry._resolve import (
    DEFAULT_CONTENT_MAX_CHARS,
    TraceSettings,
    register_settings,
)
from harness.telemetry._verdict import HoldingSpanProcessor, hold_predicate, register_holder

__all__ = ["TracingHandle", "capture_content_from_env", "configure_tracing", "git_sha"]

log = logging.getLogger("harness.telemetry")


@dataclass(eq=False)
class TracingHandle:
    """The configured provider; pass ``handle.provider`` as ``tracer_provider=``."""

    provider: TracerProvider | LightTracerProvider
    capture_content: bool
    content_max_chars: int = DEFAULT_CONTENT_MAX_CHARS
    file: Path | None = None
    otlp_endpoint: str | None = None
    memory: InMemorySpanExporter | None = None
    _exporters: list[Guarded] = field(default_factory=list)
    _files: list[JsonLinesSpanExporter] = field(default_factory=list)
    _closed: bool = False

    @property
    def tracer_provider(self) -> TracerProvider | LightTracerProvider:
        return self.provider

    @property
    def light(self) -> bool:
        """Whether the light tracer writes the span file (no SDK spans)."""
        return isinstance(self.provider, LightTracerProvider)

    def finished_spans(self) -> tuple[ReadableSpan, ...]:
        """The in-memory exporter's spans (empty without ``in_memory=True``)."""
        return self.memory.get_finished_spans() if self.memory is not None else ()

    @property
    def export_failures(self) -> int:
        failures = sum(g.failures for g in self._exporters)
        if isinstance(self.provider, LightTracerProvider):
            failures += self.provider.write_failures
        return failures

    def force_flush(self, timeout_s: float = 5.0) -> bool:
        """Export what is queued; False when that did not finish within ``timeout_s``."""
        if self._closed:
            return False
        return _bounded(self.provider.force_flush, timeout_s)

    def shutdown(self, timeout_s: float = 5.0) -> None:
        """Flush and close the exporters, returning within about ``timeout_s`` seconds whatever
        the collector does (spans still queued then are lost, with a warning). Idempotent."""
        if self._closed:
            return
        self._closed = True
        atexit.unregister(self.shutdown)
        # A span file on a full disk was promised its back-off budget (round 9: the 5 s gave
        # up at 4.5 s, the lines held back were lost and the run said only "did not finish").
        timeout_s += max((f.wait_s for f in self._files if f.holding), default=0.0)
        try:
            if not _bounded(self.provider.shutdown, max(0.0, timeout_s - 0.5)):
                for g in self._exporters:
                    g.abort()
                log.warning("harness: trace export did not finish within %gs", timeout_s)
        finally:
            if self._exporters:
                quiet(False)

    def __enter__(self) -> TracingHandle:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.shutdown()


def _bounded(fn: Any, timeout_s: float) -> bool:
    """Run ``fn`` in a daemon thread; True when it returned within ``timeout_s``."""
    done = threading.Event()

    def target() -> None:
        try:
            fn()
        except Exception:
            log.debug("harness: tracing flush failed", exc_info=True)
        finally:
            done.set()

    try:
        threading.Thread(target=target, name="harness-trace-flush", daemon=True).start()
    except RuntimeError:  # no new threads at interpreter shutdown: run it here
        target()
    return done.wait(timeout_s)


@cache
def git_sha(start: Path | None = None) -> str | None:
    """The commit of the checkout holding ``start`` (default: this package), read from ``.git``
    without running git; None outside a checkout."""
    here = (start or Path(__file__)).resolve()
    for d in (here, *here.parents):
        git = d / ".git"
        if git.is_file():  # a worktree: "gitdir: <path>"
            text = git.read_text(encoding="utf-8", errors="replace").strip()
            git = (d / text.removeprefix("gitdir:").strip()).resolve()
        if not git.is_dir():
            continue
        try:
            head = (git / "HEAD").read_text(encoding="utf-8").strip()
            if not head.startswith("ref:"):
                return head or None
            ref = head[4:].strip()
            common = git
            if (git / "commondir").is_file():
                common = (git / (git / "commondir").read_text().strip()).resolve()
            for base in (git, common):
                if (base / ref).is_file():
                    return (base / ref).read_text(encoding="utf-8").strip() or None
            packed = common / "packed-refs"
            if packed.is_file():
                for line in packed.read_text(encoding="utf-8").splitlines():
                    sha, _, name = line.partition(" ")
                    if name == ref:
                        return sha
        except OSError:
            return None
        return None
    return None


def _resource(service_name: str) -> Resource:
    attrs: dict[str, Any] = {"service.version": __version__}
    if service_name != "harness" or not os.environ.get("OTEL_SERVICE_NAME"):
        attrs["service.name"] = service_name
    sha = git_sha()
    if sha:
        attrs[c.HARNESS_GIT_SHA] = sha
    return Resource.create(attrs)


def configure_tracing(
    *,
    service_name: str = "harness",
    file: str | Path | None = None,
    otlp_endpoint: str | None = None,
    otlp_protocol: OtlpProtocol | None = None,
    in_memory: bool = False,
    capture_content: bool | None = None,
    content_max_chars: int = DEFAULT_CONTENT_MAX_CHARS,
    set_global: bool = False,
    sdk: bool = False,
    hold_roots: bool = False,
    scrub: Callable[[str], str] | None = None,
) -> TracingHandle:
    """Build a TracerProvider exporting to a span ``file``, to OTLP and/or to memory.

    ``otlp_endpoint`` (or ``OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT``) enables OTLP; for HTTP a
    base URL gets ``/v1/traces`` appended. ``otlp_protocol`` defaults to
    ``OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL``, else http/protobuf. ``capture_content`` is the
    default of runs traced to this provider: when None, the standard
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` (true/false) decides, else it is on
    for a local span file alone and off as soon as spans also leave the machine.
    ``set_global`` also makes it the global provider.

    A ``file`` alone (no OTLP, no ``in_memory``) is written by the light tracer
    (:mod:`harness.telemetry._light`), unless ``sdk=True``, ``OTEL_SDK_DISABLED`` is set or
    ``OTEL_TRACES_SAMPLER`` asks for another sampler than the default: the same lines without the
    SDK's spans and batch processor. Its provider is then a ``LightTracerProvider``.

    ``hold_roots=True``: a run's root span waits, unexported, for
    :func:`~harness.telemetry.record_verdict` (or the shutdown) when it ends, so that a grade
    known after the run lands on it (the bench; :mod:`harness.telemetry._verdict`).

    ``scrub`` (a ``str -> str`` function: the bench passes its run's secret
    :class:`~harness.cassettes._secrets.Redactor`) cleans what every exporter gets: the span
    file line by line before it is written (a killed run leaves no raw secret), and OTLP and
    in-memory spans as scrubbed copies.
    """
    if content_max_chars < 0:
        raise ConfigError("content_max_chars: must be >= 0")
    limits = _span_limits(content_max_chars)
    path = Path(file) if file is not None else None
    hold = hold_predicate(hold_roots)
    otlp = otlp_exporter(otlp_endpoint, otlp_protocol)
    if capture_content is None:
        capture_content = capture_content_from_env()
    if capture_content is None:
        capture_content = path is not None and otlp is None
    if path is not None and otlp is None and not in_memory and not sdk and _light_allowed():
        lines = JsonLinesSpanExporter(path, scrub=scrub)
        light = LightTracerProvider(
            lines,
            resource=_resource(service_name),
            span_limits=limits,
            shutdown_on_exit=False,  # the handle's shutdown, registered below
            hold=hold,
        )
        if hold is not None:
            register_holder(light, light.release)
        return _register(
            TracingHandle(light, capture_content, content_max_chars, file=path, _files=[lines]),
            set_global,
        )
    provider = TracerProvider(
        resource=_resource(service_name), span_limits=limits, shutdown_on_exit=False
    )
    guarded = _guarded_exporters(path, otlp, scrub)
    memory = InMemorySpanExporter() if in_memory else None
    _add_processors(provider, _processors(guarded, memory, scrub), hold, limits)
    handle = TracingHandle(
        provider,
        capture_content,
        content_max_chars,
        file=path,
        otlp_endpoint=otlp[1] if otlp is not None else None,
        memory=memory,
        _exporters=guarded,
        _files=[g.inner for g in guarded if isinstance(g.inner, JsonLinesSpanExporter)],
    )
    if guarded:
        quiet(True)
    return _register(handle, set_global)


def _span_limits(content_max_chars: int) -> SpanLimits | None:
    """Attribute values long enough for the captured content, unless the environment sets the
    limit (then the SDK reads it)."""
    if os.environ.get("OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT") or os.environ.get(
        "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT"
    ):
        return None
    return SpanLimits(max_span_attribute_length=max(4096, content_max_chars))


def _guarded_exporters(
    path: Path | None,
    otlp: tuple[SpanExporter, str] | None,
    scrub: Callable[[str], str] | None,
) -> list[Guarded]:
    """The span file and the OTLP exporter, each guarded (a failing export never fails a run)
    and scrubbed."""
    guarded: list[Guarded] = []
    if path is not None:
        guarded.append(Guarded(JsonLinesSpanExporter(path, scrub=scrub), str(path)))
    if otlp is not None:
        remote = otlp[0] if scrub is None else ScrubbingSpanExporter(otlp[0], scrub)
        guarded.append(Guarded(remote, otlp[1]))
    return guarded


def _processors(
    guarded: list[Guarded],
    memory: InMemorySpanExporter | None,
    scrub: Callable[[str], str] | None,
) -> list[SpanProcessor]:
    """A batch processor per guarded exporter, and a simple one for the in-memory exporter."""
    processors: list[SpanProcessor] = []
    for g in guarded:
        # A local file keeps up with any run; a bigger queue rides out bursts (e.g. a fast
        # mock bench) without dropping spans. OTLP keeps the OTEL_BSP_* defaults.
        local = isinstance(g.inner, JsonLinesSpanExporter) and not os.environ.get(
            "OTEL_BSP_MAX_QUEUE_SIZE"
        )
        processors.append(BatchSpanProcessor(g, max_queue_size=16384 if local else None))
    if memory is not None:
        kept = memory if scrub is None else ScrubbingSpanExporter(memory, scrub)
        processors.append(SimpleSpanProcessor(kept))
    return processors


def _add_processors(
    provider: TracerProvider,
    processors: list[SpanProcessor],
    hold: Callable[[Mapping[str, Any]], bool] | None,
    limits: SpanLimits | None,
) -> None:
    """Attach the processors; with ``hold``, behind one holding wrapper, so that every
    exporter gets the same roots."""
    if hold is not None and processors:
        holding = HoldingSpanProcessor(processors, hold, limits)
        provider.add_span_processor(holding)
        register_holder(provider, holding.release)
        return
    for processor in processors:
        provider.add_span_processor(processor)


def capture_content_from_env() -> bool | None:
    """``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``: true/1 -> True, false/0 ->
    False, unset or anything else -> None (the caller's default)."""
    value = os.environ.get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "")
    value = value.strip().lower()
    if value in ("1", "true"):
        return True
    if value in ("0", "false"):
        return False
    return None


def _light_allowed() -> bool:
    """Whether the environment leaves the SDK defaults the light tracer copies."""
    env = os.environ.get
    if env("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    sampler = env("OTEL_TRACES_SAMPLER", "").strip().lower()
    return sampler in ("", "parentbased_always_on")


def _register(handle: TracingHandle, set_global: bool) -> TracingHandle:
    register_settings(
        handle.provider, TraceSettings(handle.capture_content, handle.content_max_chars)
    )
    atexit.register(handle.shutdown)
    if set_global:
        from opentelemetry import trace

        trace.set_tracer_provider(handle.provider)
    return handle
