"""A TracerProvider for the harness: resource, exporters, bounded shutdown.

    with configure_tracing(file="reports/traces.jsonl") as tracing:
        harness.run("...", tracer_provider=tracing.provider)

Exporters: a JSON-lines span file and OTLP (http/protobuf or gRPC) behind a
``BatchSpanProcessor`` (never on the hot path), the SDK's in-memory exporter behind a
``SimpleSpanProcessor`` (tests). The OTLP endpoint comes from the arguments or the standard
``OTEL_EXPORTER_OTLP_*`` variables. An unreachable collector never fails or stalls a run: its
export errors become one warning line, batches are dropped while it stays down, and
:meth:`TracingHandle.shutdown` returns within its timeout. Spans are flushed at exit (``atexit``)
and when the handle is used as a context manager, Ctrl-C included.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import TracebackType
from typing import Any, Literal
from urllib.parse import urlparse

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from harness._version import __version__
from harness.errors import ConfigError
from harness.telemetry import conventions as c
from harness.telemetry.exporters import JsonLinesSpanExporter
from harness.telemetry.resolve import (
    DEFAULT_CONTENT_MAX_CHARS,
    TraceSettings,
    register_settings,
)

__all__ = ["TracingHandle", "configure_tracing", "git_sha"]

log = logging.getLogger("harness.telemetry")

OtlpProtocol = Literal["http/protobuf", "grpc"]
#: Per-request OTLP timeout (s) unless OTEL_EXPORTER_OTLP_[TRACES_]TIMEOUT says otherwise.
DEFAULT_OTLP_TIMEOUT_S = 5.0
#: How long a failed exporter is left alone (batches dropped) before it is tried again.
RETRY_AFTER_FAILURE_S = 30.0
# Loggers whose per-batch errors are folded into our single warning line.
_NOISY_LOGGERS = (
    "opentelemetry.exporter.otlp.proto.http.trace_exporter",
    "opentelemetry.exporter.otlp.common.http",
    "opentelemetry.exporter.otlp.proto.grpc.exporter",
    "opentelemetry.sdk._shared_internal",
)


class _Quiet(logging.Filter):
    """Swallows the exporters' own per-attempt logs, keeping the first one since the last
    export started as the reason (it names the cause; later ones say "retries exhausted")."""

    def __init__(self) -> None:
        super().__init__()
        self.users = 0
        self.first: str | None = None

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name == "opentelemetry.sdk._shared_internal" and not str(record.msg).startswith(
            ("Queue full", "Exception while exporting")
        ):
            return True
        if record.levelno >= logging.WARNING and self.first is None:
            try:
                self.first = record.getMessage()
            except Exception:
                self.first = str(record.msg)
        return False


_QUIET = _Quiet()
_QUIET_LOCK = threading.Lock()


def _quiet(on: bool) -> None:
    with _QUIET_LOCK:
        _QUIET.users += 1 if on else -1
        for name in _NOISY_LOGGERS:
            logger = logging.getLogger(name)
            if _QUIET.users > 0 and _QUIET not in logger.filters:
                logger.addFilter(_QUIET)
            elif _QUIET.users <= 0:
                logger.removeFilter(_QUIET)


class _Guarded(SpanExporter):
    """Wraps an exporter: never raises, warns once, drops batches while the target is down."""

    def __init__(self, inner: SpanExporter, target: str) -> None:
        self.inner = inner
        self.target = target
        self.warned = False
        self.failures = 0
        self._down_until = 0.0

    def export(self, spans: Any) -> SpanExportResult:
        if time.monotonic() < self._down_until:
            return SpanExportResult.FAILURE
        _QUIET.first = None
        try:
            result = self.inner.export(spans)
            reason = _QUIET.first
        except Exception as exc:
            result, reason = SpanExportResult.FAILURE, f"{type(exc).__name__}: {exc}"
        if result is SpanExportResult.SUCCESS:
            self._down_until = 0.0
            return result
        self.failures += 1
        self._down_until = time.monotonic() + RETRY_AFTER_FAILURE_S
        if not self.warned:
            self.warned = True
            log.warning(
                "harness: cannot export spans to %s (%s); spans are dropped while it is "
                "unreachable, runs are not affected (no further warnings)",
                self.target,
                (reason or "export failed")[:300],
            )
        return SpanExportResult.FAILURE

    def abort(self) -> None:
        """Stop the inner exporter (interrupts its retry back-off)."""
        with contextlib.suppress(Exception):
            self.inner.shutdown()

    def shutdown(self) -> None:
        self.abort()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


@dataclass(eq=False)
class TracingHandle:
    """The configured provider; pass ``handle.provider`` as ``tracer_provider=``."""

    provider: TracerProvider
    capture_content: bool
    content_max_chars: int = DEFAULT_CONTENT_MAX_CHARS
    file: Path | None = None
    otlp_endpoint: str | None = None
    memory: InMemorySpanExporter | None = None
    _exporters: list[_Guarded] = field(default_factory=list)
    _closed: bool = False

    @property
    def tracer_provider(self) -> TracerProvider:
        return self.provider

    def finished_spans(self) -> tuple[ReadableSpan, ...]:
        """The in-memory exporter's spans (empty without ``in_memory=True``)."""
        return self.memory.get_finished_spans() if self.memory is not None else ()

    @property
    def export_failures(self) -> int:
        return sum(g.failures for g in self._exporters)

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
        try:
            if not _bounded(self.provider.shutdown, max(0.0, timeout_s - 0.5)):
                for g in self._exporters:
                    g.abort()
                log.warning("harness: trace export did not finish within %gs", timeout_s)
        finally:
            if self._exporters:
                _quiet(False)

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


