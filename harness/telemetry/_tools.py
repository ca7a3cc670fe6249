"""Tool calls and sub-agents as spans: ``execute_tool {tool}`` (TOOL) per tool call, parallel
calls as siblings, and ``invoke_agent subagent`` (AGENT) from SubagentSpawn to SubagentResult,
under the tool span that spawned it. Both are also made the ambient context in the task that runs
them (a :class:`~harness.telemetry._calls.Scope`), so spans made inside a tool nest under it. A
mixin of :class:`~harness.telemetry._subscriber.RunTracer`, split out to keep modules small.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, Tracer

from harness import events as ev
from harness.core._terminations import Category, FinishReason
from harness.telemetry import _conventions as c
from harness.telemetry._calls import Scope, trunc

__all__ = ["Tool", "ToolSpans", "to_json"]

# The C encoder json.dumps uses (None without the _json accelerator).
_c_encoder: Any = getattr(json.encoder, "c_make_encoder", None)
_encode_str = json.encoder.encode_basestring


def to_json(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, default=str)``, its ``repr`` when that fails.
    Calls the C encoder directly: ``json.dumps`` with ``default=`` builds a JSONEncoder and
    an encoder per call, twice the cost of the encoding itself for a small dict."""
    try:
        if _c_encoder is None:
            return json.dumps(value, ensure_ascii=False, default=str)
        encode = _c_encoder({}, str, _encode_str, None, ": ", ", ", False, False, True)
        return "".join(encode(value, 0))
    except (TypeError, ValueError):
        return repr(value)


@dataclass(slots=True, eq=False)
class Tool:
    call: Any
    span: Span
    scope: Scope
    end_ns: int = 0


class ToolSpans:
    """The tool and sub-agent half of RunTracer (which defines the state named here)."""

    __slots__ = ()
    _tracer: Tracer
    _capture: bool
    _max: int
    _iteration_ctx: Context
    _tools: list[Tool]
    _ui: list[Tool]
    _subagents: dict[str, tuple[Span, Scope]]
    _scopes: list[Scope]

    # Defined by CallSpans.
    _flush: Callable[[], None]
    _point: Callable[[str, dict[str, Any]], None]
    _error: Callable[[Span, str | None, str], None]

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

    def _json(self, value: Any) -> str:
        return trunc(to_json(value), self._max)

    def _on_tool_call(self, e: ev.ToolCallEvent) -> None:
        self._flush()
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
            attrs[c.GEN_AI_TOOL_CALL_ARGUMENTS] = self._json(call.arguments)
        span = self._tracer.start_span(
            c.tool_span_name(call.name), context=self._iteration_ctx, attributes=attrs
        )
        self._tools.append(Tool(call, span, self._enter(span)))

    def _find_tool(self, call: Any) -> Tool | None:
        for t in reversed(self._tools):
            if t.call is call:
                return t
        for t in self._tools:
            if t.call.id == call.id:
                return t
        return None

    def _on_tool_result(self, e: ev.ToolResultEvent) -> None:
        self._flush()
        t = self._find_tool(e.call)
        if t is None:  # no ToolCallEvent seen: record it now
            self._on_tool_call(ev.ToolCallEvent(e.call))
            t = self._tools[-1]
        self._tools.remove(t)
        self._exit(t.scope)
        result = e.result
        span = t.span
        if self._capture:
            span.set_attribute(c.GEN_AI_TOOL_CALL_RESULT, trunc(result.content, self._max))
        if result.is_error:
            self._error(
                span, trunc(result.content, self._max) if self._capture else None, "tool_error"
            )
        if result.ui is not None:  # its ToolUI event comes next: keep the span for it
            t.end_ns = time.time_ns()
            self._ui.append(t)
        else:
            span.end()

    def _on_tool_ui(self, e: ev.ToolUI) -> None:
        self._flush()
        attrs: dict[str, Any] = {
            c.HARNESS_TOOL_UI_KIND: e.ui.kind,
            c.GEN_AI_TOOL_CALL_ID: e.tool_call_id,
        }
        if self._capture:
            attrs[c.HARNESS_TOOL_UI_PAYLOAD] = self._json(e.ui.payload)
        for t in self._ui:
            if t.call.id == e.tool_call_id:
                self._ui.remove(t)
                t.span.add_event(c.EVENT_TOOL_UI, attrs, timestamp=t.end_ns)
                t.span.end(end_time=t.end_ns)
                return
        self._point(c.EVENT_TOOL_UI, attrs)

    def _on_subagent_spawn(self, e: ev.SubagentSpawn) -> None:
        self._flush()
        # The spawning tool span: found by call id, so parallel spawns get their own parents.
        tool = next((t for t in self._tools if t.call.id == e.tool_call_id), None)
        if tool is None and self._tools and not e.tool_call_id:
            tool = self._tools[-1]
        parent = trace.set_span_in_context(tool.span) if tool is not None else None
        attrs: dict[str, Any] = {
            c.GEN_AI_OPERATION_NAME: c.OP_INVOKE_AGENT,
            c.GEN_AI_AGENT_ID: e.id,
            c.HARNESS_SUBAGENT_ID: e.id,
            c.OPENINFERENCE_SPAN_KIND: c.AGENT,
        }
        if self._capture:
            attrs[c.INPUT_VALUE] = trunc(e.prompt, self._max)
        span = self._tracer.start_span(
            c.SPAN_SUBAGENT, context=parent or self._iteration_ctx, attributes=attrs
        )
        self._subagents[e.id] = (span, self._enter(span))

    def _on_subagent_result(self, e: ev.SubagentResult) -> None:
        self._flush()
        entry = self._subagents.pop(e.id, None)
        if entry is None:
            self._on_subagent_spawn(ev.SubagentSpawn(e.id, ""))
            entry = self._subagents.pop(e.id)
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
            self._error(span, e.finish_reason, e.finish_reason)
        span.end()
