"""Provider calls as spans: ``chat {model}`` (CLIENT, LLM), wrapped in ``plan {mode}`` for
plan calls and in the ``compaction`` span for compact calls, with the call's text and point
events. A mixin of :class:`~harness.telemetry._subscriber.RunTracer`, split out to keep modules
small.

A chat span is created when its CallFinished arrives, once every attribute is known (one
attribute pass instead of two), with the start time taken at CallStarted. It ends at the next
event that is not the call's own Content/Thinking (unstreamed text comes right after
CallFinished), at the call's recorded end time; the call's point events (Usage, retry
Warnings) are added then, clamped to that end.
"""

from __future__ import annotations

import asyncio
import time
from contextvars import Token
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, StatusCode, Tracer

from harness import events as ev
from harness.telemetry import _conventions as c

__all__ = ["CallSpans", "Scope", "attr_value", "trunc"]


def _task() -> object:
    try:
        return asyncio.current_task()
    except RuntimeError:
        return None


def trunc(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit]


def attr_value(value: Any) -> Any:
    if isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return list(value)
    return str(value)


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


@dataclass(slots=True, eq=False)
class _Text:
    parts: list[str] = field(default_factory=list)
    kept: int = 0
    length: int = 0


@dataclass(slots=True, eq=False)
class _Call:
    """A provider call. Its span is created at CallFinished, when every attribute is known
    (one attribute pass instead of two), with the start time taken at CallStarted."""

    index: int
    purpose: str
    model: str | None
    provider: str
    parent: Context
    plan: Span | None
    start_ns: int
    span: Span | None = None
    end_ns: int | None = None  # set at CallFinished; the span ends at the next other event
    content: _Text | None = None
    thinking: _Text | None = None
    events: list[tuple[str, dict[str, Any], int]] | None = None  # added at the end, clamped


