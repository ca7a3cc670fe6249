"""The library's one bridge from synchronous code to a coroutine: :func:`run_sync`.

``harness.run``, :func:`harness.grading.grade` and the other synchronous entry points call their
``a``-prefixed coroutine through it. Outside an event loop it runs the coroutine with
:func:`asyncio.run`. Inside one it refuses, naming the coroutine to await instead: blocking a
running loop (or hiding the coroutine on a thread of its own, with its own loop, where the
caller's transports and locks do not work) would stall every other task on it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from harness.errors import HarnessError

__all__ = ["run_sync"]

T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T], *, called: str, instead: str) -> T:
    """Run ``coro`` to the end and return its value. ``called`` names the synchronous function
    (``"harness.run()"``), ``instead`` what to await in a running loop
    (``"await harness.arun(...)"``): the message when this thread already runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    coro.close()
    raise HarnessError(f"{called} was called inside a running event loop; use `{instead}`")
