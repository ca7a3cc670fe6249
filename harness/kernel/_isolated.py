"""Await a plug-in's code (a tool, a mode's ``init`` and ``iterate``, a hook, a permission
callback) so that a ``GeneratorExit`` reaching it through a future is raised, not thrown.

asyncio hands a future's exception to the coroutine awaiting it by *throwing* it into the
task's outermost coroutine, and a thrown ``GeneratorExit`` does not travel up through the
frames as a raised one does: it closes the whole chain of coroutines (each frame gets it at its
``await`` from ``close()``), so the run's own handling never decides, and a frame that tries to
go on is ``coroutine ignored GeneratorExit``. A tool that awaits ``asyncio.to_thread(f)``,
``asyncio.gather(...)`` or a task of its own whose code raised ``GeneratorExit`` thus ended the
bench's executor (``the executor 'local' raised GeneratorExit``, every later cell unrun) and
raised out of ``harness.run`` with a traceback (adversary round 12, part C).

:func:`isolated` runs the awaitable as a task of its own that keeps whatever it raises as a
value; the awaiting frame waits with :func:`asyncio.wait` (which never throws the task's
exception) and raises it there, in the run's own frames, where the loop's rule for a plug-in's
``BaseException`` applies. A cancel of the awaiting task is passed on to the plug-in's, which
gets :data:`CANCEL_GRACE_S` to end; the awaiting task is cancelled then whatever the plug-in
did (a late answer is not taken).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import types
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, NamedTuple, TypeVar

__all__ = [
    "CANCEL_GRACE_S",
    "OWN_CANCEL",
    "Mark",
    "awaiting",
    "called",
    "cancels",
    "contained",
    "isolated",
    "outcome",
    "own",
    "own_cancel",
    "owned",
    "ran",
    "take_pending",
    "unawaited",
    "undo_own_cancel",
]

T = TypeVar("T")

#: How long a cancelled plug-in (at ``tool_timeout_s``, Ctrl-C, its run ended) is waited for
#: before it is left behind (its task keeps running; its answer is not taken).
CANCEL_GRACE_S = 2.0

#: The message of the ``CancelledError`` that names a plug-in's cancel of its run's task
#: (:func:`ran`, :func:`called`, :func:`outcome`).
OWN_CANCEL = "it cancelled its run's task"


async def _boxed(awaitable: Awaitable[Any]) -> tuple[bool, Any]:
    try:
        return True, await awaitable
    except BaseException as exc:  # kept as a value: a task's exception would be thrown
        return False, exc


async def outcome(awaitable: Awaitable[Any]) -> tuple[bool, Any]:
    """``(True, value)`` or ``(False, what it raised)`` for ``await awaitable`` run in a task of
    its own (see the module docs); only what ends the awaiting task itself (its cancel, the
    run's coroutine closed) is raised here."""
    task = asyncio.ensure_future(_boxed(awaitable))
    # Its awaiting task waits for it always: if that one is destroyed while pending (its loop
    # closed under it), asyncio says so once, not for each plug-in task inside it too.
    task._log_destroy_pending = False  # type: ignore[attr-defined]
    try:
        # asyncio.wait never throws the task's outcome (and _boxed keeps it a value anyway):
        # nothing is thrown here but this task's own cancel, or its coroutine being closed.
        await asyncio.wait({task})
    except asyncio.CancelledError:
        # Passed on to the plug-in, whose cleanup gets CANCEL_GRACE_S; then this task is
        # cancelled whatever the plug-in did. Awaited directly, a tool that swallowed its
        # cancellation held its run past tool_timeout_s for as long as it liked, and its late
        # answer reached the model as a result (adversary round 13, part A).
        task.cancel()
        await asyncio.wait({task}, timeout=CANCEL_GRACE_S)
        if _uncancelled():  # cancel() then uncancel() of this task: only a plug-in does that
            return False, asyncio.CancelledError(OWN_CANCEL)
        raise
    except BaseException:  # the run's coroutine closed for real, say: the plug-in's too
        task.cancel()
        raise
    if task.cancelled():  # it cancelled its own task and returned without awaiting again: its
        return False, asyncio.CancelledError()  # failure (the run ended on it: round 21, A)
    return task.result()


def _uncancelled() -> bool:
    """Whether the ``CancelledError`` just taken was asked for by no one still asking: a
    plug-in's own task called ``cancel()`` then ``uncancel()`` on the task awaiting it (an
    ``asyncio.timeout``, a ``TaskGroup`` or a caller's cancel keeps the count above 0 until
    the error has passed): the run ended blaming a bare ``CancelledError`` (adversary round 18,
    part A)."""
    me = asyncio.current_task()
    return me is not None and me.cancelling() == 0


async def isolated(awaitable: Awaitable[T]) -> T:
    """``await awaitable``, run in a task of its own: what it raises is raised here (see the
    module docs)."""
    done, value = await outcome(awaitable)
    if done:
        return value  # type: ignore[no-any-return]
    try:
        raise value
    finally:
        del value  # no cycle through this frame's traceback


def owned(obj: object) -> bool:
    """Whether ``obj`` is the harness's own code whose awaits reach no plug-in's future (a
    built-in mode, provider or tool, or a tool made from a plain function, whose thread carries
    a ``GeneratorExit`` back as a value): awaited directly. A task of its own for every
    iteration and tool call cost the kernel about a quarter of its time per provider call
    (docs/performance.md). A class says so with ``_harness_owned = True`` and must live in
    ``harness``: a user's subclass of a built-in mode, whose code is its own, is isolated."""
    module = type(obj).__module__
    return module.startswith("harness.") and getattr(obj, "_harness_owned", False) is True


async def awaiting(obj: object, awaitable: Awaitable[T]) -> T:
    """``await awaitable`` (a call of ``obj``'s): directly when ``obj`` is :func:`owned`, else
    :func:`isolated`."""
    if owned(obj):
        return await awaitable
    return await isolated(awaitable)


def contained(exc: BaseException) -> bool:
    """Whether a plug-in's ``exc`` is its own failure, to be contained like an ``Exception``
    (a ``GeneratorExit`` or a ``BaseException`` of its own), rather than what stops more than
    the plug-in (Ctrl-C, ``sys.exit``, a cancellation of the awaiting task). A
    ``CancelledError`` a plug-in raised itself (``raise asyncio.CancelledError``, cancelling
    its own task) while nothing cancels the run is its failure: it left ``harness.run`` as a
    ``CancelledError`` (adversary round 14, part A)."""
    if isinstance(exc, asyncio.CancelledError):
        try:
            task = asyncio.current_task()
        except RuntimeError:  # no running loop: the coroutine is being closed
            return False
        return task is not None and task.cancelling() == 0
    return not isinstance(exc, KeyboardInterrupt | SystemExit)


async def ran(fn: Callable[..., Any], *args: Any) -> tuple[bool, Any]:
    """``(True, fn(*args))`` or ``(False, what it raised)`` for a plug-in's synchronous code
    (a callback, or the harness reading a plug-in's object: its properties, ``__class__``,
    ``__str__`` and ``__eq__`` are its code) run in the run's task under the pending-cancel
    mark (:func:`cancels`): code that cancelled that task answers ``(False,
    CancelledError(OWN_CANCEL))``, the cancel undone, whatever it returned or raised (a
    coroutine it answered closed, never run). What stops more than the plug-in
    (not :func:`contained`: Ctrl-C, ``sys.exit``, a real cancel) is raised. The one guard for
    such code: each place that wrote it out by hand had its own gap (a ``GeneratorExit``
    raised up here, named there; adversary rounds 17 to 19, part A)."""
    mark = cancels()
    try:
        done, value = True, fn(*args)
    except BaseException as exc:
        done, value = False, exc
    if await undo_own_cancel(mark):  # named for that, whatever it did next
        answer = value.value if done and type(value) is _Answer else value
        if done and type(answer) is types.CoroutineType:  # its class not asked: no code of its
            answer.close()
        done, value = False, asyncio.CancelledError(OWN_CANCEL)
    if not done and not contained(value):
        raise value
    return done, value


def unawaited(value: object) -> bool:
    """Whether ``value`` is a coroutine a plug-in answered without awaiting it (an ``async``
    callback's forgotten ``await``): it is closed, never run, so Python prints no "never
    awaited" warning on the terminal; the caller names it without its ``repr``, whose memory
    address made replays differ (adversary round 18, the lead)."""
    if issubclass(type(value), Coroutine):  # its own ``__class__`` is not asked: its code
        value.close()  # type: ignore[attr-defined]
        return True
    return False


def own(exc: BaseException) -> bool:
    """Whether ``exc`` is the ``CancelledError`` :func:`ran` answers for a plug-in's cancel of
    its run's task."""
    return type(exc) is asyncio.CancelledError and exc.args == (OWN_CANCEL,)


class _Answer(NamedTuple):
    value: Any
    pending: bool


def _answered(fn: Callable[..., Any], args: tuple[Any, ...]) -> _Answer:
    value = fn(*args)
    return _Answer(value, inspect.isawaitable(value))  # its class is asked: its code too


async def called(fn: Callable[..., Any], *args: Any) -> tuple[bool, Any]:
    """``(True, answer)`` or ``(False, what it raised)`` for a plug-in's callback (a hook,
    ``can_use_tool``) ``fn(*args)``, which may answer an awaitable (awaited in a task of its
    own: :func:`outcome`): :func:`ran`, then that awaitable's outcome; what stops more than
    the plug-in (not :func:`contained`) is raised."""
    done, value = await ran(_answered, fn, args)
    if not done:
        return False, value
    answer, pending = value
    if not pending:
        return True, answer
    done, value = await outcome(answer)  # raises only what ends the awaiting task
    if not done and not contained(value):
        raise value
    return done, value


class Mark(NamedTuple):
    """A task's cancel state taken before a plug-in's synchronous code runs in it."""

    task: asyncio.Task[Any] | None
    #: Its count of cancel requests.
    requests: int
    #: Whether a ``CancelledError`` was pending already (Python 3.11's ``_must_cancel``).
    pending: bool


def cancels() -> Mark:
    """The running task and its cancel state, taken before a plug-in's synchronous code runs in
    it (a hook, ``can_use_tool``, a mode's ``init``, an ``on_event`` subscriber, a provider's
    ``complete``): see :func:`undo_own_cancel`."""
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no running loop
        return Mark(None, 0, False)
    if task is None:
        return Mark(None, 0, False)
    return Mark(task, task.cancelling(), _pending(task))


def _pending(task: asyncio.Task[Any]) -> bool:
    return getattr(task, "_must_cancel", False) is True


def own_cancel(mark: Mark) -> bool:
    """Whether synchronous plug-in code that ran in ``mark.task`` cancelled it
    (``asyncio.current_task().cancel()``: the run's own task, not a task of the plug-in's); the
    count of cancel requests is put back to ``mark.requests``, so the
    :class:`~asyncio.CancelledError` still pending is :func:`contained` (the plug-in's failure)
    wherever it is raised. Nothing else can cancel the task while such code runs: the event
    loop waits for it. A plug-in that put the count back itself (``cancel()`` then
    ``uncancel()``) left the ``CancelledError`` pending all the same (Python 3.11): it left
    ``harness.run`` or halted the run as a bare ``CancelledError`` blamed on nothing
    (adversary round 17, part A); it is that plug-in's too when nothing else cancels the
    task."""
    task, before = mark.task, mark.requests
    if task is None:
        return False
    if task.cancelling() <= before:
        return task.cancelling() == 0 and not mark.pending and _pending(task)
    while task.cancelling() > before:
        task.uncancel()
    return True


async def undo_own_cancel(mark: Mark) -> bool:
    """:func:`own_cancel`, and its pending ``CancelledError`` taken here (:func:`take_pending`):
    a hook or a mode's ``init`` that cancelled the run's task left ``harness.run`` as
    ``CancelledError`` (adversary round 16, part A); it is now that plug-in's failure."""
    if not own_cancel(mark):
        return False
    await take_pending(mark.task)
    return True


async def take_pending(task: asyncio.Task[Any] | None) -> None:
    """Take the ``CancelledError`` a plug-in's :func:`own_cancel` left pending in ``task``
    (Python 3.11's ``uncancel`` leaves it; later versions drop it), unless a real cancel is
    under way."""
    if task is None or task is not asyncio.current_task() or task.cancelling() > 0:
        return
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.sleep(0)