class CallSpans:
    """The provider-call half of RunTracer (which defines the state named here)."""

    __slots__ = ("_call", "_compaction")
    _tracer: Tracer
    _mode: str
    _capture: bool
    _max: int
    _iteration_ctx: Context

    def __init__(self) -> None:
        self._call: _Call | None = None
        self._compaction: Span | None = None

    def _current(self) -> Span:
        raise NotImplementedError

    def _error(self, span: Span, message: str | None, error_type: str) -> None:
        span.set_attribute(c.ERROR_TYPE, error_type)
        span.set_status(StatusCode.ERROR, message)

    def _text_attrs(self, text: str, purpose: str | None = None) -> dict[str, Any]:
        attrs: dict[str, Any] = {c.HARNESS_CONTENT_LENGTH: len(text)}
        if purpose is not None:
            attrs[c.HARNESS_CONTENT_PURPOSE] = purpose
        if self._capture:
            attrs[c.HARNESS_CONTENT_TEXT] = trunc(text, self._max)
            attrs[c.HARNESS_CONTENT_TRUNCATED] = len(text) > self._max
        return attrs

    def _flush(self) -> None:
        """End the finished provider call whose trailing Content/Thinking was being collected."""
        call = self._call
        if call is None or call.end_ns is None:
            return
        self._call = None
        end = call.end_ns
        span = call.span
        assert span is not None
        for name, point, ts in call.events or ():
            span.add_event(name, point, timestamp=min(ts, end))
        for name, text in ((c.EVENT_THINKING, call.thinking), (c.EVENT_CONTENT, call.content)):
            if text is not None:
                attrs: dict[str, Any] = {
                    c.HARNESS_CONTENT_PURPOSE: call.purpose,
                    c.HARNESS_CONTENT_LENGTH: text.length,
                }
                if self._capture:
                    attrs[c.HARNESS_CONTENT_TEXT] = "".join(text.parts)
                    attrs[c.HARNESS_CONTENT_TRUNCATED] = text.length > text.kept
                span.add_event(name, attrs, timestamp=end)
        span.end(end_time=end)
        if call.plan is not None:
            call.plan.end(end_time=end)

    def _collect(self, call: _Call, text: str, thinking: bool) -> None:
        buf = call.thinking if thinking else call.content
        if buf is None:
            buf = _Text()
            if thinking:
                call.thinking = buf
            else:
                call.content = buf
        buf.length += len(text)
        if self._capture and buf.kept < self._max:
            piece = text[: self._max - buf.kept]
            buf.parts.append(piece)
            buf.kept += len(piece)

    def _on_call_started(self, e: ev.CallStarted) -> None:
        if self._call is not None:
            self._flush()
        if self._call is not None:  # a call that never finished (cannot happen in order)
            self._abandon_call(self._call)
        parent = self._iteration_ctx
        plan = None
        if e.purpose == "plan":
            plan = self._tracer.start_span(
                c.plan_span_name(self._mode),
                context=parent,
                attributes={
                    c.GEN_AI_OPERATION_NAME: c.OP_PLAN,
                    c.HARNESS_MODE: self._mode,
                    c.OPENINFERENCE_SPAN_KIND: c.CHAIN,
                },
            )
            parent = trace.set_span_in_context(plan)
        elif e.purpose == "compact":
            if self._compaction is None:
                self._compaction = self._start_compaction()
            parent = trace.set_span_in_context(self._compaction)
        self._call = _Call(e.index, e.purpose, e.model, e.provider, parent, plan, time.time_ns())

    def _chat_span(self, call: _Call, attrs: dict[str, Any]) -> Span:
        attrs[c.GEN_AI_OPERATION_NAME] = c.OP_CHAT
        attrs[c.GEN_AI_PROVIDER_NAME] = call.provider
        if call.model:
            attrs[c.GEN_AI_REQUEST_MODEL] = call.model
        attrs[c.HARNESS_CALL_PURPOSE] = call.purpose
        attrs[c.HARNESS_CALL_INDEX] = call.index
        attrs[c.OPENINFERENCE_SPAN_KIND] = c.LLM
        call.span = self._tracer.start_span(
            c.chat_span_name(call.model),
            context=call.parent,
            kind=SpanKind.CLIENT,
            attributes=attrs,
            start_time=call.start_ns,
        )
        return call.span

    def _on_call_finished(self, e: ev.CallFinished) -> None:
        r = e.record
        call = self._call
        if call is None or call.index != r.index or call.end_ns is not None:
            self._flush()  # no matching CallStarted: take the start from the record
            self._on_call_started(ev.CallStarted(r.index, r.purpose, r.model, e.provider))
            call = self._call
            assert call is not None
            call.start_ns = r.started_at_ns or call.start_ns
        u = r.usage
        attrs: dict[str, Any] = {
            c.GEN_AI_USAGE_INPUT_TOKENS: u.input_tokens,
            c.GEN_AI_USAGE_OUTPUT_TOKENS: u.output_tokens,
            c.HARNESS_CALL_ATTEMPTS: r.attempts,
        }
        if u.cache_read_tokens:
            attrs[c.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] = u.cache_read_tokens
        if u.cache_write_tokens:
            attrs[c.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS] = u.cache_write_tokens
        if u.reasoning_tokens:
            attrs[c.HARNESS_REASONING_TOKENS] = u.reasoning_tokens
        if r.response_model:
            attrs[c.GEN_AI_RESPONSE_MODEL] = r.response_model
        if r.response_id:
            attrs[c.GEN_AI_RESPONSE_ID] = r.response_id
        if r.finish_reason:
            attrs[c.GEN_AI_RESPONSE_FINISH_REASONS] = [r.finish_reason]
        if r.cost_usd is not None:
            attrs[c.HARNESS_COST_USD] = r.cost_usd
        span = self._chat_span(call, attrs)
        if r.error is not None:
            kind = r.error.split(":", 1)[0].split(" (", 1)[0].strip() or "error"
            self._error(span, r.error, kind)
            if call.plan is not None:
                call.plan.set_status(StatusCode.ERROR, r.error)
        call.end_ns = r.ended_at_ns if r.ended_at_ns > 0 else time.time_ns()

    def _abandon_call(self, call: _Call) -> None:
        span = call.span or self._chat_span(call, {})
        self._error(span, "the provider call did not finish", "unfinished")
        if call.plan is not None:
            call.plan.set_status(StatusCode.ERROR, "the provider call did not finish")
        call.end_ns = time.time_ns()
        self._flush()

    def _on_text(self, e: ev.Content | ev.Thinking) -> None:
        thinking = e.__class__ is ev.Thinking
        if self._call is not None:
            self._collect(self._call, e.text, thinking)
        else:
            name = c.EVENT_THINKING if thinking else c.EVENT_CONTENT
            self._point(name, self._text_attrs(e.text, e.purpose))

    def _start_compaction(self) -> Span:
        return self._tracer.start_span(
            c.SPAN_COMPACTION,
            context=self._iteration_ctx,
            attributes={c.OPENINFERENCE_SPAN_KIND: c.CHAIN},
        )

    def _on_usage(self, e: ev.Usage) -> None:
        self._flush()
        if self._call is not None:  # the chat span carries the numbers: a bare marker here
            self._point(c.EVENT_USAGE, {})
            return
        attrs: dict[str, Any] = {
            c.HARNESS_CALL_PURPOSE: e.purpose,
            c.HARNESS_USAGE_INPUT_TOKENS: e.usage.input_tokens,
            c.HARNESS_USAGE_OUTPUT_TOKENS: e.usage.output_tokens,
        }
        if e.cost_usd is not None:
            attrs[c.HARNESS_COST_USD] = e.cost_usd
        self._point(c.EVENT_USAGE, attrs)

    def _point(self, name: str, attrs: dict[str, Any]) -> None:
        """A span event on the current span; on a provider call it is added when the call's
        span ends, with its timestamp clamped to the call's end."""
        self._flush()
        call = self._call
        if call is None:
            self._current().add_event(name, attrs)
            return
        if call.events is None:
            call.events = []
        call.events.append((name, attrs, time.time_ns()))
