"""Plan-and-Solve: one tool-less planning call (counted as an iteration), then ReAct; in a
conversation, a new plan at the start of every user turn."""

from __future__ import annotations

from typing import ClassVar

from harness.core._messages import Message
from harness.errors import ProviderError
from harness.kernel._calls import build_request, call_provider
from harness.kernel._replies import emit_text, handle_provider_error
from harness.kernel._starvation import check_starvation
from harness.kernel._state import Continue, Halt, State
from harness.modes._react import ReAct

__all__ = ["PLANNING_INSTRUCTIONS", "PlanAndSolve"]

PLANNING_INSTRUCTIONS = """\

# First, a plan
Do not act yet and do not call any tool in this reply. Write a short plan in plain text:
1. Goal: what exactly is being asked, and what the finished answer looks like.
2. Steps: the actions in order, naming the tools you expect to use for each.
3. Checks: what could go wrong, and how you will notice it and recover.
You will carry the plan out from the next turn on."""


def _tool_list(state: State) -> str:
    """The tools the plan may name (the planning call itself offers none)."""
    specs = state.tool_specs or []
    if not specs:
        return "\nNo tools are available: plan to answer directly."
    lines = [f"- {s.name}: {' '.join(s.description.split())}" for s in specs]
    return "\nTools you will be able to use (not in this reply):\n" + "\n".join(lines)


class PlanAndSolve:
    """Plan once per user turn, then execute with ReAct. The plan stays in the transcript as an
    assistant message; nothing re-plans within a turn. The kernel's default no-progress check
    applies throughout."""

    #: The harness's own code: the kernel awaits it directly (kernel._isolated.owned).
    _harness_owned: ClassVar[bool] = True

    name = "plan_and_solve"

    def __init__(self) -> None:
        self._react = ReAct()

    def init(self, state: State) -> None:
        state.mode_state = {"phase": "planning"}

    def on_user_turn(self, state: State) -> None:
        """A follow-up user turn is a new request: plan it (the plan sees the whole history)."""
        state.mode_state = {"phase": "planning"}

    async def iterate(self, state: State) -> Continue | Halt:
        if state.mode_state["phase"] != "planning":
            return await self._react.iterate(state)
        request = build_request(
            state,
            state.messages,
            purpose="plan",
            with_tools=False,
            system_prompt=(state.config.system_prompt or "")
            + PLANNING_INSTRUCTIONS
            + _tool_list(state),
        )
        try:
            response, streamed = await call_provider(state, request)
        except ProviderError as exc:
            return handle_provider_error(state, exc)
        check_starvation(request, response)  # the kernel escalates the cap and retries
        if not streamed:
            emit_text(state, response, "plan")
        state.messages.append(Message.assistant(response.text, None, response.thinking))
        state.mode_state = {"phase": "executing", "plan": response.text}
        return Continue()
