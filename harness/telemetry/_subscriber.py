"""Kernel events -> OpenTelemetry spans: one trace per run (the table in docs/tracing.md).

A :class:`RunTracer` is a plain subscriber: the kernel calls it synchronously, in order, for every
event of one run. Because the order is guaranteed, every span gets its parent explicitly
(``trace.set_span_in_context(parent)``), never from the ambient context, so concurrent runs can
never mix their spans. The tree::

    invoke_agent {mode} [suite/task]         root, INTERNAL, AGENT (outcome attributes at Done)
    ├─ (turn {i})                            conversations only: one per user turn, CHAIN,
    │                                        TurnStarted..TurnEnded; iterations nest under it
    ├─ iteration {n}                         one per Iteration event, CHAIN
    │  ├─ plan {mode}                        wraps a plan-purpose call, CHAIN
    │  │  └─ chat {model}                    every provider call, CLIENT, LLM (tokens only here)
    │  ├─ compaction                         wraps compact-purpose calls, ends at Compaction
    │  ├─ chat {model}
    │  └─ execute_tool {tool}                per tool call (parallel calls are siblings), TOOL
    │     └─ invoke_agent subagent           SubagentSpawn..SubagentResult, AGENT
    └─ (Content, Thinking, Usage, RunWarning, StructuredRetry, Submitted, ToolUI: span events)

The root, a tool span and a sub-agent span are also made the ambient context *in the task that
runs them* (attached at start, detached at end in that same task), so the user's own spans in
hooks or tools, instrumented libraries called by a tool, and a sub-agent's own traced run nest
under them. The harness's own parenting never reads the ambient context.

The tracer keeps the run's own spans (root, turns, iterations) and hands provider calls (chat,
plan and compaction spans, text and point events) to a :class:`~harness.telemetry._calls.CallSpans`
and tool calls and sub-agents to a :class:`~harness.telemetry._tools.ToolSpans`, each given the
parent context to start under; which tracer a run uses is decided in
:mod:`harness.telemetry._resolve`.

Text (assistant content, thinking, tool arguments and results, deliverables) is recorded only
when ``capture_content`` is on, truncated to ``content_max_chars``; otherwise only lengths.
A bug in here never disturbs a run: errors are logged once and the event is skipped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span, Tracer

from harness import events as ev
from harness.core._terminations import Category
from harness.telemetry import _conventions as c
from harness.telemetry._calls import CallSpans
from harness.telemetry._resolve import DEFAULT_CONTENT_MAX_CHARS
from harness.telemetry._spanparts import Scope, attr_value, set_error, trunc
from harness.telemetry._tools import ToolSpans

__all__ = ["RunTracer", "mapped_event_classes"]

log = logging.getLogger("harness.telemetry")


class RunTracer:
    """Builds one run's trace from its events. Create it when the run starts (the root span
    starts then); the kernel calls it with every event; Done ends the trace and sets
    ``result.trace_id``."""

    __slots__ = (
        "_calls",
        "_capture",
        "_done",
        "_failed",
        "_iteration",
        "_iteration_ctx",
        "_live",
        "_max",
        "_mode",
        "_provider",
        "_recording",
        "_root",
        "_root_ctx",
        "_root_scope",
        "_session_id",
        "_tools",
        "_tracer",
        "_turn",
        "_turn_ctx",
    )

    def __init__(
        self,
        tracer: Tracer,
        *,
        mode: str,
        session_id: str,
        provider: str | None = None,
        capture_content: bool = False,
        content_max_chars: int = DEFAULT_CONTENT_MAX_CHARS,
        attributes: Mapping[str, Any] | None = None,
        prompt: str | None = None,
    ) -> None:
        self._tracer = tracer
        self._mode = mode
        self._session_id = session_id
        self._provider = provider
        self._capture = capture_content
        self._max = max(0, content_max_chars)
        attrs: dict[str, Any] = {
            c.GEN_AI_OPERATION_NAME: c.OP_INVOKE_AGENT,
            c.GEN_AI_AGENT_NAME: mode,
            c.GEN_AI_CONVERSATION_ID: session_id,
            c.OPENINFERENCE_SPAN_KIND: c.AGENT,
        }
        if provider:
            attrs[c.GEN_AI_PROVIDER_NAME] = provider
        for key, value in (attributes or {}).items():
            if value is not None:
                attrs[c.run_attribute_key(key)] = attr_value(value)
        if capture_content and prompt:
            attrs[c.INPUT_VALUE] = trunc(prompt, self._max)
        suite, task = (
            attrs.get(c.run_attribute_key("suite")),
            attrs.get(c.run_attribute_key("task")),
        )
        label = f"{suite}/{task}" if suite and task else (str(task) if task else None)
        name = c.agent_span_name(mode, label)
        # The root's parent is the caller's ambient context, as for any instrumented library.
        self._root = tracer.start_span(name, attributes=attrs)
        self._recording = self._root.is_recording()
        self._root_ctx = trace.set_span_in_context(self._root)
        self._root_scope = Scope(self._root_ctx) if self._recording else None
        self._turn: Span | None = None
        self._turn_ctx = self._root_ctx
        self._iteration: Span | None = None
        self._iteration_ctx = self._root_ctx
        self._calls = CallSpans(tracer, mode=mode, capture=capture_content, max_chars=self._max)
        self._tools = ToolSpans(tracer, capture=capture_content, max_chars=self._max)
        self._done = False
        self._live = self._recording  # recording and not done
        self._failed = False

    # --- dispatch ------------------------------------------------------------------------------

    def __call__(self, event: Any) -> None:
        if self._live:
            handler = _HANDLERS.get(event.__class__)
            if handler is None:
                return
            try:
                handler(self, event)
            except Exception:  # telemetry must never halt a run
                if not self._failed:
                    self._failed = True
                    log.warning("harness: tracing error (further ones not shown)", exc_info=True)
        elif event.__class__ is ev.Done and not self._done:
            self._on_done(event)  # sampled out: only the trace id

    @property
    def root(self) -> Span:
        return self._root

    # --- helpers -------------------------------------------------------------------------------

    def _current(self) -> Span:
        tools = self._tools
        if tools.running or tools.subagents:
            span = tools.current()
            assert span is not None
            return span
        if self._calls.compaction is not None:
            return self._calls.compaction
        if self._iteration is not None:
            return self._iteration
        return self._turn if self._turn is not None else self._root

    def _point(self, name: str, attrs: dict[str, Any]) -> None:
        """A span event on the current span; during a provider call it is added when the
        call's span ends, with its timestamp clamped to the call's end."""
        if not self._calls.point(name, attrs):
            self._current().add_event(name, attrs)

    # --- provider calls, tool calls and sub-agents (delegated) --------------------------------

    def _on_call_started(self, e: ev.CallStarted) -> None:
        self._calls.started(e, self._iteration_ctx)

    def _on_call_finished(self, e: ev.CallFinished) -> None:
        self._calls.finished(e, self._iteration_ctx)

    def _on_text(self, e: ev.Content | ev.Thinking) -> None:
        if not self._calls.text(e):
            name = c.EVENT_THINKING if e.__class__ is ev.Thinking else c.EVENT_CONTENT
            self._point(name, self._calls.text_attrs(e.text, e.purpose))

    def _on_usage(self, e: ev.Usage) -> None:
        self._point(c.EVENT_USAGE, self._calls.usage_attrs(e))

    def _on_compaction(self, e: ev.Compaction) -> None:
        self._calls.compacted(e, self._iteration_ctx)

    def _on_tool_call(self, e: ev.ToolCallEvent) -> None:
        if self._calls.call is not None:
            self._calls.flush()
        self._tools.call(e, self._iteration_ctx)

    def _on_tool_result(self, e: ev.ToolResultEvent) -> None:
        if self._calls.call is not None:
            self._calls.flush()
        self._tools.result(e, self._iteration_ctx)

    def _on_tool_ui(self, e: ev.ToolUI) -> None:
        if self._calls.call is not None:
            self._calls.flush()
        attrs = self._tools.ui(e)
        if attrs is not None:
            self._point(c.EVENT_TOOL_UI, attrs)

    def _on_subagent_spawn(self, e: ev.SubagentSpawn) -> None:
        if self._calls.call is not None:
            self._calls.flush()
        self._tools.spawn(e, self._iteration_ctx)

    def _on_subagent_result(self, e: ev.SubagentResult) -> None:
        if self._calls.call is not None:
            self._calls.flush()
        self._tools.subagent_done(e, self._iteration_ctx)

    # --- handlers ------------------------------------------------------------------------------

    def _on_turn_started(self, e: ev.TurnStarted) -> None:
        if self._calls.call is not None:
            self._calls.flush()
        self._end_iteration()
        self._end_turn()
        attrs: dict[str, Any] = {
            c.HARNESS_TURN_INDEX: e.index,
            c.GEN_AI_CONVERSATION_ID: self._session_id,
            c.OPENINFERENCE_SPAN_KIND: c.CHAIN,
        }
        if e.added_tools:
            attrs[c.HARNESS_TURN_ADDED_TOOLS] = list(e.added_tools)
        if self._capture:
            attrs[c.INPUT_VALUE] = trunc(e.user, self._max)
        span = self._tracer.start_span(
            c.turn_span_name(e.index), context=self._root_ctx, attributes=attrs
        )
        self._turn = span
        self._turn_ctx = self._iteration_ctx = trace.set_span_in_context(span)

    def _on_turn_ended(self, e: ev.TurnEnded) -> None:
        if self._calls.call is not None:
            self._calls.flush()
        self._end_iteration()
        span = self._turn
        if span is None:
            return
        span.set_attributes(
            {c.HARNESS_TURN_STEPS: e.steps, c.HARNESS_TURN_FINISH_REASON: e.finish_reason.value}
        )
        if self._capture and e.reply:
            span.set_attribute(c.OUTPUT_VALUE, trunc(e.reply, self._max))
        if e.finish_reason.category not in (Category.SUCCESS, Category.PAUSED):
            set_error(span, e.finish_reason.value, e.finish_reason.value)
        self._end_turn()

    def _end_turn(self) -> None:
        if self._turn is not None:
            self._turn.end()
            self._turn = None
            self._turn_ctx = self._iteration_ctx = self._root_ctx

    def _on_iteration(self, e: ev.Iteration) -> None:
        if self._calls.call is not None:
            self._calls.flush()
        self._end_iteration()
        span = self._tracer.start_span(
            c.iteration_span_name(e.n),
            context=self._turn_ctx,
            attributes={
                c.HARNESS_ITERATION: e.n,
                c.HARNESS_UNPRODUCTIVE_ITERATIONS: e.unproductive_iterations,
                c.OPENINFERENCE_SPAN_KIND: c.CHAIN,
            },
        )
        self._iteration = span
        self._iteration_ctx = trace.set_span_in_context(span)

    def _end_iteration(self) -> None:
        if self._iteration is not None:
            self._iteration.end()
            self._iteration = None
            self._iteration_ctx = self._turn_ctx

    def _on_warning(self, e: ev.RunWarning) -> None:
        self._point(
            c.EVENT_WARNING,
            {
                c.HARNESS_WARNING_MESSAGE: trunc(e.message, self._max),
                c.HARNESS_WARNING_SOURCE: e.source,
            },
        )

    def _on_structured_retry(self, e: ev.StructuredRetry) -> None:
        attrs: dict[str, Any] = {c.HARNESS_RETRY_ATTEMPT: e.attempt}
        if self._capture:
            attrs[c.HARNESS_RETRY_ERROR] = trunc(e.error, self._max)
        self._point(c.EVENT_STRUCTURED_RETRY, attrs)

    def _on_escalation(self, e: ev.MaxTokensEscalation) -> None:
        self._point(
            c.EVENT_MAX_TOKENS_ESCALATION,
            {
                c.HARNESS_ESCALATION_FROM: e.from_tokens,
                c.HARNESS_ESCALATION_TO: e.to_tokens,
                c.HARNESS_ESCALATION_OUTPUT_TOKENS: e.output_tokens,
                c.HARNESS_ESCALATION_REASONING_TOKENS: e.reasoning_tokens,
            },
        )

    def _on_submitted(self, e: ev.Submitted) -> None:
        attrs: dict[str, Any] = {}
        if self._capture and e.deliverable is not None:
            attrs[c.HARNESS_DELIVERABLE] = self._tools.json(e.deliverable)
        self._point(c.EVENT_SUBMITTED, attrs)

    def _on_done(self, e: ev.Done) -> None:
        self._done = True
        self._live = False
        result = e.result
        root = self._root
        sc = root.get_span_context()
        if sc.is_valid and sc.trace_flags.sampled:
            result.trace_id = format(sc.trace_id, "032x")  # before later subscribers see it
        if not self._recording:
            return
        self._calls.end_call()
        self._tools.close()
        self._calls.end_compaction()
        self._end_iteration()
        self._end_turn()
        self._tools.exit_scopes()
        if self._root_scope is not None:
            self._root_scope.exit()
            self._root_scope = None
        attrs: dict[str, Any] = {
            c.HARNESS_RUN_FINISH_REASON: result.finish_reason.value,
            c.HARNESS_RUN_CATEGORY: result.category.value,
            c.HARNESS_RUN_ITERATIONS: result.iterations,
            c.HARNESS_RUN_LLM_CALLS: result.llm_calls,
            c.HARNESS_RUN_TOOL_CALLS: result.tool_calls_made,
        }
        if result.cost_usd is not None:
            attrs[c.HARNESS_RUN_COST_USD] = result.cost_usd
        if result.halted_reason:
            attrs[c.HARNESS_RUN_HALTED_REASON] = trunc(result.halted_reason, self._max)
        if self._capture and result.text:
            attrs[c.OUTPUT_VALUE] = trunc(result.text, self._max)
        root.set_attributes(attrs)
        if result.category not in (Category.SUCCESS, Category.PAUSED):
            set_error(
                root, result.halted_reason or result.finish_reason.value, result.finish_reason.value
            )
        root.end()


_HANDLERS: dict[type, Callable[[RunTracer, Any], None]] = {
    ev.TurnStarted: RunTracer._on_turn_started,
    ev.TurnEnded: RunTracer._on_turn_ended,
    ev.Iteration: RunTracer._on_iteration,
    ev.CallStarted: RunTracer._on_call_started,
    ev.CallFinished: RunTracer._on_call_finished,
    ev.Content: RunTracer._on_text,
    ev.Thinking: RunTracer._on_text,
    ev.ToolCallEvent: RunTracer._on_tool_call,
    ev.ToolResultEvent: RunTracer._on_tool_result,
    ev.ToolUI: RunTracer._on_tool_ui,
    ev.Compaction: RunTracer._on_compaction,
    ev.SubagentSpawn: RunTracer._on_subagent_spawn,
    ev.SubagentResult: RunTracer._on_subagent_result,
    ev.Usage: RunTracer._on_usage,
    ev.StructuredRetry: RunTracer._on_structured_retry,
    ev.MaxTokensEscalation: RunTracer._on_escalation,
    ev.RunWarning: RunTracer._on_warning,
    ev.Submitted: RunTracer._on_submitted,
    ev.Done: RunTracer._on_done,
}


def mapped_event_classes() -> frozenset[type]:
    """The event classes the subscriber maps to spans or span events."""
    return frozenset(_HANDLERS)
