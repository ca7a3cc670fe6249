"""The no-progress fingerprint reads a tool's output in linear time (stop 48).

Each iteration's tool results are normalised before they are hashed (times, pids and
temporary paths replaced). The pid pattern's ``\\s*[:=#]?\\s*`` split a run of spaces every
way before it gave up: a tool's output of ``1 pid`` and 40,000 spaces (what a model can print
with one shell command) held the run's event loop for 31 s, 20,000 for 7 s."""

from __future__ import annotations

import pytest

import harness
from harness import FinishReason, tool
from harness.kernel._progress import normalise_output
from harness.providers._mock import MockProvider

SPACES = "1 pid" + " " * 100_000 + "x"  # minutes before (a digit: the text is normalised)


@tool
def spaces() -> str:
    """Prints a hostile line."""
    return SPACES


@pytest.mark.timeout(60)
def test_a_tool_printing_pid_and_a_run_of_spaces_does_not_stall_the_run() -> None:
    turn = {"tool_calls": [{"name": "spaces", "arguments": {}}]}
    provider = MockProvider([turn, {"text": "done"}])
    result = harness.run("go", provider=provider, tools=[spaces], max_iterations=5)
    assert result.finish_reason is FinishReason.STOP
    assert result.text == "done"  # the tool ran, its output was fingerprinted, the model answered


@pytest.mark.timeout(60)
@pytest.mark.parametrize("sep", ["", ":", " = ", "#\t"])
def test_pids_after_long_runs_of_spaces_are_still_replaced(sep: str) -> None:
    assert normalise_output(f"pid{' ' * 50_000}{sep}4321 left") == (
        f"pid{' ' * 50_000}{sep}<pid> left"
    )
    assert normalise_output(SPACES) == SPACES