def _otlp_exporter(endpoint: str | None, protocol: str | None) -> tuple[SpanExporter, str] | None:
    env = os.environ.get
    if endpoint is None and not (
        env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or env("OTEL_EXPORTER_OTLP_ENDPOINT")
    ):
        return None
    proto = (
        protocol
        or env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        or env("OTEL_EXPORTER_OTLP_PROTOCOL")
        or "http/protobuf"
    ).strip()
    timeout = None
    if not (env("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT") or env("OTEL_EXPORTER_OTLP_TIMEOUT")):
        timeout = DEFAULT_OTLP_TIMEOUT_S
    if proto in ("http/protobuf", "http"):
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
            OTLPSpanExporter as HttpExporter,
        )

        if endpoint is not None and urlparse(endpoint).path in ("", "/"):
            endpoint = endpoint.rstrip("/") + "/v1/traces"  # a base URL, like the env variable
        http = HttpExporter(endpoint=endpoint, timeout=timeout)
        return http, str(getattr(http, "_endpoint", endpoint))
    if proto == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
            OTLPSpanExporter as GrpcExporter,
        )

        grpc = GrpcExporter(endpoint=endpoint, timeout=timeout)
        return grpc, str(
            endpoint
            or env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
            or env("OTEL_EXPORTER_OTLP_ENDPOINT")
        )
    raise ConfigError(f"otlp_protocol: expected 'http/protobuf' or 'grpc', got {proto!r}")


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
) -> TracingHandle:
    """Build a TracerProvider exporting to a span ``file``, to OTLP and/or to memory.

    ``otlp_endpoint`` (or ``OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT``) enables OTLP; for HTTP a
    base URL gets ``/v1/traces`` appended. ``otlp_protocol`` defaults to
    ``OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL``, else http/protobuf. ``capture_content`` is the
    default of runs traced to this provider: when None, on for a local span file alone, off as
    soon as spans also leave the machine. ``set_global`` also makes it the global provider.
    """
    if content_max_chars < 0:
        raise ConfigError("content_max_chars: must be >= 0")
    limits = None
    if not (
        os.environ.get("OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT")
        or os.environ.get("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT")
    ):
        limits = SpanLimits(max_span_attribute_length=max(4096, content_max_chars))
    provider = TracerProvider(
        resource=_resource(service_name), span_limits=limits, shutdown_on_exit=False
    )
    guarded: list[_Guarded] = []
    memory = None
    path = Path(file) if file is not None else None
    if path is not None:
        guarded.append(_Guarded(JsonLinesSpanExporter(path), str(path)))
    otlp = _otlp_exporter(otlp_endpoint, otlp_protocol)
    if otlp is not None:
        guarded.append(_Guarded(otlp[0], otlp[1]))
    for g in guarded:
        # A local file keeps up with any run; a bigger queue rides out bursts (e.g. a fast
        # mock bench) without dropping spans. OTLP keeps the OTEL_BSP_* defaults.
        local = isinstance(g.inner, JsonLinesSpanExporter) and not os.environ.get(
            "OTEL_BSP_MAX_QUEUE_SIZE"
        )
        provider.add_span_processor(BatchSpanProcessor(g, max_queue_size=16384 if local else None))
    if in_memory:
        memory = InMemorySpanExporter()
        provider.add_span_processor(SimpleSpanProcessor(memory))
    if capture_content is None:
        capture_content = path is not None and otlp is None
    handle = TracingHandle(
        provider,
        capture_content,
        content_max_chars,
        file=path,
        otlp_endpoint=otlp[1] if otlp is not None else None,
        memory=memory,
        _exporters=guarded,
    )
    register_settings(provider, TraceSettings(capture_content, content_max_chars))
    if guarded:
        _quiet(True)
    atexit.register(handle.shutdown)
    if set_global:
        from opentelemetry import trace

        trace.set_tracer_provider(provider)
    return handle
