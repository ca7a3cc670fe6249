"""A ``GeneratorExit`` that reaches a plug-in through a future (adversary round 12, part C).

asyncio throws a future's exception into the awaiting task's outermost coroutine, and a thrown
``GeneratorExit`` closes the whole chain of coroutines instead of travelling up as a raised one
does. Round 12's fix carried a plain function's back from its thread, but an async tool that
awaits ``asyncio.to_thread(f)``, ``asyncio.gather(...)`` or a task of its own whose code raised
``GeneratorExit`` still raised out of ``harness.run`` (``internal error ... GeneratorExit``
logged, a traceback), and so did a mode's ``iterate``, an async hook or permission callback,
and an approved tool run by ``harness.resume``; a ``Stop`` hook's (sync or async) and a
``BaseException`` of a hook's own too. Now the kernel awaits plug-in code in a task of its own
(:mod:`harness.kernel._isolated`): the tool's and the mode's end the run with
``error_during_execution: GeneratorExit: ...``, a hook's or a callback's is its crash.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

import harness
from harness.providers import MockProvider


class Boom(BaseException):
    pass


def _raises_generator_exit(*_: Any) -> None:
    raise GeneratorExit("thread")


async def _task_raising() -> str:
    raise GeneratorExit("task")


@harness.tool
async def via_thread(x: str) -> str:
    """Awaits a thread whose function raises GeneratorExit."""
    await asyncio.to_thread(_raises_generator_exit)
    return ""


@harness.tool
async def via_gather(x: str) -> str:
    """Awaits a gather of a coroutine raising GeneratorExit."""
    return str(await asyncio.gather(_task_raising()))


@harness.tool
async def via_task(x: str) -> str:
    """Awaits a task of its own raising GeneratorExit."""
    return await asyncio.create_task(_task_raising())


@harness.tool
def plain(x: str) -> str:
    """Answers."""
    return "ok"


def _calling(name: str) -> MockProvider:
    return MockProvider(
        turns=[{"tool_calls": [{"name": name, "arguments": {"x": "y"}}]}, {"text": "done"}]
    )


@pytest.mark.parametrize(
    ("tool", "said"),
    [(via_thread, "GeneratorExit: thread"), (via_gather, "GeneratorExit: task"),
     (via_task, "GeneratorExit: task")],
    ids=["to_thread", "gather", "task"],
)  # fmt: skip
def test_an_async_tool_awaiting_a_generator_exit_ends_its_run_as_an_error(
    tool: harness.Tool, said: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="harness"):
        result = harness.run("hi", tools=[tool], provider=_calling(tool.name))
    assert result.finish_reason == "error_during_execution"
    assert result.halted_reason == said
    assert [r.getMessage() for r in caplog.records] == []  # no "internal error"


class ThreadExitMode:
    name = "thread-exit"

    def init(self, state: object) -> None:
        pass

    async def iterate(self, state: object) -> object:
        await asyncio.to_thread(_raises_generator_exit)
        return None


def test_a_mode_awaiting_a_generator_exit_ends_its_run_as_an_error() -> None:
    result = harness.run("hi", mode=ThreadExitMode(), provider=MockProvider(turns=[{"text": "x"}]))
    assert result.finish_reason == "error_during_execution"
    assert result.halted_reason == "GeneratorExit: thread"


async def _async_hook(payload: Any, hook_id: Any) -> None:
    await asyncio.to_thread(_raises_generator_exit)


def _boom_hook(payload: Any, hook_id: Any) -> None:
    raise Boom("hook")


@pytest.mark.parametrize("event", ["SessionStart", "PreToolUse"])
@pytest.mark.parametrize(
    ("hook", "said"),
    [(_async_hook, "GeneratorExit: thread"), (_boom_hook, "Boom: hook")],
    ids=["async-ge", "own"],
)
def test_a_hook_raising_generator_exit_or_its_own_base_exception_is_its_crash(
    event: str, hook: Any, said: str
) -> None:
    result = harness.run("hi", tools=[plain], provider=_calling("plain"), hooks={event: hook})
    assert result.finish_reason == "error_halted"
    assert result.halted_reason == f"hook_crashed: {event}: {said}"


@pytest.mark.parametrize("hook", [_async_hook, _boom_hook], ids=["async-ge", "own"])
def test_a_stop_hook_raising_generator_exit_is_a_warning_not_a_traceback(hook: Any) -> None:
    warnings: list[str] = []

    def seen(event: Any) -> None:
        if isinstance(event, harness.events.RunWarning):
            warnings.append(event.message)

    result = harness.run(
        "hi", tools=[plain], provider=_calling("plain"), hooks={"Stop": hook}, on_event=seen
    )
    assert result.finish_reason == "stop"
    assert any(w.startswith("Stop hook: hook_crashed: Stop: ") for w in warnings), warnings


async def _asking(name: str, args: Any, ctx: Any) -> bool:
    await asyncio.to_thread(_raises_generator_exit)
    return True


def test_a_permission_callback_awaiting_a_generator_exit_is_its_crash() -> None:
    result = harness.run("hi", tools=[plain], provider=_calling("plain"), can_use_tool=_asking)
    assert result.finish_reason == "error_halted"
    assert result.halted_reason == "can_use_tool crashed: GeneratorExit: thread"


def test_an_approved_tool_awaiting_a_generator_exit_in_a_resume_ends_it_as_an_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    paused = harness.run(
        "hi", tools=[via_thread], provider=_calling("via_thread"), interrupt_before=["via_thread"]
    )
    assert paused.finish_reason == "interrupted"
    pending = paused.pending_tool_calls or []
    with caplog.at_level(logging.ERROR, logger="harness"):
        done = harness.resume(paused, decisions={c.id: "approve" for c in pending})
    assert done.finish_reason == "error_during_execution"
    assert done.halted_reason == "GeneratorExit: thread"
    assert [r.getMessage() for r in caplog.records] == []


async def test_a_cancelled_run_still_cancels_the_tool_it_awaits() -> None:
    """The plug-in's own task gets the run's cancel and the run ends as cancelled."""
    started, stopped = asyncio.Event(), asyncio.Event()

    @harness.tool
    async def waiting(x: str) -> str:
        """Waits for ever."""
        started.set()
        try:
            await asyncio.Future()
        finally:
            stopped.set()
        return ""

    task = asyncio.ensure_future(harness.arun("hi", tools=[waiting], provider=_calling("waiting")))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert stopped.is_set()
