"""Tool calls and sub-agents as spans: ``execute_tool {tool}`` (TOOL) per tool call, parallel
calls as siblings, and ``invoke_agent subagent`` (AGENT) from SubagentSpawn to SubagentResult,
under the tool span that spawned it. Both are also made the ambient context in the task that runs
them (a :class:`~harness.telemetry._spanparts.Scope`), so spans made inside a tool nest under it.
:class:`ToolSpans` is the part of :class:`~harness.telemetry._subscriber.RunTracer` that
follows the tool calls and sub-agents of its run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, Tracer

from harness import events as ev
from harness.core._terminations import Category, FinishReason
from harness.telemetry import _conventions as c
from harness.telemetry._spanparts import Scope, set_error, to_json, trunc

__all__ = ["Tool", "ToolSpans"]


@dataclass(slots=True, eq=False)
class Tool:
    call: Any
    span: Span
    scope: Scope
    end_ns: int = 0


class ToolSpans:
    """The tool calls and sub-agents of one run under way, with the ambient-context scopes
    they hold. Parents come from the caller (the iteration's context)."""

    __slots__ = ("_capture", "_max", "_scopes", "_tracer", "_ui", "running", "subagents")

    def __init__(self, tracer: Tracer, *, capture: bool, max_chars: int) -> None:
        self._tracer = tracer
        self._capture = capture
        self._max = max_chars
        #: Tool calls under way, in the order they started.
        self.running: list[Tool] = []
        #: Finished tool calls whose ToolUI event is still to come (their spans end then).
        self._ui: list[Tool] = []
        #: Sub-agents under way, by id: the span and its scope.
        self.subagents: dict[str, tuple[Span, Scope]] = {}
        self._scopes: list[Scope] = []

    def current(self) -> Span | None:
        """The innermost tool or sub-agent span, if any is open."""
        if self.running:
            return self.running[-1].span
        if self.subagents:
            return next(reversed(self.subagents.values()))[0]
        return None

    def _enter(self, span: Span) -> Scope:
        scope = Scope(trace.set_span_in_context(span))
        self._scopes.append(scope)
        return scope

    def _exit(self, scope: Scope) -> None:
        scope.exit()
        try:  # noqa: SIM105 - contextlib.suppress costs as much as the removal here
            self._scopes.remove(scope)
        except ValueError:
            pass

    def json(self, value: Any) -> str:
        """``value`` as JSON, cut to the content cap."""
        return trunc(to_json(value), self._max)

    def call(self, e: ev.ToolCallEvent, parent: Context) -> None:
        call = e.call
        attrs: dict[str, Any] = {
            c.GEN_AI_OPERATION_NAME: c.OP_EXECUTE_TOOL,
            c.GEN_AI_TOOL_NAME: call.name,
            c.GEN_AI_TOOL_CALL_ID: call.id,
            c.GEN_AI_TOOL_TYPE: c.TOOL_TYPE_FUNCTION,
            c.HARNESS_TOOL_PARALLEL: e.parallel,
            c.OPENINFERENCE_SPAN_KIND: c.TOOL,
        }
        if self._capture:
            attrs[c.GEN_AI_TOOL_CALL_ARGUMENTS] = self.json(call.arguments)
        span = self._tracer.start_span(
            c.tool_span_name(call.name), context=parent, attributes=attrs
        )
        self.running.append(Tool(call, span, self._enter(span)))

    def _find(self, call: Any) -> Tool | None:
        for t in reversed(self.running):
            if t.call is call:
                return t
        for t in self.running:
            if t.call.id == call.id:
                return t
        return None

    def result(self, e: ev.ToolResultEvent, parent: Context) -> None:
        """A tool call's result ends its span (without a ToolCallEvent seen, the span starts
        now under ``parent``); a result with a UI payload waits for its ToolUI."""
        t = self._find(e.call)
        if t is None:  # no ToolCallEvent seen: record it now
            self.call(ev.ToolCallEvent(e.call), parent)
            t = self.running[-1]
        self.running.remove(t)
        self._exit(t.scope)
        result = e.result
        span = t.span
        if self._capture:
            span.set_attribute(c.GEN_AI_TOOL_CALL_RESULT, trunc(result.content, self._max))
        if result.is_error:
            set_error(
                span, trunc(result.content, self._max) if self._capture else None, "tool_error"
            )
        if result.ui is not None:  # its ToolUI event comes next: keep the span for it
            t.end_ns = time.time_ns()
            self._ui.append(t)
        else:
            span.end()

    def ui(self, e: ev.ToolUI) -> dict[str, Any] | None:
        """A ToolUI event on the span of its tool call, which ends then; when no such span
        waits, its attributes are returned (a point event on the current span)."""
        attrs: dict[str, Any] = {
            c.HARNESS_TOOL_UI_KIND: e.ui.kind,
            c.GEN_AI_TOOL_CALL_ID: e.tool_call_id,
        }
        if self._capture:
            attrs[c.HARNESS_TOOL_UI_PAYLOAD] = self.json(e.ui.payload)
        for t in self._ui:
            if t.call.id == e.tool_call_id:
                self._ui.remove(t)
                t.span.add_event(c.EVENT_TOOL_UI, attrs, timestamp=t.end_ns)
                t.span.end(end_time=t.end_ns)
                return None
        return attrs

    def spawn(self, e: ev.SubagentSpawn, parent: Context) -> None:
        """A sub-agent span, under the tool span that spawned it (else ``parent``)."""
        # The spawning tool span: found by call id, so parallel spawns get their own parents.
        tool = next((t for t in self.running if t.call.id == e.tool_call_id), None)
        if tool is None and self.running and not e.tool_call_id:
            tool = self.running[-1]
        ctx = trace.set_span_in_context(tool.span) if tool is not None else None
        attrs: dict[str, Any] = {
            c.GEN_AI_OPERATION_NAME: c.OP_INVOKE_AGENT,
            c.GEN_AI_AGENT_ID: e.id,
            c.HARNESS_SUBAGENT_ID: e.id,
            c.OPENINFERENCE_SPAN_KIND: c.AGENT,
        }
        if self._capture:
            attrs[c.INPUT_VALUE] = trunc(e.prompt, self._max)
        span = self._tracer.start_span(c.SPAN_SUBAGENT, context=ctx or parent, attributes=attrs)
        self.subagents[e.id] = (span, self._enter(span))

    def subagent_done(self, e: ev.SubagentResult, parent: Context) -> None:
        """A sub-agent's result ends its span (started now under ``parent`` if unseen)."""
        entry = self.subagents.pop(e.id, None)
        if entry is None:
            self.spawn(ev.SubagentSpawn(e.id, ""), parent)
            entry = self.subagents.pop(e.id)
        span, scope = entry
        self._exit(scope)
        span.set_attribute(c.HARNESS_SUBAGENT_FINISH_REASON, e.finish_reason)
        if self._capture and e.text:
            span.set_attribute(c.OUTPUT_VALUE, trunc(e.text, self._max))
        try:
            ok = FinishReason(e.finish_reason).category is Category.SUCCESS
        except ValueError:
            ok = False
        if not ok:
            set_error(span, e.finish_reason, e.finish_reason)
        span.end()

    def close(self) -> None:
        """The run is done: end every span still open (unfinished ones marked so)."""
        for t in self._ui:
            t.span.end(end_time=t.end_ns)
        for t in self.running:
            set_error(t.span, "the tool call did not finish", "unfinished")
            t.span.end()
        for span, _ in self.subagents.values():
            set_error(span, "the sub-agent did not finish", "unfinished")
            span.end()

    def exit_scopes(self) -> None:
        """Detach the ambient contexts still attached, the last first."""
        for scope in reversed(self._scopes):
            scope.exit()
        self._scopes.clear()
