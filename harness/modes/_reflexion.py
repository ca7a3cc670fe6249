"""Reflexion (turn-level): after each of the first N tool-using turns, a tool-less self-critique."""

from __future__ import annotations

from typing import ClassVar

from harness.core._messages import Message
from harness.errors import ProviderError
from harness.events import MaxTokensEscalation, RunWarning
from harness.kernel._calls import build_request, call_provider
from harness.kernel._replies import emit_text
from harness.kernel._starvation import headroom_target, starved_info
from harness.kernel._state import Continue, Halt, State
from harness.modes._react import ReAct

__all__ = ["CRITIQUE_MAX_TOKENS", "MAX_REFLECTIONS_CAP", "REFLECTION_PROMPT", "Reflexion"]

#: The critique's output cap (raised once, 4x, when a critique is thinking-starved).
CRITIQUE_MAX_TOKENS = 256

#: Hard cap on critiques per run (more degrades rather than helps; Shinn et al.).
MAX_REFLECTIONS_CAP = 3

REFLECTION_PROMPT = """\
Pause and review the step you just took, in at most three sentences:
did it move the task forward, did it introduce an error that will mislead the next step,
and if so, what will you do differently now? Be brief: your next turn acts on this."""


class Reflexion:
    """ReAct plus a critique call (purpose ``reflect``, no tools, at most 256 output tokens) after
    each of the first ``max_reflections`` (<= 3) continued turns of each user turn. The prompt
    and the critique are kept in the transcript. A failed critique is skipped with a RunWarning
    event, never fatal."""

    #: The harness's own code: the kernel awaits it directly (kernel._isolated.owned).
    _harness_owned: ClassVar[bool] = True

    name = "reflexion"

    def __init__(self, max_reflections: int | None = None) -> None:
        #: None: take the run's ``max_reflections`` option (default 3).
        self.max_reflections = max_reflections
        self._react = ReAct()

    def init(self, state: State) -> None:
        wanted = self.max_reflections
        if wanted is None:
            wanted = state.config.max_reflections
        limit = max(0, min(wanted, MAX_REFLECTIONS_CAP))
        state.mode_state = {"reflections": 0, "max_reflections": limit}

    def on_user_turn(self, state: State) -> None:
        """The critique budget is per user turn: a follow-up request gets its own critiques."""
        state.mode_state["reflections"] = 0

    async def iterate(self, state: State) -> Continue | Halt:
        outcome = await self._react.iterate(state)
        ms = state.mode_state
        if isinstance(outcome, Halt) or ms["reflections"] >= ms["max_reflections"]:
            return outcome
        prompt = Message.user(REFLECTION_PROMPT)
        cap = CRITIQUE_MAX_TOKENS
        while True:
            request = build_request(
                state,
                [*state.messages, prompt],
                purpose="reflect",
                with_tools=False,
                max_tokens=cap,
            )
            try:
                response, streamed = await call_provider(state, request)
            except ProviderError as exc:
                state.emit(RunWarning(f"reflection skipped: {exc}", "reflexion"))
                return outcome
            starved = starved_info(request, response)
            if starved is None:
                break
            if cap != CRITIQUE_MAX_TOKENS:  # starved twice: give up on this critique
                state.emit(
                    RunWarning(f"reflection skipped: starved again ({starved})", "reflexion")
                )
                return outcome
            # The short critique is the turn most exposed to starvation: one retry, 4x the cap.
            new_cap = min(cap * 4, headroom_target(state, cap))
            if new_cap <= cap:
                state.emit(RunWarning(f"reflection skipped: starved ({starved})", "reflexion"))
                return outcome
            state.emit(MaxTokensEscalation(cap, new_cap, starved["output_tokens"],
                                           starved["reasoning_tokens"]))  # fmt: skip
            cap = new_cap
        state.messages.append(prompt)
        state.messages.append(Message.assistant(response.text, None, response.thinking))
        if not streamed:
            emit_text(state, response, "reflect")
        ms["reflections"] += 1
        return outcome
