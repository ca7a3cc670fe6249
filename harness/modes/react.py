"""ReAct: infer -> act -> observe, until the model answers without tool calls."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.core.events import Content, Thinking
from harness.core.messages import Message
from harness.core.terminations import FinishReason
from harness.errors import ProviderError
from harness.kernel.calls import build_request, call_provider
from harness.kernel.dispatch import dispatch
from harness.kernel.hooks import HookEvent
from harness.kernel.progress import ProgressSnapshot, strict_productivity_signal
from harness.modes.base import ContextOverflow, Continue, Halt
from harness.providers.base import Response

if TYPE_CHECKING:
    from harness.kernel.state import State

__all__ = ["ReAct", "handle_provider_error"]


def handle_provider_error(state: State, exc: ProviderError) -> Halt:
    """Map a failed call to a termination (context overflow is raised for reactive compaction)."""
    if exc.kind == "context_length_exceeded":
        raise ContextOverflow(str(exc)) from exc
    if exc.kind == "unauthorized":
        state.halt(FinishReason.ERROR_PROVIDER_AUTH, str(exc))
    else:
        state.halt(FinishReason.ERROR_DURING_EXECUTION, str(exc))
    return Halt()


def emit_text(state: State, response: Response, purpose: str = "main") -> None:
    """Emit a turn's thinking and text, unless they were streamed already."""
    if not state.subscribers:
        return
    if response.thinking:
        state.emit(Thinking(response.thinking, purpose))  # type: ignore[arg-type]
    if response.text:
        state.emit(Content(response.text, purpose))  # type: ignore[arg-type]


class ReAct:
    """The default mode. One iteration = one provider call and the tool calls it asks for."""

    name = "react"

    def init(self, state: State) -> None:
        return None

    async def iterate(self, state: State) -> Continue | Halt:
        request = build_request(state, state.messages)
        if state.hooks.has(HookEvent.CHAT_PARAMS):
            params = await state.hooks.fire(
                HookEvent.CHAT_PARAMS,
                {"request": request, "session_id": state.session_id, "messages": state.messages},
            )
            if params.halt is not None:
                state.halt(FinishReason.ERROR_HALTED, params.halt)
                return Halt()
            state.messages.extend(params.inject)  # request.messages is state.messages
        try:
            response, streamed = await call_provider(state, request)
        except ProviderError as exc:
            return handle_provider_error(state, exc)
        if not streamed:
            emit_text(state, response)
        if response.tool_call_error is not None:
            state.error_diagnostic = {
                "schema": request.response_format,
                "received": response.text,
                "violations": [{"reason": response.tool_call_error}],
            }
            state.halt(
                FinishReason.ERROR_SCHEMA_VALIDATION,
                f"tool_call_parse_failed: {response.tool_call_error}",
            )
            return Halt()
        calls = response.tool_calls
        state.messages.append(Message.assistant(response.text, calls, response.thinking))
        if not calls:
            if state.config.until_tool:
                wanted = " or ".join(state.config.until_tool)
                state.halt(
                    FinishReason.ERROR_UNTIL_TOOL_NOT_CALLED,
                    f"the model stopped without a successful call of {wanted}",
                )
            else:
                state.halt(FinishReason.STOP)
            return Halt()
        outcome = await dispatch(state, calls)
        results = outcome.results
        messages = state.messages
        any_error = any_success = False
        for r in results:
            messages.append(Message.tool(r))
            if r.is_error:
                any_error = True
            else:
                any_success = True
        if outcome.halted is not None:
            if outcome.submitted:
                state.submitted = True
                state.deliverable = outcome.deliverable
                state.halt(FinishReason.SUBMITTED)
            else:
                state.halt(FinishReason.ERROR_HALTED, outcome.halted)
            return Halt()
        state.tool_calls_made += len(calls)
        state.add_mistake_turn(any_error, any_success)
        until = state.config.until_tool
        if until:
            need_success = state.config.until_tool_success
            for call, result in zip(calls, results, strict=True):
                if call.name in until and not (need_success and result.is_error):
                    state.submitted = True
                    state.deliverable = call.arguments
                    state.halt(FinishReason.SUBMITTED)
                    return Halt()
        return Continue()

    def productivity_signal(self, prev: ProgressSnapshot, state: State) -> bool:
        assert state.fingerprint is not None
        return strict_productivity_signal(
            prev, state.messages[prev.message_count :], state.fingerprint
        )
