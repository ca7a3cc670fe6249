"""An async hook (or ``can_use_tool``, or a tool) answering a coroutine it forgot to await
(round 18, the lead): the run named it (``unsupported return value <coroutine ...>``, an
address the model saw for a tool's or ``can_use_tool``'s) and Python then printed
``RuntimeWarning: coroutine '...' was never awaited`` on the terminal when the coroutine was
collected. The harness closes the coroutine it will not run and names it without an
address."""

from __future__ import annotations

import gc
import warnings

import pytest
from conftest import answered, call, mock, text, tool_turn

import harness


async def _later() -> None:
    return None


async def _hook_answer() -> object:
    return _later()  # the coroutine, not awaited


def test_a_coroutine_answer_is_named_and_closed_without_a_warning() -> None:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = answered("UserPromptSubmit", _hook_answer)
        gc.collect()
    assert (result.halted_reason or "").startswith(
        "hook_crashed: UserPromptSubmit: unsupported return value <coroutine object _later"
    ), result.halted_reason
    assert [str(w.message) for w in seen if "never awaited" in str(w.message)] == []


def _tool_messages(result: harness.Result) -> list[str]:
    return [m.content for m in result.messages if m.role == "tool"]


async def _permission(name: str, args: dict[str, object], ctx: object = None) -> object:
    return _later()  # the coroutine, not awaited


@harness.tool
async def forgetful(x: str) -> object:
    """Answers a coroutine it forgot to await."""
    return _later()


@pytest.mark.parametrize("who", ["can_use_tool", "tool"])
def test_a_can_use_tool_or_tool_answering_a_coroutine_is_told_without_an_address(
    who: str,
) -> None:
    """The model was told ``<coroutine object _later at 0x7f...>`` (a memory address: a replay
    of the same run told it otherwise) and the terminal got the "never awaited" warning."""
    if who == "tool":
        turns = [tool_turn(call("forgetful", x="1")), text("ok")]
        opts: dict[str, object] = {"tools": [forgetful]}
        said = "error: tool crashed: its result cannot be shown as text: TypeError: it is a "
        said += "coroutine the tool did not await"
    else:
        turns = [tool_turn(call("calculator", expression="1+1")), text("ok")]
        opts = {"tools": ["calculator"], "can_use_tool": _permission}
        said = "permission denied: can_use_tool returned a coroutine it did not await"
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = harness.run("hi", provider=mock(*turns), **opts)  # type: ignore[arg-type]
        gc.collect()
    assert _tool_messages(result) == [said]
    assert [str(w.message) for w in seen if "never awaited" in str(w.message)] == []
