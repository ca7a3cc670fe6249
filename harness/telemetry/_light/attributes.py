"""The light tracer's attribute rules, copied from the SDK's (``opentelemetry.attributes`` and
``SpanLimits``) so both tracers write the same lines: values cleaned the same way, strings
truncated, the oldest attribute dropped first when a limit is reached, a key set again moving to
the end."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["clean_attributes", "clean_value", "put"]


def _has_str(value: Any) -> bool:
    t: Any = type(value)
    return bool(t.__str__ is not object.__str__ or t.__repr__ is not object.__repr__)


def _clean_seq(value: list[Any] | tuple[Any, ...], max_len: int | None) -> tuple[Any, ...]:
    """:func:`clean_value` of a list or tuple, without a generator for the usual strings."""
    out = []
    for v in value:
        if type(v) is not str or (max_len is not None and len(v) > max_len):
            v = clean_value(v, max_len)
        out.append(v)
    return tuple(out)


def clean_value(value: Any, max_len: int | None) -> Any:
    """An attribute value as the SDK stores it: scalars and bytes kept, strings truncated,
    sequences as tuples, mappings copied (bad keys dropped), anything else as ``str``."""
    if value is None or isinstance(value, bool | int | float | bytes):
        return value
    if isinstance(value, str):
        return value[:max_len] if max_len is not None and len(value) > max_len else value
    if type(value) is list or type(value) is tuple:
        return _clean_seq(value, max_len)
    if isinstance(value, Sequence):
        return tuple(clean_value(v, max_len) for v in value)
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if not k:
                continue
            if not isinstance(k, str):
                if not _has_str(k):
                    continue
                k = str(k)
            out[k] = clean_value(v, max_len)
        return out
    return str(value) if _has_str(value) else None


def put(attrs: dict[str, Any], key: str, value: Any, max_count: int | None) -> int:
    """BoundedAttributes' set: a key set again moves to the end; when full, the oldest goes.
    Returns how many attributes were dropped."""
    if key in attrs:
        del attrs[key]
    elif max_count is not None and len(attrs) >= max_count:
        if max_count == 0:
            return 1
        del attrs[next(iter(attrs))]
        attrs[key] = value
        return 1
    attrs[key] = value
    return 0


def clean_attributes(
    given: Mapping[str, Any], max_len: int | None, max_count: int | None
) -> tuple[dict[str, Any], int]:
    """A cleaned copy of ``given`` within the limits, and how many attributes were dropped."""
    out = dict(given)
    odd = False
    for k, v in out.items():  # values replaced in place: the dict does not change size
        t = type(v)
        if t is str:
            if max_len is not None and len(v) > max_len:
                out[k] = v[:max_len]
        elif t is not int and t is not float and t is not bool:
            out[k] = clean_value(v, max_len)
        if type(k) is not str or not k:
            odd = True
    if odd:  # keys that are empty or not strings: the slow, exact way
        cleaned = clean_value(dict(given), max_len)
        dropped = len(given) - len(cleaned)
        out = {}
        for k, v in cleaned.items():
            dropped += put(out, k, v, max_count)
        return out, dropped
    if max_count is None or len(out) <= max_count:
        return out, 0
    extra = len(out) - max_count
    return dict(list(out.items())[extra:]), extra
