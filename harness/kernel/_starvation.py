"""Thinking starvation (ExAthena HEAD's A2.6): a turn that spent its whole output cap, typically
on hidden reasoning, and produced neither text nor a tool call.

Detection (:func:`check_starvation`, called by the modes right after a provider call): the text
is blank, there are no tool calls, and the finish reason is ``length`` or the output tokens
reached the cap (the request's ``max_tokens``, else 8,192). The mode raises
:class:`~harness.errors.ThinkingStarved`; the kernel (:func:`escalate`) raises the cap to
``min(cap * 4, context window - estimated prompt tokens)``, emits ``MaxTokensEscalation``, keeps
the new cap for the rest of the run and retries the iteration once. A second starvation, or no
headroom (the target is not above the cap), ends the run as ``error_thinking_starved``
(category capacity) with ``error_diagnostic = {completion_cap, output_tokens, reasoning_tokens,
escalated_cap}``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness.core._terminations import FinishReason
from harness.errors import ThinkingStarved
from harness.events import MaxTokensEscalation
from harness.kernel._compaction import _estimate, context_window
from harness.kernel._state import Continue, Halt, State

if TYPE_CHECKING:
    from harness.providers._base import Request, Response

__all__ = [
    "DEFAULT_COMPLETION_CAP",
    "check_starvation",
    "escalate",
    "headroom_target",
    "starved_info",
]

#: The cap assumed when a request sets no ``max_tokens`` (ExAthena's default).
DEFAULT_COMPLETION_CAP = 8_192


def starved_info(request: Request, response: Response) -> dict[str, int] | None:
    """``{completion_cap, output_tokens, reasoning_tokens}`` when the turn starved, else None."""
    if response.text.strip() or response.tool_calls or response.tool_call_error:
        return None
    cap = request.max_tokens or DEFAULT_COMPLETION_CAP
    usage = response.usage
    output = usage.output_tokens if usage is not None else 0
    if response.finish_reason != "length" and output < cap:
        return None
    reasoning = usage.reasoning_tokens if usage is not None else 0
    return {"completion_cap": cap, "output_tokens": output, "reasoning_tokens": reasoning}


def check_starvation(request: Request, response: Response) -> None:
    """Raise ThinkingStarved when the turn starved (see the module docs)."""
    info = starved_info(request, response)
    if info is not None:
        raise ThinkingStarved(f"thinking starved: {_numbers(info)}", info)


def headroom_target(state: State, cap: int) -> int:
    """The escalated cap: four times the cap, bounded by what the context window has left."""
    return min(cap * 4, context_window(state) - _estimate(state))


async def escalate(state: State, exc: ThinkingStarved) -> Continue | Halt:
    """Raise the cap and retry the iteration once; else end the run as error_thinking_starved."""
    info = exc.info
    cap = int(info.get("completion_cap", DEFAULT_COMPLETION_CAP))
    if state.max_tokens_override is not None:  # escalated once already: no second retry
        return _starved(state, info, state.max_tokens_override)
    target = headroom_target(state, cap)
    if target <= cap:
        return _starved(state, info, None)
    state.emit(
        MaxTokensEscalation(
            cap, target, int(info.get("output_tokens", 0)), int(info.get("reasoning_tokens", 0))
        )
    )
    state.max_tokens_override = target
    try:
        return await state.mode.iterate(state)
    except ThinkingStarved as again:
        return _starved(state, again.info, target)
    except Exception as other:  # the retry failed otherwise: as any failing iteration
        return state.halt(FinishReason.ERROR_DURING_EXECUTION, f"{type(other).__name__}: {other}")


def _starved(state: State, info: dict[str, Any], escalated: int | None) -> Halt:
    diagnostic = {
        "completion_cap": info.get("completion_cap"),
        "output_tokens": info.get("output_tokens"),
        "reasoning_tokens": info.get("reasoning_tokens"),
        "escalated_cap": escalated,
    }
    state.error_diagnostic = diagnostic
    detail = _numbers(info) + (f", escalated_cap={escalated}" if escalated else ", no headroom")
    return state.halt(
        FinishReason.ERROR_THINKING_STARVED,
        f"thinking starved: the model spent its output budget without answering ({detail})",
    )


def _numbers(info: dict[str, Any]) -> str:
    return ", ".join(
        f"{k}={info.get(k)}" for k in ("output_tokens", "reasoning_tokens", "completion_cap")
    )
