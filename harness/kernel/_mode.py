"""The Mode protocol: how a strategy drives one iteration of the loop.

A mode implements ``init(state)`` (once, before the first iteration) and
``async iterate(state) -> Continue | Halt``; optionally
``productivity_signal(prev: ProgressSnapshot, state) -> bool`` replaces the kernel's default
no-progress check. A mode ends the run by returning :class:`Halt` with the reason:
``return state.halt(FinishReason.STOP)`` records the reason (and an optional detail) on the state
and returns ``Halt(FinishReason.STOP)``. A bare ``Halt()`` ends the run with
``state.finish_reason`` (``stop`` when unset). Raising :class:`ContextOverflow` asks the kernel for
reactive compaction and one retry; any other exception ends the run as ``error_during_execution``.

Conversations (``turns=``): each user turn runs until the mode halts with ``stop``; then the
kernel appends the next user message and calls the mode's optional ``on_user_turn(state)``
(sync or async) to reset per-turn state; iterate goes on as before. A mode that cannot take
follow-up turns sets the class attribute ``supports_turns = False`` (the run is refused with
ConfigError).

Per-run data belongs in ``state.mode_state``, so one mode object can serve many runs. The protocol
lives in the kernel, which drives it; the builtin modes (:mod:`harness.modes`) sit above it.
"""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from harness.core._terminations import FinishReason
from harness.errors import ContextOverflow

if TYPE_CHECKING:
    from harness.kernel._state import State

__all__ = ["ContextOverflow", "Continue", "Halt", "Mode"]


@dataclass(slots=True, frozen=True)
class Continue:
    """Keep looping (the kernel checks its caps before the next iteration)."""


@dataclass(slots=True, frozen=True)
class Halt:
    """Stop: the run ends with ``reason``; without one, with ``state.finish_reason`` (``stop`` when
    unset)."""

    reason: FinishReason | None = None


@runtime_checkable
class Mode(Protocol):
    name: str

    def init(self, state: State) -> Awaitable[None] | None: ...

    async def iterate(self, state: State) -> Continue | Halt: ...
