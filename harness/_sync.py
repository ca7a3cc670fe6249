"""The library's one bridge from synchronous code to a coroutine: :func:`run_sync`.

``harness.run``, :func:`harness.grading.grade` and the other synchronous entry points call their
``a``-prefixed coroutine through it. Outside an event loop it runs the coroutine as
:func:`asyncio.run` does, but closes the loop with :func:`close_loop`: a task that refuses its
cancellation (a plug-in's tool left behind at its timeout) is waited for :data:`CLOSE_GRACE_S`,
not for ever. Inside one it refuses, naming the coroutine to await instead: blocking a
running loop (or hiding the coroutine on a thread of its own, with its own loop, where the
caller's transports and locks do not work) would stall every other task on it.

:func:`in_thread` is the other bridge, from a coroutine to a plug-in's blocking function (a tool
made from a plain function, a slow grader's ``evaluate``): a daemon thread of its own, never the
loop's default executor, whose threads the loop's closing and the interpreter's exit both wait
for.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import contextvars
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from harness.errors import HarnessError

__all__ = ["CLOSE_GRACE_S", "close_loop", "in_thread", "parse_python", "run_sync"]

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
        _join_default_executor(loop, grace_s)
    finally:
        asyncio.set_event_loop(None)
        loop.close()


def _join_default_executor(loop: asyncio.AbstractEventLoop, grace_s: float) -> None:
    """``loop.shutdown_default_executor()``, but waiting at most ``grace_s`` for its threads.
    An async tool's ``await asyncio.to_thread(f)`` runs ``f`` there; at the tool's timeout the
    tool is cancelled and ``f`` runs on, and Python 3.11's ``shutdown_default_executor`` joins
    it without a limit: ``harness.run`` never returned, ``harness run`` never printed its
    summary and ignored SIGTERM (adversary round 16, part A). ``loop.close()`` then shuts the
    executor down without waiting."""
    executor = getattr(loop, "_default_executor", None)  # asyncio's own, since Python 3.4
    if executor is None:
        return
    joiner = threading.Thread(
        target=executor.shutdown, name="harness-executor-shutdown", daemon=True
    )
    joiner.start()
    joiner.join(grace_s)


async def in_thread(fn: Callable[..., T], /, *args: Any, name: str | None = None) -> T:
    """``fn(*args)`` on a daemon thread of its own (in a copy of the caller's context), awaited:
    :func:`asyncio.to_thread` without the loop's default executor. A plug-in's plain function
    that never returns (``while True: time.sleep(1)``) is told timed out and left running; on
    the default executor it held ``harness.run`` at its end until it returned, and ``harness
    run`` for ever with its cells stored, a SIGTERM included: the loop's closing and the
    interpreter's exit join that executor's threads (adversary round 14, part A). What ``fn``
    raises is raised here; its answer after the awaiting stopped is dropped."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    context = contextvars.copy_context()

    def settle(ok: bool, value: Any) -> None:
        if future.done():  # the awaiting stopped (a timeout, a cancel): nobody takes it
            return
        if ok:
            future.set_result(value)
        elif isinstance(value, StopIteration):  # a future refuses it (TypeError): it hung
            error = RuntimeError(f"{name} raised StopIteration")  # (its str may raise too)
            error.__cause__ = value
            future.set_exception(error)
        else:
            future.set_exception(value)

    def work() -> None:
        try:
            outcome: tuple[bool, Any] = (True, context.run(fn, *args))
        except BaseException as exc:  # carried to the awaiting frame, as to_thread does
            outcome = (False, exc)
        with contextlib.suppress(RuntimeError):  # its loop is closed: its run has ended
            loop.call_soon_threadsafe(settle, *outcome)

    name = name or getattr(fn, "__name__", "call")
    threading.Thread(target=work, name=f"harness-{name}", daemon=True).start()
    return await future


#: One ``ast.parse`` at a time in the process. CPython 3.11's conversion of a parse to Python
#: objects keeps its recursion depth per interpreter, not per thread: two threads converting
#: at once (a finalizer the collector runs inside one lets the other in) raised
#: ``SystemError: AST constructor recursion depth mismatch``. A humaneval grading read on a
#: thread under load ended as a grader error so (stop 48, a CI run).
_PARSING = threading.RLock()


def parse_python(source: str, mode: str = "exec") -> ast.AST:
    """``ast.parse(source, mode=mode)``, one at a time in the process (see :data:`_PARSING`)."""
    with _PARSING:
        return ast.parse(source, mode=mode)
