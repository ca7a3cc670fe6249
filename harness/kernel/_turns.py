"""Closing a tool turn: what ReAct (and a resumed, reviewed turn) does once the turn's calls have
run - append the results, count tool calls and mistakes, honour a halt or a submission, and end
the run when an ``until_tool`` call succeeded."""

from __future__ import annotations

from collections.abc import Sequence

from harness.core._messages import Message, ToolCall, ToolResult
from harness.core._terminations import FinishReason
from harness.kernel._dispatch import TurnOutcome
from harness.kernel._state import Continue, Halt, State

__all__ = ["close_turn"]


def close_turn(
    state: State, calls: Sequence[ToolCall], results: Sequence[ToolResult], outcome: TurnOutcome
) -> Continue | Halt:
    """Append ``results`` (in call order) and settle the turn: Continue, or Halt with the run's
    ending (``submitted``, ``error_halted``)."""
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
            return state.halt(FinishReason.SUBMITTED)
        return state.halt(FinishReason.ERROR_HALTED, outcome.halted)
    state.tool_calls_made += len(calls)
    state.add_mistake_turn(any_error, any_success)
    until = state.config.until_tool
    if until:
        need_success = state.config.until_tool_success
        by_id = {r.tool_call_id: r for r in results}
        for call in calls:
            result = by_id.get(call.id)
            if call.name in until and result is not None and not (need_success and result.is_error):
                state.submitted = True
                state.deliverable = call.arguments
                return state.halt(FinishReason.SUBMITTED)
    return Continue()
