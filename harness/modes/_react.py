"""ReAct: infer -> act -> observe, until the model answers without tool calls."""

from __future__ import annotations

from typing import ClassVar

from harness.core._messages import Message
from harness.core._terminations import FinishReason
from harness.errors import ProviderError
from harness.kernel._calls import build_request, call_provider
from harness.kernel._dispatch import dispatch
from harness.kernel._hitl import interrupt, needs_approval
from harness.kernel._hooks import HookEvent
from harness.kernel._progress import ProgressSnapshot, strict_productivity_signal
from harness.kernel._replies import emit_text, handle_provider_error
from harness.kernel._starvation import check_starvation
from harness.kernel._state import Continue, Halt, State
from harness.kernel._turns import close_turn

__all__ = ["ReAct", "handle_provider_error"]


class ReAct:
    """The default mode. One iteration = one provider call and the tool calls it asks for."""

    #: The harness's own code: the kernel awaits it directly (kernel._isolated.owned).
    _harness_owned: ClassVar[bool] = True

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
                return state.halt(FinishReason.ERROR_HALTED, params.halt)
            before = len(state.messages)
            state.messages.extend(params.inject)
            if request.messages is not state.messages:  # a phase note follows the history
                request.messages = [*state.messages, *request.messages[before:]]
        try:
            response, streamed = await call_provider(state, request)
        except ProviderError as exc:
            return handle_provider_error(state, exc)
        check_starvation(request, response)  # the kernel escalates the cap and retries
        if not streamed:
            emit_text(state, response)
        if response.tool_call_error is not None:
            state.error_diagnostic = {
                "schema": request.response_format,
                "received": response.text,
                "violations": [{"reason": response.tool_call_error}],
            }
            return state.halt(
                FinishReason.ERROR_SCHEMA_VALIDATION,
                f"tool_call_parse_failed: {response.tool_call_error}",
            )
        calls = response.tool_calls
        state.messages.append(Message.assistant(response.text, calls, response.thinking))
        if not calls:
            if state.config.until_tool:
                wanted = " or ".join(state.config.until_tool)
                return state.halt(
                    FinishReason.ERROR_UNTIL_TOOL_NOT_CALLED,
                    f"the model stopped without a successful call of {wanted}",
                )
            return state.halt(FinishReason.STOP)
        pending = needs_approval(state, calls)
        if pending:  # Sagents' check_pre_tool_hitl: no call of this turn runs yet
            return interrupt(state, pending)
        outcome = await dispatch(state, calls)
        return close_turn(state, calls, outcome.results, outcome)

    def productivity_signal(self, prev: ProgressSnapshot, state: State) -> bool:
        assert state.fingerprint is not None
        return strict_productivity_signal(
            prev, state.messages[prev.message_count :], state.fingerprint
        )
