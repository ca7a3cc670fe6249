"""The JSON-lines span file: one finished span per line, in OTLP-JSON field names.

Each line is one span as the OTLP/JSON encoding spells it (``traceId``, ``spanId``,
``parentSpanId``, ``name``, ``kind``, ``startTimeUnixNano``, ``endTimeUnixNano``, ``attributes`` as
``[{key, value: {stringValue|intValue|doubleValue|boolValue|arrayValue}}]``, ``events``,
``status {code, message}``), flattened out of the resourceSpans/scopeSpans nesting: the line also
carries its ``resource`` and ``scope``. As in OTLP/JSON, ids are lowercase hex, enums are numbers
(kind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer; status code: 0 unset, 1 ok,
2 error) and 64-bit integers are decimal strings. :func:`~harness.telemetry._readspans.read_spans`
reads a file back. The encoding itself is in
:mod:`harness.telemetry._otlpjson`; the light tracer (:mod:`harness.telemetry._light`) writes
through :meth:`JsonLinesSpanExporter.write_text`.

Secrets: given ``scrub`` (a ``str -> str`` function, the run's
:class:`~harness.cassettes._secrets.Redactor`), the file exporter scrubs each batch of lines
before it reaches the file, so a run killed mid-way (``kill -9``) leaves no raw key behind, and
:class:`ScrubbingSpanExporter` hands another exporter (OTLP) scrubbed copies of the spans.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import Link, Status

from harness._files import open_regular
from harness.telemetry._otlpjson import (
    encode_fields,
    sdk_span_fields,
    tail_json,
)

__all__ = ["JsonLinesSpanExporter", "ScrubbingSpanExporter"]

log = logging.getLogger("harness.telemetry")

#: A full disk: lines wait in memory (up to this much) and are tried again with back-off, for up
#: to ``$HARNESS_DISK_FULL_WAIT_S`` seconds (30) at a flush (see harness/store/_diskfull.py).
_HOLD_MAX_BYTES = 64 * 1024 * 1024
_DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})


_SURROGATE = re.compile("[\ud800-\udfff]")


def _utf8(text: str) -> bytes:
    """``text`` in UTF-8, a lone surrogate (a model's ``"\\ud800"``, a name decoded with
    surrogateescape) as U+FFFD. Written as the JSON escape ``\\ud800`` before, the line was
    valid for Python but not for DuckDB's reader, which dropped it: the span of the chat and of
    the whole run went missing from the store without a word."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text).encode("utf-8")


def _disk_full_wait_s() -> float:
    try:
        return max(0.0, float(os.environ.get("HARNESS_DISK_FULL_WAIT_S", "") or 30.0))
    except ValueError:
        return 30.0


