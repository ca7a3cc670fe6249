"""Plug-in code that cancels the run's task and then raises a ``BaseException`` (issue 34,
adversary round 19, part A).

Round 18 read a plug-in's values once, in a guard that undoes the plug-in's cancel of the
run's task (a tool's value and its ``HaltRun``/``Submit``/``ToolOutput`` fields, its
``read_only``, a provider's ``Response``, a mode's ``Halt``); each guard caught ``Exception``
only, so code that cancelled the run's task and then raised ``GeneratorExit`` or
``CancelledError`` left the cancel pending: ``harness.run`` raised ``CancelledError``. Without
the cancel, a mode's ``Halt`` whose ``reason`` raised ``GeneratorExit`` was the harness's
``internal error`` with a traceback on the terminal. An ``on_event`` subscriber's exception
was named with its own ``__str__`` outside any guard: one that raised ended the run naming the
``__str__``'s error; one that cancelled the run's task (then raised) left ``harness.run`` as
``CancelledError``."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from conftest import Answers, calling_plain, plain

import harness
from harness.core._terminations import FinishReason
from harness.kernel import Halt
from harness.modes import ReAct
from harness.providers import MockProvider
from harness.tools import ToolOutput

_BASES = [GeneratorExit, asyncio.CancelledError]


def _boom(base: type[BaseException], cancel: bool) -> None:
    if cancel:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()
    raise base("boom")


class _Armed:
    """What the plug-ins below raise, once armed (after they were made)."""

    base: type[BaseException] = GeneratorExit
    cancel = True
    field = ""


def _reading(field: str) -> Any:
    def __getattribute__(self: Any, name: str) -> Any:
        if name == field and _Armed.field == field:
            _boom(_Armed.base, _Armed.cancel)
        return object.__getattribute__(self, name)

    return __getattribute__


class _Value:
    def __str__(self) -> str:
        _boom(_Armed.base, _Armed.cancel)
        return "never"


_Halting = type("_Halting", (harness.HaltRun,), {"__getattribute__": _reading("reason")})
_Submitting = type("_Submitting", (harness.Submit,), {"__getattribute__": _reading("deliverable")})
_Output = type("_Output", (ToolOutput,), {"__getattribute__": _reading("content")})
_MAKE: dict[str, Callable[[], object]] = {
    "value": _Value,
    "halt-run": lambda: _Halting("x"),
    "submit": lambda: _Submitting("x"),
    "tool-output": lambda: _Output("x"),
}
_FIELD = {"halt-run": "reason", "submit": "deliverable", "tool-output": "content"}


def _call(name: str, arguments: dict[str, Any]) -> MockProvider:
    call = {"tool_calls": [{"name": name, "arguments": arguments}]}
    return MockProvider(turns=[call, {"text": "d"}])


_STAGE = {"tool-output": "its ToolOutput cannot be taken"}


@pytest.mark.parametrize("cancel", [False, True])
@pytest.mark.parametrize("base", _BASES)
@pytest.mark.parametrize("kind", sorted(_MAKE))
def test_a_tools_value_raising_or_cancelling_is_its_crash_told_to_the_model(
    kind: str, base: type[BaseException], cancel: bool
) -> None:
    @harness.tool
    async def answer(x: str) -> object:
        """Answers a hostile value."""
        value = _MAKE[kind]()
        _Armed.base, _Armed.cancel, _Armed.field = base, cancel, _FIELD.get(kind, "")
        return value

    try:
        result = harness.run("hi", tools=[answer], provider=_call("answer", {"x": "y"}))
    finally:
        _Armed.field = ""
    # raised CancelledError before round 19 A; then, until the lead's stop 46, the raised
    # BaseException ended the run (error_during_execution): reading a tool's value goes
    # through the one guard now (``ran``), whose rule is the same for every plug-in's code:
    # what it raised is its crash, told to the model, and a cancel of the run's task is
    # named for that, whatever it raised after.
    assert result.finish_reason == "stop", result.halted_reason
    why = "CancelledError: it cancelled its run's task" if cancel else f"{base.__name__}: boom"
    stage = _STAGE.get(kind, "its result cannot be shown as text")
    told = [m.content for m in result.messages if m.role == "tool"]
    assert told == [f"error: tool crashed: {stage}: {why}"]


class _Flagged:
    name = "flagged"
    description = "A tool whose read_only raises from its third reading."
    parallel_safe = False

    def __init__(self, base: type[BaseException]) -> None:
        self.base, self.reads = base, 0
        self.parameters: dict[str, Any] = {"type": "object", "properties": {}}

    @property
    def read_only(self) -> bool:
        self.reads += 1
        if self.reads > 2:  # setup reads it twice
            _boom(self.base, True)
        return False

    async def run(self, args: Any, ctx: Any) -> str:
        return "ok"


@pytest.mark.parametrize("base", _BASES)
def test_a_tools_flag_cancelling_then_raising_ends_the_run_named(base: type[BaseException]) -> None:
    result = harness.run("hi", tools=[_Flagged(base)], provider=_call("flagged", {}))
    # harness.run raised CancelledError before; the flag is read as a plug-in's call (the
    # lead's, after round 19 A: the cancel it made is named with the tool)
    assert result.halted_reason == (
        "ToolSafetyNet: tool 'flagged': its read_only cannot be read: CancelledError: it "
        "cancelled its run's task"
    )


@pytest.mark.parametrize("cancel", [False, True])
@pytest.mark.parametrize("base", _BASES)
def test_a_providers_response_cancelling_then_raising_ends_the_run_named(
    base: type[BaseException], cancel: bool
) -> None:
    reading = type("_Reading", (harness.Response,), {"__getattribute__": _reading("cost_usd")})
    answer = reading(text="x")
    _Armed.base, _Armed.cancel, _Armed.field = base, cancel, "cost_usd"
    try:
        result = harness.run("hi", provider=Answers(answer))
    finally:
        _Armed.field = ""
    # raised CancelledError before round 19 A; then the raised BaseException ended the run by
    # the loop's rule; read through the one guard (``ran``, stop 46), it is the provider's
    # invalid response, named, a cancel of the run's task named for that
    why = "that, read, cancelled its run's task"
    if not cancel:
        why = f"whose fields cannot be read: {base.__name__}: boom"
    assert result.halted_reason == f"invalid_response: the provider answered a Response {why}"


@pytest.mark.parametrize("cancel", [False, True])
@pytest.mark.parametrize("base", _BASES)
def test_a_modes_halt_whose_reason_raises_is_the_modes_failure(
    base: type[BaseException], cancel: bool
) -> None:
    halting = type("_ModeHalt", (Halt,), {"__getattribute__": _reading("reason")})

    class Answering(ReAct):
        name = "answering"

        async def iterate(self, state: Any) -> Any:
            answer = halting(FinishReason.STOP)
            _Armed.base, _Armed.cancel, _Armed.field = base, cancel, "reason"
            return answer

    try:
        result = harness.run("hi", tools=[plain], provider=calling_plain(), mode=Answering())
    finally:
        _Armed.field = ""
    # Before: "internal error: GeneratorExit: boom" and a traceback; with the cancel, raised.
    # A cancel of the run's task is named for that, whatever it raised after (stop 46).
    why = (
        "that, read, cancelled its run's task"
        if cancel
        else f"that cannot be read ({base.__name__}: boom)"
    )
    assert result.halted_reason == (
        f"mode 'answering' returned a _ModeHalt {why}; expected Continue() or Halt()"
    )


class _UnreadableError(Exception):
    def __init__(self, base: type[BaseException], cancel: bool) -> None:
        super().__init__()
        self.base, self.cancel = base, cancel

    def __str__(self) -> str:
        _boom(self.base, self.cancel)
        return "never"


@pytest.mark.parametrize("base", [ValueError, *_BASES])
def test_an_on_event_error_whose_message_raises_is_named(base: type[BaseException]) -> None:
    def subscriber(event: object) -> None:
        if type(event).__name__ == "ToolCallEvent":
            raise _UnreadableError(base, cancel=False)

    result = harness.run("hi", tools=[plain], provider=calling_plain(), on_event=subscriber)
    assert result.finish_reason == "error_halted"  # the __str__'s error before
    said = "on_event raised _UnreadableError (its message could not be read)"
    assert result.halted_reason == said


@pytest.mark.parametrize("how", ["message", "raised"])
@pytest.mark.parametrize("base", _BASES)
def test_an_on_event_subscriber_cancelling_then_raising_is_named(
    base: type[BaseException], how: str
) -> None:
    def subscriber(event: object) -> None:
        if type(event).__name__ == "ToolCallEvent":
            if how == "message":
                raise _UnreadableError(base, cancel=True)
            _boom(base, True)

    result = harness.run("hi", tools=[plain], provider=calling_plain(), on_event=subscriber)
    assert result.halted_reason == "on_event cancelled the run's task"  # raised CancelledError


@pytest.mark.parametrize("base", _BASES)
def test_a_can_use_tool_answer_cancelling_then_raising_is_named(base: type[BaseException]) -> None:
    class Answer:
        __hash__ = None  # type: ignore[assignment]

        def __eq__(self, other: object) -> bool:
            _boom(base, True)
            return False

    result = harness.run(
        "hi", tools=[plain], provider=calling_plain(), can_use_tool=lambda *args: Answer()
    )
    # harness.run raised CancelledError; the lead's fix reads the answer as a plug-in's call
    assert result.halted_reason == (
        "can_use_tool crashed: its answer cannot be read: CancelledError: it cancelled its "
        "run's task"
    )
