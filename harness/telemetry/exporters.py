"""The JSON-lines span file: one finished span per line, in OTLP-JSON field names.

Each line is one span as the OTLP/JSON encoding spells it (``traceId``, ``spanId``,
``parentSpanId``, ``name``, ``kind``, ``startTimeUnixNano``, ``endTimeUnixNano``, ``attributes`` as
``[{key, value: {stringValue|intValue|doubleValue|boolValue|arrayValue}}]``, ``events``,
``status {code, message}``), flattened out of the resourceSpans/scopeSpans nesting: the line also
carries its ``resource`` and ``scope``. As in OTLP/JSON, ids are lowercase hex, enums are numbers
(kind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer; status code: 0 unset, 1 ok,
2 error) and 64-bit integers are decimal strings. :func:`read_spans` reads a file back (and
accepts numbers where strings are expected).
"""

from __future__ import annotations

import json
import logging
import math
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring as _q  # C-accelerated
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

__all__ = [
    "JsonLinesSpanExporter",
    "SpanEventRecord",
    "SpanRecord",
    "decode_attributes",
    "encode_attributes",
    "encode_span",
    "iter_span_lines",
    "read_spans",
    "span_to_json",
]

log = logging.getLogger("harness.telemetry")

KIND_NAMES = {
    0: "unspecified", 1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"
}  # fmt: skip


def _inner(v: Any) -> str:
    """The inside of an OTLP AnyValue object, as JSON text."""
    t = type(v)
    if t is str:
        return '"stringValue":' + _q(v)
    if t is bool:
        return '"boolValue":true' if v else '"boolValue":false'
    if t is int:
        return f'"intValue":"{v}"'
    if t is float:
        return '"doubleValue":' + (repr(v) if math.isfinite(v) else _q(str(v)))
    if isinstance(v, Mapping):
        return '"kvlistValue":{"values":' + _attrs(v) + "}"
    if isinstance(v, Sequence) and not isinstance(v, str | bytes):
        return '"arrayValue":{"values":[' + ",".join(["{" + _inner(x) + "}" for x in v]) + "]}"
    if isinstance(v, bytes):
        return '"stringValue":' + _q(v.hex())
    return '"stringValue":' + _q(str(v))


_KEYS: dict[str, str] = {}
# Encoded attributes whose string value repeats across spans (operation names, kinds, models...).
_PAIRS: dict[tuple[str, str], str] = {}
_CACHE_MAX = 8192


def _attrs(attributes: Mapping[str, Any] | None) -> str:
    # The SDK's BoundedAttributes iterates in Python under a lock; its plain dict is ~5x faster.
    inner = getattr(attributes, "_dict", None)
    items: Any
    if isinstance(inner, dict):
        if not inner:
            return "[]"
        items = inner.items()
    elif not attributes:
        return "[]"
    else:
        items = attributes.items()
    parts = []
    for k, v in items:
        if type(v) is str:
            pair = (k, v)
            text = _PAIRS.get(pair)
            if text is None:
                text = '{"key":' + _q(k) + ',"value":{"stringValue":' + _q(v) + "}}"
                if len(v) <= 48 and len(_PAIRS) < _CACHE_MAX:
                    _PAIRS[pair] = text
            parts.append(text)
            continue
        head = _KEYS.get(k)
        if head is None:
            head = '{"key":' + _q(k) + ',"value":{'
            if len(_KEYS) < _CACHE_MAX:
                _KEYS[k] = head
        parts.append(head + _inner(v) + "}}")
    return "[" + ",".join(parts) + "]"


