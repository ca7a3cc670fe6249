"""A cancel of the run's task that no caller of ``harness.run`` asked for (issue 34, the lead
after round 19).

Rounds 14 to 19 found, one path at a time, plug-in code that cancelled the run's task where
no guard of the kernel's looked: ``harness.run`` raised a bare ``CancelledError``. Its caller
cannot have asked for that cancel (the synchronous entry points run their own event loop, and
Ctrl-C reaches them as ``KeyboardInterrupt``), so the synchronous entry points now return the
run's own Result (``error_halted``, its ``Done`` emitted) instead. ``harness.arun`` still
raises it: its caller may have asked. The first test fails on f4a3ed4."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import harness
from harness.providers import MockProvider


async def _cancel_the_others(x: str) -> str:
    """Cancels every task but its own: the run's among them, from a task of the tool's."""
    me = asyncio.current_task()
    for task in asyncio.all_tasks():
        if task is not me:
            task.cancel()
    return "ok"


def _provider() -> MockProvider:
    call = {"tool_calls": [{"name": "_cancel_the_others", "arguments": {"x": "y"}}]}
    return MockProvider(turns=[call, {"text": "done"}])


def test_harness_run_ends_with_its_result_when_a_plug_in_cancels_its_task() -> None:
    events: list[str] = []
    result = harness.run(  # raised CancelledError before
        "hi",
        tools=[harness.tool(_cancel_the_others)],
        provider=_provider(),
        on_event=lambda e: events.append(type(e).__name__),
    )
    assert result.finish_reason == "error_halted"
    assert result.halted_reason == "cancelled: CancelledError"
    assert events[-1] == "Done"  # the run was closed, as for any cancel


def test_arun_still_raises_the_cancel_for_its_caller() -> None:
    async def main() -> None:
        await harness.arun("hi", tools=[harness.tool(_cancel_the_others)], provider=_provider())

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(main())


_SLOW = """
import asyncio, sys, harness
from harness.providers import MockProvider

async def slow(x: str) -> str:
    '''Sleeps.'''
    print("started", flush=True)
    await asyncio.sleep(60)
    return "late"

call = {"tool_calls": [{"name": "slow", "arguments": {"x": "y"}}]}
try:
    harness.run("hi", tools=[harness.tool(slow)], provider=MockProvider(turns=[call]),
                tool_timeout_s=120)
except KeyboardInterrupt:
    print("KeyboardInterrupt", flush=True)
    sys.exit(130)
print("returned", flush=True)
"""


@pytest.mark.timeout(60)
def test_ctrl_c_still_reaches_the_caller_of_harness_run_as_keyboard_interrupt(
    tmp_path: Path,
) -> None:
    script = tmp_path / "slow.py"
    script.write_text(_SLOW, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    with subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=env
    ) as child:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "started"
        time.sleep(0.2)
        child.send_signal(signal.SIGINT)
        out, _ = child.communicate(timeout=30)
    assert out.strip() == "KeyboardInterrupt"
    assert child.returncode == 130
