"""What the span builders of a run's trace share (:mod:`._subscriber`, :mod:`._calls`,
:mod:`._tools`): attribute values (text cut to the content cap, JSON), the error mark, and
:class:`Scope`, a span made the ambient context in the task that runs it."""

from __future__ import annotations

import asyncio
import json
from contextvars import Token
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry.context import Context
from opentelemetry.trace import Span, StatusCode

from harness.telemetry import _conventions as c

__all__ = ["Scope", "attr_value", "set_error", "to_json", "trunc"]

# The C encoder json.dumps uses (None without the _json accelerator).
_c_encoder: Any = getattr(json.encoder, "c_make_encoder", None)
_encode_str = json.encoder.encode_basestring


def trunc(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit]


def attr_value(value: Any) -> Any:
    if isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return list(value)
    return str(value)


def to_json(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, default=str)``, its ``repr`` when that fails, its
    type when that fails too (a plug-in's value: a cycle, lists nested 5,000 deep, a ``str``
    that raises; a tool's ``Submit`` of one printed a tracing error's traceback, adversary round
    14, part A). Calls the C encoder directly: ``json.dumps`` with ``default=`` builds a
    JSONEncoder and an encoder per call, twice the cost of the encoding itself for a small
    dict."""
    try:
        if _c_encoder is None:
            return json.dumps(value, ensure_ascii=False, default=str)
        encode = _c_encoder({}, str, _encode_str, None, ": ", ", ", False, False, True)
        return "".join(encode(value, 0))
    except Exception:
        try:
            return repr(value)
        except Exception:
            return f"<{type(value).__name__} object (it cannot be shown)>"


def set_error(span: Span, message: str | None, error_type: str) -> None:
    """Mark ``span`` failed: ``error.type`` and an ERROR status with ``message``."""
    span.set_attribute(c.ERROR_TYPE, error_type)
    span.set_status(StatusCode.ERROR, message)


def _task() -> object:
    try:
        return asyncio.current_task()
    except RuntimeError:
        return None


class Scope:
    """An ambient-context attachment, detached only from the task that made it."""

    __slots__ = ("task", "token")

    def __init__(self, ctx: Context) -> None:
        self.token: Token[Context] | None = otel_context.attach(ctx)
        self.task = _task()

    def exit(self) -> None:
        if self.token is not None and _task() is self.task:
            otel_context.detach(self.token)
        self.token = None
