"""The library's one bridge from synchronous code to a coroutine: :func:`run_sync`.

``harness.run``, :func:`harness.grading.grade` and the other synchronous entry points call their
``a``-prefixed coroutine through it. Outside an event loop it runs the coroutine as
:func:`asyncio.run` does, but closes the loop with :func:`close_loop`: a task that refuses its
cancellation (a plug-in's tool left behind at its timeout) is waited for :data:`CLOSE_GRACE_S`,
not for ever. Inside one it refuses, naming the coroutine to await instead: blocking a
running loop (or hiding the coroutine on a thread of its own, with its own loop, where the
caller's transports and locks do not work) would stall every other task on it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from harness.errors import HarnessError

__all__ = ["CLOSE_GRACE_S", "close_loop", "run_sync"]

T = TypeVar("T")

#: How long :func:`run_sync` waits at its end for the tasks it cancels before leaving them.
CLOSE_GRACE_S = 5.0


def run_sync(coro: Coroutine[Any, Any, T], *, called: str, instead: str) -> T:
    """Run ``coro`` to the end and return its value. ``called`` names the synchronous function
    (``"harness.run()"``), ``instead`` what to await in a running loop
    (``"await harness.arun(...)"``): the message when this thread already runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        runner = asyncio.Runner()
        try:
            return runner.run(coro)
        finally:
            close_loop(runner.get_loop(), CLOSE_GRACE_S)
    coro.close()
    raise HarnessError(f"{called} was called inside a running event loop; use `{instead}`")


def close_loop(loop: asyncio.AbstractEventLoop, grace_s: float) -> None:
    """What ``asyncio.run`` does at its end, but never waiting on a task that refuses to be
    cancelled for more than ``grace_s`` (then it is left behind). ``asyncio.run`` waited for
    ever: a tool swallowing its cancellation held ``harness.run`` after its run had ended."""
    try:
        tasks = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in tasks:
            task.cancel()
        if tasks:
            loop.run_until_complete(asyncio.wait(tasks, timeout=grace_s))
        for task in tasks:
            task._log_destroy_pending = False  # type: ignore[attr-defined]
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
    finally:
        asyncio.set_event_loop(None)
        loop.close()
