"""Provider calls as spans: ``chat {model}`` (CLIENT, LLM), wrapped in ``plan {mode}`` for
plan calls and in the ``compaction`` span for compact calls, with the call's text and point
events. :class:`CallSpans` is the part of :class:`~harness.telemetry._subscriber.RunTracer`
that follows the provider calls of its run.

A chat span is created when its CallFinished arrives, once every attribute is known (one
attribute pass instead of two), with the start time taken at CallStarted. It ends at the next
event that is not the call's own Content/Thinking (unstreamed text comes right after
CallFinished), at the call's recorded end time; the call's point events (Usage, retry
Warnings) are added then, clamped to that end.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, StatusCode, Tracer

from harness import events as ev
from harness.core._budget import CallRecord
from harness.telemetry import _conventions as c
from harness.telemetry._spanparts import set_error, trunc

__all__ = ["CallSpans"]


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
    """The provider calls of one run: the call whose span is open (or about to be), and the
    compaction span its compact calls nest under. Parents come from the caller (the
    iteration's context), point events that arrive during a call are kept for its span."""

    __slots__ = ("_capture", "_max", "_mode", "_tracer", "call", "compaction")

    def __init__(self, tracer: Tracer, *, mode: str, capture: bool, max_chars: int) -> None:
        self._tracer = tracer
        self._mode = mode
        self._capture = capture
        self._max = max_chars
        #: The provider call under way, or finished and collecting its trailing text.
        self.call: _Call | None = None
        #: The compaction span open since the first compact call (ended at Compaction).
        self.compaction: Span | None = None

    def text_attrs(self, text: str, purpose: str | None = None) -> dict[str, Any]:
        """The attributes of a text point event outside a call (lengths, or the text)."""
        attrs: dict[str, Any] = {c.HARNESS_CONTENT_LENGTH: len(text)}
        if purpose is not None:
            attrs[c.HARNESS_CONTENT_PURPOSE] = purpose
        if self._capture:
            attrs[c.HARNESS_CONTENT_TEXT] = trunc(text, self._max)
            attrs[c.HARNESS_CONTENT_TRUNCATED] = len(text) > self._max
        return attrs

    def flush(self) -> None:
        """End the finished provider call whose trailing Content/Thinking was being collected."""
        call = self.call
        if call is None or call.end_ns is None:
            return
        self.call = None
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

    def started(self, e: ev.CallStarted, parent: Context) -> None:
        """A CallStarted under ``parent``: a plan span now for a plan call, the chat span later."""
        if self.call is not None:
            self.flush()
        if self.call is not None:  # a call that never finished (cannot happen in order)
            self._abandon(self.call)
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
            if self.compaction is None:
                self.compaction = self.start_compaction(parent)
            parent = trace.set_span_in_context(self.compaction)
        self.call = _Call(e.index, e.purpose, e.model, e.provider, parent, plan, time.time_ns())

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

    def finished(self, e: ev.CallFinished, parent: Context) -> None:
        """A CallFinished: the chat span, with every attribute; without a matching CallStarted,
        the call starts now under ``parent`` (its start time taken from the record)."""
        r = e.record
        call = self.call
        if call is None or call.index != r.index or call.end_ns is not None:
            self.flush()  # no matching CallStarted: take the start from the record
            self.started(ev.CallStarted(r.index, r.purpose, r.model, e.provider), parent)
            call = self.call
            assert call is not None
            call.start_ns = r.started_at_ns or call.start_ns
        span = self._chat_span(call, _record_attrs(r))
        if r.error is not None:
            kind = r.error.split(":", 1)[0].split(" (", 1)[0].strip() or "error"
            set_error(span, r.error, kind)
            if call.plan is not None:
                call.plan.set_status(StatusCode.ERROR, r.error)
        call.end_ns = r.ended_at_ns if r.ended_at_ns > 0 else time.time_ns()

    def _abandon(self, call: _Call) -> None:
        span = call.span or self._chat_span(call, {})
        set_error(span, "the provider call did not finish", "unfinished")
        if call.plan is not None:
            call.plan.set_status(StatusCode.ERROR, "the provider call did not finish")
        call.end_ns = time.time_ns()
        self.flush()

    def text(self, e: ev.Content | ev.Thinking) -> bool:
        """Collect a Content/Thinking for the call it belongs to; False when no call is open
        (then it is a point event on the current span)."""
        if self.call is None:
            return False
        self._collect(self.call, e.text, e.__class__ is ev.Thinking)
        return True

    def start_compaction(self, parent: Context) -> Span:
        return self._tracer.start_span(
            c.SPAN_COMPACTION, context=parent, attributes={c.OPENINFERENCE_SPAN_KIND: c.CHAIN}
        )

    def compacted(self, e: ev.Compaction, parent: Context) -> None:
        """A Compaction: the compaction span (started now under ``parent`` when no compact call
        came first) gets the numbers and ends."""
        self.flush()
        span = self.compaction or self.start_compaction(parent)
        self.compaction = None
        span.set_attributes(
            {
                c.HARNESS_COMPACTION_BEFORE_TOKENS: e.before_tokens,
                c.HARNESS_COMPACTION_AFTER_TOKENS: e.after_tokens,
                c.HARNESS_COMPACTION_STAGES: list(e.stages),
                c.HARNESS_COMPACTION_REASON: e.reason,
                c.HARNESS_COMPACTION_DROPPED: e.dropped_count,
            }
        )
        span.end()

    def usage_attrs(self, e: ev.Usage) -> dict[str, Any]:
        """The attributes of a Usage point event: none during a call (the chat span carries the
        numbers, the event is a bare marker there)."""
        self.flush()
        if self.call is not None:
            return {}
        attrs: dict[str, Any] = {
            c.HARNESS_CALL_PURPOSE: e.purpose,
            c.HARNESS_USAGE_INPUT_TOKENS: e.usage.input_tokens,
            c.HARNESS_USAGE_OUTPUT_TOKENS: e.usage.output_tokens,
        }
        if e.cost_usd is not None:
            attrs[c.HARNESS_COST_USD] = e.cost_usd
        return attrs

    def point(self, name: str, attrs: dict[str, Any]) -> bool:
        """Keep a point event for the open call's span (added when it ends, its timestamp
        clamped to the call's end); False when no call is open."""
        call = self.call
        if call is None:
            return False
        self.flush()
        call = self.call
        if call is None:
            return False
        if call.events is None:
            call.events = []
        call.events.append((name, attrs, time.time_ns()))
        return True

    def end_call(self) -> None:
        """The run is done: end the last call (marked unfinished if it was)."""
        self.flush()
        if self.call is not None:
            self._abandon(self.call)

    def end_compaction(self) -> None:
        """The run is done: end an open compaction, marked unfinished."""
        if self.compaction is not None:
            set_error(self.compaction, "compaction did not finish", "unfinished")
            self.compaction.end()
            self.compaction = None


def _record_attrs(r: CallRecord) -> dict[str, Any]:
    """A chat span's attributes from the call's record: tokens, response and cost."""
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
    return attrs
