"""Halt carries the reason a mode ends the run with: ``state.halt(...)`` records it and returns the
matching Halt, ``Halt(reason)`` alone is enough, and a bare ``Halt()`` keeps the old meaning."""

from __future__ import annotations

import harness
from harness import Continue, FinishReason, Halt
from harness.kernel._state import State
from harness.modes._base import Halt as HaltFromModes


class Returns:
    """Halts at once with a fixed outcome, optionally after setting state.finish_reason."""

    name = "returns"

    def __init__(self, outcome: Halt, preset: FinishReason | None = None) -> None:
        self.outcome = outcome
        self.preset = preset

    def init(self, state: State) -> None:
        return None

    async def iterate(self, state: State) -> Continue | Halt:
        if self.preset is not None:
            state.finish_reason = self.preset
        return self.outcome


def test_the_old_import_path_gives_the_same_class() -> None:
    assert HaltFromModes is Halt


def test_a_halt_with_a_reason_ends_the_run_with_it() -> None:
    result = harness.run("q", provider="mock", mode=Returns(Halt(FinishReason.ERROR_HALTED)))
    assert result.finish_reason is FinishReason.ERROR_HALTED


def test_a_bare_halt_ends_with_the_state_reason_or_stop() -> None:
    assert harness.run("q", provider="mock", mode=Returns(Halt())).finish_reason is (
        FinishReason.STOP
    )
    preset = Returns(Halt(), preset=FinishReason.ERROR_MAX_TURNS)
    assert harness.run("q", provider="mock", mode=preset).finish_reason is (
        FinishReason.ERROR_MAX_TURNS
    )


def test_state_halt_records_the_reason_and_returns_the_matching_halt() -> None:
    from harness.api import build_state
    from harness.kernel._options import parse_options

    state, _ = build_state("q", parse_options({"provider": "mock"}))
    state.ctx.workspace.cleanup()
    halt = state.halt(FinishReason.SUBMITTED, "why")
    assert halt == Halt(FinishReason.SUBMITTED)
    assert (state.finish_reason, state.halted_reason) == (FinishReason.SUBMITTED, "why")
