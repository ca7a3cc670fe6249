"""A plug-in exception whose ``__str__`` raises, after cancelling the run's task or not
(issue 34, adversary round 19, part A).

Round 18 made a plug-in exception's text under the pending-cancel mark (``told``,
``harness/kernel/_told.py``), but only when making it returned: a ``__str__`` that cancelled
the run's task and then raised left the cancel pending, and ``harness.run`` raised
``CancelledError`` (a provider's ``ValueError``; a ``GeneratorExit`` or ``CancelledError`` of
any plug-in's); and a provider's crash whose ``__str__`` raised ended the run naming the
``__str__``'s own error (``ValueError: str boom``), not the provider's crash."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from conftest import Answers

import harness
from harness.modes import ReAct
from harness.providers import MockProvider


def _failing(base: type[BaseException], cancel: bool) -> type[Exception]:
    class Failing(Exception):
        def __str__(self) -> str:
            if cancel:
                task = asyncio.current_task()
                assert task is not None
                task.cancel()
            raise base("str boom")

    return Failing


class _Raising(Answers):
    def __init__(self, exc: BaseException) -> None:
        super().__init__(None)
        self.exc = exc

    async def complete(self, request: Any, on_delta: Any = None) -> Any:
        raise self.exc


def _run(where: str, exc: BaseException) -> harness.Result:
    @harness.tool
    async def crashing(x: str) -> str:
        """Raises."""
        raise exc

    def hook(payload: Any, ctx: Any = None) -> Any:
        raise exc

    def ask(*args: Any) -> Any:
        raise exc

    if where == "provider":
        return harness.run("hi", provider=_Raising(exc))
    call = {"tool_calls": [{"name": "crashing", "arguments": {"x": "y"}}]}
    provider = MockProvider(turns=[call, {"text": "done"}])
    extra: dict[str, Any] = {}
    if where == "hook":
        extra["hooks"] = {"PreToolUse": [hook]}
    elif where == "can_use_tool":
        extra["can_use_tool"] = ask
    return harness.run("hi", tools=[crashing], provider=provider, **extra)


def test_a_providers_crash_whose_message_raises_is_the_providers() -> None:
    result = _run("provider", _failing(ValueError, cancel=False)())
    assert result.halted_reason == (  # "ValueError: str boom" before
        "unknown: provider crashed: Failing (its message could not be read)"
    )


def test_a_providers_crash_whose_message_cancels_then_raises_is_named() -> None:
    result = _run("provider", _failing(ValueError, cancel=True)())  # raised CancelledError
    assert result.halted_reason == (
        "unknown: provider crashed: Failing (its message cancelled its run's task)"
    )


_NAMED = {
    "provider": "unknown: provider crashed: {}",
    "hook": "hook_crashed: PreToolUse: {}",
    "can_use_tool": "can_use_tool crashed: {}",
}


@pytest.mark.parametrize("cancel", [False, True])
@pytest.mark.parametrize("where", ["provider", "tool", "hook", "can_use_tool"])
@pytest.mark.parametrize("base", [GeneratorExit, asyncio.CancelledError])
def test_a_message_raising_a_base_exception_is_one_that_could_not_be_read(
    where: str, base: type[BaseException], cancel: bool
) -> None:
    # Before: with the cancel, harness.run raised CancelledError; without it, the run ended
    # naming what the __str__ raised (a tool's crash was not told to the model).
    result = _run(where, _failing(base, cancel)())
    said = (
        "Failing (its message cancelled its run's task)"
        if cancel
        else ("Failing (its message could not be read)")
    )
    if where == "tool":
        assert result.text == "done", result.halted_reason
        assert [m.content for m in result.messages if m.role == "tool"] == [
            f"error: tool crashed: {said}"
        ]
    else:
        assert result.halted_reason == _NAMED[where].format(said)


@pytest.mark.parametrize("cancel", [False, True])
@pytest.mark.parametrize("where", ["init", "iterate"])
def test_a_modes_crash_whose_message_raises_generator_exit_is_named(
    where: str, cancel: bool
) -> None:
    failing = _failing(GeneratorExit, cancel)

    class Crashing(ReAct):
        name = "crashing"

        def init(self, state: Any) -> Any:
            if where == "init":
                raise failing()
            return super().init(state)

        async def iterate(self, state: Any) -> Any:
            raise failing()

    provider = MockProvider(turns=[{"text": "done"}])
    result = harness.run("hi", provider=provider, mode=Crashing())
    # Before: "internal error: GeneratorExit: str boom" and a traceback on the terminal;
    # with the cancel, harness.run raised CancelledError.
    said = (
        "Failing (its message cancelled its run's task)"
        if cancel
        else ("Failing (its message could not be read)")
    )
    expected = f"mode 'crashing': init raised {said}" if where == "init" else said
    assert result.halted_reason == expected
