"""The run option progress_check holds the no-progress check equal across modes."""

from __future__ import annotations

from typing import Any

import pytest

import harness
from harness.errors import ConfigError
from harness.providers._mock import MockProvider

# The same call, result and text every turn. The strict check (ReAct's: a changed fingerprint, or
# text that differs from the last) sees no progress; the lax one (any text at all) always does.
SAME_TEXT = {
    "text": "Let me look again.",
    "tool_calls": [{"name": "calculator", "arguments": {"expression": "1+1"}}],
}


def run(mode: str, **options: Any) -> harness.Result:
    provider = MockProvider([SAME_TEXT], when_exhausted="repeat_last")
    return harness.run("q", provider=provider, mode=mode, tools=["calculator"],
                       max_iterations=12, **options)  # fmt: skip


def test_mode_default_is_exathena_react_strict_others_lax() -> None:
    # ReAct: the repeated text is not progress -> no-progress ends it.
    assert run("react").finish_reason == "error_no_progress"
    # Plan-and-Solve's lax check counts any text as progress, so it spins until max_iterations.
    assert run("plan_and_solve").finish_reason == "error_max_turns"


@pytest.mark.parametrize("mode", ["react", "plan_and_solve", "reflexion"])
def test_strict_and_lax_hold_every_mode_equal(mode: str) -> None:
    assert run(mode, progress_check="strict").finish_reason == "error_no_progress"
    assert run(mode, progress_check="lax").finish_reason == "error_max_turns"


def test_a_bad_value_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="progress_check"):
        run("react", progress_check="sometimes")