def encode_attributes(attributes: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """``{"k": 1}`` -> ``[{"key": "k", "value": {"intValue": "1"}}]``."""
    result: list[dict[str, Any]] = json.loads(_attrs(attributes))
    return result


def _decode_value(value: Mapping[str, Any]) -> Any:
    for kind, v in value.items():
        if kind == "stringValue":
            return v
        if kind == "intValue":
            return int(v)
        if kind == "doubleValue":
            return float(v)
        if kind == "boolValue":
            return bool(v)
        if kind == "arrayValue":
            return [_decode_value(x) for x in (v or {}).get("values", [])]
        if kind == "kvlistValue":
            return decode_attributes((v or {}).get("values", []))
        if kind == "bytesValue":
            return v
    return None


def decode_attributes(attributes: Sequence[Mapping[str, Any]] | None) -> dict[str, Any]:
    """The inverse of :func:`encode_attributes`."""
    return {a["key"]: _decode_value(a.get("value") or {}) for a in attributes or ()}


def encode_span(span: ReadableSpan) -> str:
    """One finished span as OTLP-JSON text, without the closing brace (the file exporter
    appends ``resource`` and ``scope``). Hand-built, several times faster than building dicts
    for ``json.dumps``; on the SDK's own ReadableSpan it reads the fields behind the properties."""
    if type(span) is ReadableSpan:  # the fields behind the properties (each a Python call)
        ctx, parent, name, kind = span._context, span._parent, span._name, span._kind
        start, end, attributes, status = (
            span._start_time,
            span._end_time,
            span._attributes,
            span._status,
        )
    else:
        ctx, parent, name, kind = span.context, span.parent, span.name, span.kind
        start, end, attributes, status = (
            span.start_time,
            span.end_time,
            span.attributes,
            span.status,
        )
    assert ctx is not None
    out = (
        f'{{"traceId":"{ctx.trace_id:032x}","spanId":"{ctx.span_id:016x}",'
        f'"parentSpanId":"{"" if parent is None else f"{parent.span_id:016x}"}",'
        f'"name":{_q(name)},"kind":{kind._value_ + 1},'  # OTLP counts from UNSPECIFIED=0
        f'"startTimeUnixNano":"{start or 0}","endTimeUnixNano":"{end or 0}",'
        f'"attributes":{_attrs(attributes)}'
    )
    events = span.events
    if events:
        out += (
            ',"events":['
            + ",".join(
                [
                    f'{{"timeUnixNano":"{e.timestamp}","name":{_q(e.name)},'
                    f'"attributes":{_attrs(e.attributes)}}}'
                    for e in events
                ]
            )
            + "]"
        )
    links = span.links
    if links:
        out += (
            ',"links":['
            + ",".join(
                [
                    f'{{"traceId":"{link.context.trace_id:032x}",'
                    f'"spanId":"{link.context.span_id:016x}","attributes":{_attrs(link.attributes)}}}'
                    for link in links
                ]
            )
            + "]"
        )
    dropped = span.dropped_attributes
    if dropped:
        out += f',"droppedAttributesCount":{dropped}'
    dropped = span.dropped_events
    if dropped:
        out += f',"droppedEventsCount":{dropped}'
    out += f',"status":{{"code":{status.status_code._value_}'
    if status.description:
        out += ',"message":' + _q(status.description)
    return out + "}"


def span_to_json(span: ReadableSpan) -> dict[str, Any]:
    """One finished span as an OTLP-JSON dict (without ``resource`` and ``scope``)."""
    result: dict[str, Any] = json.loads(encode_span(span) + "}")
    return result


class JsonLinesSpanExporter(SpanExporter):
    """Appends finished spans to ``path``, one JSON object per line (thread-safe)."""

    def __init__(self, path: str | Path, *, append: bool = True) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # A large buffer: one write per exported batch, not one per 8 KiB.
        self._file = self.path.open("a" if append else "w", encoding="utf-8", buffering=1 << 20)
        self._lock = threading.Lock()
        # id(resource or scope) -> its JSON; the objects are kept so their ids stay unique.
        self._tails: dict[tuple[int, int], tuple[str, Any, Any]] = {}
        self._closed = False
        self._warned = False

    def _tail(self, span: ReadableSpan) -> str:
        resource, scope = span.resource, span.instrumentation_scope
        key = (id(resource), id(scope))
        cached = self._tails.get(key)
        if cached is None:
            r = '{"attributes":' + _attrs(resource.attributes if resource else None) + "}"
            s = {"name": scope.name, "version": scope.version or ""} if scope else {}
            text = ',"resource":' + r + ',"scope":' + _dumps(s) + "}\n"
            cached = self._tails[key] = (text, resource, scope)
        return cached[0]

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        try:
            parts: list[str] = []
            append = parts.append
            last: Any = (None, None)
            tail = ""
            for span in spans:
                append(encode_span(span))
                key = (span.resource, span.instrumentation_scope)
                if key[0] is not last[0] or key[1] is not last[1]:  # mostly one per batch
                    last = key
                    tail = self._tail(span)
                append(tail)
            text = "".join(parts)
            with self._lock:
                if self._closed:
                    return SpanExportResult.FAILURE
                self._file.write(text)
                self._file.flush()
        except Exception as exc:
            if not self._warned:
                self._warned = True
                log.warning("harness: cannot write spans to %s: %s", self.path, exc)
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        with self._lock:
            if not self._closed:
                self._file.flush()
        return True

    def shutdown(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._file.close()


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=str)


@dataclass(frozen=True, slots=True)
class SpanEventRecord:
    name: str
    time_ns: int
    attributes: dict[str, Any]


@dataclass(frozen=True, slots=True)
class SpanRecord:
    """One span read back from a span file, attributes decoded to plain Python values."""

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    kind: int
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    events: tuple[SpanEventRecord, ...]
    status_code: int
    status_message: str | None
    resource: dict[str, Any]
    scope: str | None

    @property
    def duration_ms(self) -> float:
        return max(0, self.end_ns - self.start_ns) / 1e6

    @property
    def is_error(self) -> bool:
        return self.status_code == 2

    @property
    def kind_name(self) -> str:
        return KIND_NAMES.get(self.kind, str(self.kind))

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> SpanRecord:
        status = d.get("status") or {}
        return cls(
            trace_id=str(d["traceId"]),
            span_id=str(d["spanId"]),
            parent_span_id=str(d.get("parentSpanId") or "") or None,
            name=str(d.get("name", "")),
            kind=int(d.get("kind", 0)),
            start_ns=int(d.get("startTimeUnixNano", 0)),
            end_ns=int(d.get("endTimeUnixNano", 0)),
            attributes=decode_attributes(d.get("attributes")),
            events=tuple(
                SpanEventRecord(
                    str(e.get("name", "")),
                    int(e.get("timeUnixNano", 0)),
                    decode_attributes(e.get("attributes")),
                )
                for e in d.get("events") or ()
            ),
            status_code=int(status.get("code", 0)),
            status_message=status.get("message") or None,
            resource=decode_attributes((d.get("resource") or {}).get("attributes")),
            scope=(d.get("scope") or {}).get("name"),
        )


def iter_span_lines(path: str | Path) -> Iterator[dict[str, Any]]:
    """The raw OTLP-JSON dicts of a span file; unreadable lines (a crash mid-write) skipped."""
    with Path(path).open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                log.warning("harness: %s:%d: not a JSON span, skipped", path, n)
                continue
            if isinstance(obj, dict) and "traceId" in obj and "spanId" in obj:
                yield obj


def read_spans(path: str | Path, *, trace_id: str | None = None) -> list[SpanRecord]:
    """Every span of a span file (of one trace when ``trace_id`` is given), in file order."""
    spans = (SpanRecord.from_json(d) for d in iter_span_lines(path))
    if trace_id is None:
        return list(spans)
    return [s for s in spans if s.trace_id == trace_id]