class JsonLinesSpanExporter(SpanExporter):
    """Appends finished spans to ``path``, one JSON object per line (thread-safe); ``scrub``
    (secrets -> ``REDACTED``) is applied to each batch of lines before it is written."""

    def __init__(
        self,
        path: str | Path,
        *,
        append: bool = True,
        scrub: Callable[[str], str] | None = None,
    ) -> None:
        self.path = Path(path)
        self.scrub = scrub
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Unbuffered: each batch is encoded whole and handed to the OS in one write.
        fd = open_regular(self.path, os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else 0),
                          truncate=not append, named_by_user=True)  # fmt: skip
        self._file = os.fdopen(fd, "ab" if append else "wb", buffering=0)
        self._lock = threading.Lock()
        # id(resource or scope) -> its JSON; the objects are kept so their ids stay unique.
        self._tails: dict[tuple[int, int], tuple[str, Any, Any]] = {}
        self._closed = False
        self._warned = False
        # Lines a full disk held back (whole lines), and the streak: since when, tries, next try.
        self._held = bytearray()
        self._full_since: float | None = None
        self._tries = 0
        self._retry_at = 0.0
        self._wait_s = _disk_full_wait_s()

    def _tail(self, span: ReadableSpan) -> str:
        resource, scope = span.resource, span.instrumentation_scope
        key = (id(resource), id(scope))
        cached = self._tails.get(key)
        if cached is None:
            text = tail_json(
                resource.attributes if resource else None,
                {"name": scope.name, "version": scope.version or ""} if scope else {},
            )
            cached = self._tails[key] = (text, resource, scope)
        return cached[0]

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        try:
            parts: list[str] = []
            append = parts.append
            last: Any = (None, None)
            tail = ""
            for span in spans:
                append(encode_fields(sdk_span_fields(span)))
                key = (span.resource, span.instrumentation_scope)
                if key[0] is not last[0] or key[1] is not last[1]:  # mostly one per batch
                    last = key
                    tail = self._tail(span)
                append(tail)
            text = "".join(parts)
        except Exception as exc:
            self._warn(exc)
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS if self.write_text(text) else SpanExportResult.FAILURE

    def write_text(self, text: str) -> bool:
        """Append already encoded span lines (the light tracer writes through this too), handed
        to the OS at once; False when the file is closed or the write failed.

        A line is in the file whole or not at all: a write cut short is cut back to its last
        whole line. On a full disk (ENOSPC, EDQUOT) the lines not written wait in memory and go
        out first with a later write (with back-off), or at :meth:`force_flush` and
        :meth:`shutdown`, which wait for room up to ``$HARNESS_DISK_FULL_WAIT_S`` seconds."""
        try:
            if self.scrub is not None:  # before the file: a killed run leaves no raw secret
                text = self.scrub(text)
            with self._lock:
                if self._closed:
                    return False
                return self._append(_utf8(text), wait=False)
        except Exception as exc:
            self._warn(exc)
            return False

    def _append(self, data: bytes, *, wait: bool) -> bool:
        """Write ``data`` (whole lines) after the lines held back; ``wait``: sleep out a full
        disk (with back-off, up to the budget) instead of holding the lines. Under the lock."""
        if self._held:
            if len(self._held) + len(data) > _HOLD_MAX_BYTES:
                raise OSError(errno.ENOSPC, "the disk is full and the spans held back reach 64 MiB")
            self._held += data
            if not wait and time.monotonic() < self._retry_at:
                return True
            data = bytes(self._held)
            self._held.clear()
        while True:
            data = self._write_whole(data)
            now = time.monotonic()
            if not data:
                if self._full_since is not None:
                    log.warning("harness: %s: the disk has room again after %.1fs; no span lost",
                                self.path, now - self._full_since)  # fmt: skip
                    self._full_since = None
                return True
            if self._full_since is None:
                self._full_since, self._tries = now, 0
                log.warning("harness: %s: the disk is full; spans wait in memory, tried again for "
                            "up to %gs", self.path, self._wait_s)  # fmt: skip
            self._tries += 1
            pause = min(5.0, 0.1 * 2.0 ** (self._tries - 1))
            waited = now - self._full_since
            if not wait:
                self._held += data
                self._retry_at = now + pause
                return True
            if waited >= self._wait_s:
                self._full_since = None
                raise OSError(errno.ENOSPC, f"the disk stayed full for {waited:.1f}s: "
                              f"{len(data)} bytes of spans not written")  # fmt: skip
            time.sleep(min(pause, self._wait_s - waited))

    def _write_whole(self, data: bytes) -> bytes:
        """Write ``data``; what a full disk left unwritten (whole lines), else b"". A write cut
        short leaves no torn line: the file is cut back to the last whole line written."""
        view = memoryview(data)
        written = 0
        try:
            while written < len(data):
                n = self._file.write(view[written:])
                if not n:
                    raise OSError("the file accepted no bytes")
                written += n
        except OSError as exc:
            keep = data.rfind(b"\n", 0, written) + 1
            if written > keep:  # part of a line went out: take it back
                fd = self._file.fileno()
                with contextlib.suppress(OSError):  # not a regular file (a pipe): nothing to do
                    os.ftruncate(fd, os.fstat(fd).st_size - (written - keep))
            if exc.errno not in _DISK_FULL:
                raise
            return data[keep:]
        return b""

    @property
    def holding(self) -> bool:
        """Whether lines a full disk refused wait in memory."""
        return bool(self._held)

    @property
    def wait_s(self) -> float:
        """How long :meth:`shutdown` waits for room for the lines held back."""
        return self._wait_s

    def after_fork(self) -> None:
        """In a forked child: a fresh lock (the parent's may be held by one of its threads)."""
        self._lock = threading.Lock()

    def _warn(self, exc: Exception) -> None:
        if not self._warned:
            self._warned = True
            log.warning("harness: cannot write spans to %s: %s", self.path, exc)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        with self._lock:
            if not self._closed:
                self._drain()
                self._file.flush()
        return True

    def shutdown(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                try:
                    self._drain()
                finally:
                    self._file.close()

    def _drain(self) -> None:
        """Write the lines a full disk held back, waiting for room (up to the budget)."""
        if self._held:
            try:
                self._append(b"", wait=True)
            except OSError as exc:
                self._held.clear()
                log.warning("harness: cannot write spans to %s: %s", self.path, exc)


class ScrubbingSpanExporter(SpanExporter):
    """Exports through ``inner`` (OTLP) copies of the spans with ``scrub`` applied to every
    string in them: the name, the attributes, the events' names and attributes, the links'
    attributes, the status description and the resource's attributes. A span without a secret
    is passed as it is."""

    def __init__(self, inner: SpanExporter, scrub: Callable[[str], str]) -> None:
        self.inner = inner
        self.scrub = scrub
        self._resources: dict[int, tuple[Resource, Resource]] = {}

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return self.inner.export([self._span(span) for span in spans])

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return bool(self.inner.force_flush(timeout_millis))

    def _span(self, span: ReadableSpan) -> ReadableSpan:
        name = self.scrub(span.name)
        attributes = self._attributes(span.attributes)
        events = [self._event(e) for e in span.events]
        links = [self._link(link) for link in span.links]
        status = span.status
        if status.description:
            description = self.scrub(status.description)
            if description is not status.description:
                status = Status(status.status_code, description)
        resource = self._resource(span.resource)
        if (
            name is span.name
            and attributes is span.attributes
            and all(a is b for a, b in zip(events, span.events, strict=True))
            and all(a is b for a, b in zip(links, span.links, strict=True))
            and status is span.status
            and resource is span.resource
        ):
            return span
        return ReadableSpan(
            name=name,
            context=span.context,
            parent=span.parent,
            resource=resource,
            attributes=attributes,
            events=events,
            links=links,
            kind=span.kind,
            status=status,
            start_time=span.start_time,
            end_time=span.end_time,
            instrumentation_scope=span.instrumentation_scope,
        )

    def _event(self, event: Event) -> Event:
        name = self.scrub(event.name)
        attributes = self._attributes(event.attributes)
        if name is event.name and attributes is event.attributes:
            return event
        return Event(name, attributes, event.timestamp)

    def _link(self, link: Link) -> Link:
        attributes = self._attributes(link.attributes)
        return link if attributes is link.attributes else Link(link.context, attributes)

    def _resource(self, resource: Resource) -> Resource:
        cached = self._resources.get(id(resource))
        if cached is None or cached[0] is not resource:
            attributes = self._attributes(resource.attributes)
            clean = (
                resource
                if attributes is resource.attributes
                else Resource(dict(attributes or {}), resource.schema_url)
            )
            cached = self._resources[id(resource)] = (resource, clean)
        return cached[1]

    def _attributes(self, attributes: Any) -> Any:
        if not attributes:
            return attributes
        # Keys too: a caller's ``trace_attributes`` may name a secret (round 12 part A).
        pairs = [(self.scrub(k), self._value(v)) for k, v in attributes.items()]
        if all(a is k and b is v for (a, b), (k, v) in zip(pairs, attributes.items(), strict=True)):
            return attributes
        return dict(pairs)

    def _value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.scrub(value)
        if isinstance(value, Mapping):
            return self._attributes(value)
        if isinstance(value, list | tuple):
            items = [self._value(v) for v in value]
            return value if all(a is b for a, b in zip(items, value, strict=True)) else tuple(items)
        return value
