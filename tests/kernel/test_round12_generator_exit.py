"""One rule for what a tool or a mode raises that is not an ``Exception`` (issue 34, round 12).

A tool's or a mode's ``GeneratorExit`` or ``BaseException`` of its own ends its run with
``error_during_execution`` naming it, through ``harness.run`` as through ``harness run`` (an
error cell there, as round 7 decided for a ``BaseException`` of its own); ``KeyboardInterrupt``
stops as Ctrl-C and ``SystemExit`` and a cancellation pass through, as before.

Before: a plain function's ``GeneratorExit`` came back from its worker thread's future, which
asyncio *throws* into the awaiting coroutine, and a thrown ``GeneratorExit`` closes the whole
chain of coroutines: a traceback out of ``harness.run``; through ``harness run`` it ended the
executor (``the executor 'local' raised GeneratorExit``) and every cell after it. An async
tool's or a mode's was taken for the run's coroutine being closed, with the same ending. A run
whose coroutine really is closed still lets the ``GeneratorExit`` through, unhandled.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

import harness
from harness.modes import ReAct
from harness.providers import MockProvider


class Boom(BaseException):
    pass


@harness.tool
def sync_exit(x: str) -> str:
    """Raises GeneratorExit."""
    raise GeneratorExit("sync")


@harness.tool
async def async_exit(x: str) -> str:
    """Raises GeneratorExit."""
    raise GeneratorExit("async")


@harness.tool
def sync_boom(x: str) -> str:
    """Raises a BaseException of its own."""
    raise Boom("sync")


@harness.tool
async def async_boom(x: str) -> str:
    """Raises a BaseException of its own."""
    raise Boom("async")


def _calling(name: str) -> MockProvider:
    return MockProvider(
        turns=[{"tool_calls": [{"name": name, "arguments": {"x": "y"}}]}, {"text": "done"}]
    )


@pytest.mark.parametrize(
    ("tool", "said"),
    [
        (sync_exit, "GeneratorExit: sync"),
        (async_exit, "GeneratorExit: async"),
        (sync_boom, "Boom: sync"),
        (async_boom, "Boom: async"),
    ],
    ids=["sync-GeneratorExit", "async-GeneratorExit", "sync-own", "async-own"],
)
def test_a_tool_raising_what_is_not_an_exception_ends_its_run_as_an_error(
    tool: harness.Tool, said: str
) -> None:
    result = harness.run("hi", tools=[tool], provider=_calling(tool.name))
    assert result.finish_reason == "error_during_execution"
    assert said in (result.halted_reason or "")


class ExitingMode:
    name = "exiting"

    def init(self, state: object) -> None:
        pass

    async def iterate(self, state: object) -> object:
        raise GeneratorExit("mode")


def test_a_mode_raising_generator_exit_ends_its_run_as_an_error() -> None:
    result = harness.run("hi", mode=ExitingMode(), provider=MockProvider(turns=[{"text": "x"}]))
    assert result.finish_reason == "error_during_execution"
    assert "GeneratorExit: mode" in (result.halted_reason or "")


async def test_a_run_whose_coroutine_is_closed_lets_generator_exit_through(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Closing a run's coroutine (a task collected while pending) is no plug-in's fault: the
    run is not halted as an error, nothing is logged, and ``close()`` returns."""
    started = asyncio.Event()

    @harness.tool
    async def waiting(x: str) -> str:
        """Waits for ever."""
        started.set()
        await asyncio.Future()
        return ""

    run = harness.arun("hi", tools=[waiting], provider=_calling("waiting"))
    task = asyncio.ensure_future(run)
    await started.wait()
    with caplog.at_level(logging.ERROR, logger="harness"):
        run.close()  # raises RuntimeError("coroutine ignored GeneratorExit") if handled
    assert [r.getMessage() for r in caplog.records] == []  # "internal error" if taken as raised
    task.cancel()
    with pytest.raises(RuntimeError, match="cannot reuse already awaited coroutine"):
        await task


def _raise_in_thread() -> None:
    raise GeneratorExit("thread")


class OwnReAct(ReAct):
    """A user's subclass of a built-in mode: its code is its own, so it is isolated."""

    async def iterate(self, state: Any) -> Any:
        await asyncio.to_thread(_raise_in_thread)
        return await super().iterate(state)


def test_a_users_subclass_of_a_built_in_mode_is_not_taken_for_the_harnesss_own() -> None:
    from harness.kernel._isolated import owned

    assert owned(ReAct())
    assert not owned(OwnReAct())
    result = harness.run("hi", mode=OwnReAct(), provider=MockProvider(turns=[{"text": "x"}]))
    assert result.finish_reason == "error_during_execution"
    assert "GeneratorExit: thread" in (result.halted_reason or "")


class ThreadedProvider(MockProvider):
    """A provider plug-in whose call awaits a thread that raises GeneratorExit."""

    async def complete(self, request: Any, on_delta: Any = None) -> Any:
        await asyncio.to_thread(_raise_in_thread)
        return await super().complete(request, on_delta)


def test_a_provider_plug_in_awaiting_a_generator_exit_ends_its_run_as_an_error() -> None:
    """The kernel awaits a provider that is not the harness's own in a task of its own too."""
    result = harness.run("hi", provider=ThreadedProvider(turns=[{"text": "x"}]))
    assert result.finish_reason == "error_during_execution"
    assert "GeneratorExit: thread" in (result.halted_reason or "")
