"""What every mode does with a model's reply: emit its text as events, and turn a failed call
into a halt.

They live in the kernel, not in a concrete mode, so that the builtin modes and structured output
(:mod:`harness.kernel._structured`) share them without the kernel importing a mode.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.core._terminations import FinishReason
from harness.errors import ContextOverflow, ProviderError
from harness.events import Content, Thinking
from harness.kernel._state import Halt, State

if TYPE_CHECKING:
    from harness.providers._base import Response

__all__ = ["emit_text", "handle_provider_error"]


def handle_provider_error(state: State, exc: ProviderError) -> Halt:
    """Map a failed call to a termination (context overflow is raised for reactive compaction)."""
    if exc.kind == "context_length_exceeded":
        raise ContextOverflow(str(exc)) from exc
    if exc.kind == "unauthorized":
        return state.halt(FinishReason.ERROR_PROVIDER_AUTH, str(exc))
    return state.halt(FinishReason.ERROR_DURING_EXECUTION, str(exc))


def emit_text(state: State, response: Response, purpose: str = "main") -> None:
    """Emit a turn's thinking and text, unless they were streamed already."""
    if not state.subscribers:
        return
    if response.thinking:
        state.emit(Thinking(response.thinking, purpose))  # type: ignore[arg-type]
    if response.text:
        state.emit(Content(response.text, purpose))  # type: ignore[arg-type]
