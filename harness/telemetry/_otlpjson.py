"""OTLP-JSON encoding: attribute values, and finished spans as the JSON-lines span file spells
them (field names and value encodings are described in :mod:`harness.telemetry._exporters`).

One encoder serves both tracers: :func:`encode_fields` takes a span's :data:`SpanFields`, which
:func:`sdk_span_fields` reads off the SDK's ``ReadableSpan`` and
:meth:`~harness.telemetry._light.LightSpan.span_fields` off a light span.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from json.encoder import encode_basestring as _q  # C-accelerated
from typing import Any, Protocol

from opentelemetry.sdk.trace import ReadableSpan

__all__ = [
    "KIND_NAMES",
    "HasSpanFields",
    "SpanFields",
    "decode_attributes",
    "encode_attributes",
    "encode_fields",
    "encode_span",
    "sdk_span_fields",
    "span_to_json",
    "tail_json",
]

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
# How many values of each key are cached: ids and other one-off values stop at the cap, so they
# never crowd out the pairs that repeat.
_PER_KEY: dict[str, int] = {}
_CACHE_MAX = 8192
_PER_KEY_MAX = 32


def _key(k: str) -> str:
    """The start of an encoded attribute, up to its value (cached)."""
    head = '{"key":' + _q(k) + ',"value":{'
    if len(_KEYS) < _CACHE_MAX:
        _KEYS[k] = head
    return head


def _attrs(attributes: Mapping[str, Any] | None) -> str:
    items: Any
    if type(attributes) is dict:  # the light tracer's
        if not attributes:
            return "[]"
        items = attributes.items()
    else:
        # The SDK's BoundedAttributes iterates in Python under a lock; its dict is ~5x faster.
        inner = getattr(attributes, "_dict", None)
        if isinstance(inner, dict):
            if not inner:
                return "[]"
            items = inner.items()
        elif not attributes:
            return "[]"
        else:
            items = attributes.items()
    parts: list[str] = []
    append = parts.append
    for k, v in items:
        t = type(v)
        if t is str:
            text = _PAIRS.get((k, v))
            if text is None:
                text = '{"key":' + _q(k) + ',"value":{"stringValue":' + _q(v) + "}}"
                if len(v) <= 48 and len(_PAIRS) < _CACHE_MAX:
                    n = _PER_KEY.get(k, 0)
                    if n < _PER_KEY_MAX:
                        _PER_KEY[k] = n + 1
                        _PAIRS[(k, v)] = text
            append(text)
        elif t is int:
            append(f'{_KEYS.get(k) or _key(k)}"intValue":"{v}"}}}}')
        else:
            append((_KEYS.get(k) or _key(k)) + _inner(v) + "}}")
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


#: A finished span as the encoder takes it, from either tracer: (trace id, span id, parent span
#: id or None, name, OTLP kind number, start ns, end ns, attributes, events as ``(time ns, name,
#: attributes)``, links as ``(trace id, span id, attributes)``, dropped attributes, dropped
#: events, OTLP status code, status message or None).
SpanFields = tuple[
    int,
    int,
    int | None,
    str,
    int,
    int,
    int,
    Mapping[str, Any] | None,
    Sequence[tuple[int, str, Mapping[str, Any] | None]],
    Sequence[tuple[int, int, Mapping[str, Any] | None]],
    int,
    int,
    int,
    str | None,
]


class HasSpanFields(Protocol):
    """A finished span that is not the SDK's (the light tracer's), as :data:`SpanFields`."""

    def span_fields(self) -> SpanFields: ...


def sdk_span_fields(span: ReadableSpan) -> SpanFields:
    """The :data:`SpanFields` of one of the SDK's finished spans (read through its public
    properties only)."""
    ctx, parent, kind, status = span.context, span.parent, span.kind, span.status
    assert ctx is not None
    events = span.events
    links = span.links
    return (
        ctx.trace_id,
        ctx.span_id,
        None if parent is None else parent.span_id,
        span.name,
        kind.value + 1,  # OTLP counts from UNSPECIFIED=0
        span.start_time or 0,
        span.end_time or 0,
        span.attributes,
        [(e.timestamp, e.name, e.attributes) for e in events] if events else (),
        [(x.context.trace_id, x.context.span_id, x.attributes) for x in links] if links else (),
        span.dropped_attributes,
        span.dropped_events,
        status.status_code.value,
        status.description,
    )


def encode_fields(f: SpanFields) -> str:
    """One finished span as OTLP-JSON text, without the closing brace (the file writers append
    ``resource`` and ``scope``). Hand-built, several times faster than building dicts for
    ``json.dumps``. The one encoder of both tracers (see :func:`encode_span`)."""
    (
        trace_id,
        span_id,
        parent,
        name,
        kind,
        start,
        end,
        attributes,
        events,
        links,
        dropped_attributes,
        dropped_events,
        code,
        message,
    ) = f
    out = (
        f'{{"traceId":"{trace_id:032x}","spanId":"{span_id:016x}",'
        f'"parentSpanId":"{"" if parent is None else f"{parent:016x}"}",'
        f'"name":{_q(name)},"kind":{kind},'
        f'"startTimeUnixNano":"{start}","endTimeUnixNano":"{end}",'
        f'"attributes":{_attrs(attributes)}'
    )
    if events:
        out += (
            ',"events":['
            + ",".join(
                [
                    f'{{"timeUnixNano":"{ts}","name":{_q(ename)},"attributes":{_attrs(eattrs)}}}'
                    for ts, ename, eattrs in events
                ]
            )
            + "]"
        )
    if links:
        out += (
            ',"links":['
            + ",".join(
                [
                    f'{{"traceId":"{tid:032x}","spanId":"{sid:016x}",'
                    f'"attributes":{_attrs(lattrs)}}}'
                    for tid, sid, lattrs in links
                ]
            )
            + "]"
        )
    if dropped_attributes:
        out += f',"droppedAttributesCount":{dropped_attributes}'
    if dropped_events:
        out += f',"droppedEventsCount":{dropped_events}'
    out += f',"status":{{"code":{code}'
    if message:
        out += ',"message":' + _q(message)
    return out + "}"


def encode_span(span: ReadableSpan | HasSpanFields) -> str:
    """One finished span (the SDK's, or the light tracer's) as OTLP-JSON text, without the
    closing brace: :func:`encode_fields` of its :data:`SpanFields`."""
    if isinstance(span, ReadableSpan):
        return encode_fields(sdk_span_fields(span))
    return encode_fields(span.span_fields())


def tail_json(resource_attributes: Mapping[str, Any] | None, scope: Mapping[str, str]) -> str:
    """What follows a span's fields on its line: ``resource``, ``scope``, the closing brace and
    the newline (the same for every span of one tracer)."""
    return (
        ',"resource":{"attributes":'
        + _attrs(resource_attributes)
        + '},"scope":'
        + _dumps(dict(scope))
        + "}\n"
    )


def span_to_json(span: ReadableSpan | HasSpanFields) -> dict[str, Any]:
    """One finished span as an OTLP-JSON dict (without ``resource`` and ``scope``)."""
    result: dict[str, Any] = json.loads(encode_span(span) + "}")
    return result


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=str)
