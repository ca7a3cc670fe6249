"""grep's pattern matching in a worker process that a time limit, a cancel or Ctrl-C can kill.

The pattern comes from the model. A backtracking regex can run for minutes while holding the
interpreter lock, so neither a timeout nor a signal handler could stop it in a thread. Here the
search runs in a separate process (one warm worker, started on first use); when the limit passes
or the call is cancelled, the worker is killed and the next call starts a new one. Starting a
worker costs about 0.2 s once; a search then costs a round trip. A bench run owns its worker
(:func:`using`, a context variable its cells inherit); searches outside a run share a default one.

The worker is a loky process: started fresh like ``spawn`` (forking a process with threads is
unsafe), but without importing the user's ``__main__`` as ``spawn`` and ``forkserver`` do. With
``spawn``, a script that calls ``harness.run`` without an ``if __name__ == "__main__"`` guard ran
its own top level again in the worker, which tried to start a run of its own there and crashed
the grep call.

At interpreter exit every worker still alive is stopped, and its executor let go, by an ``atexit``
hook (registered with the first worker, after loky's own exit hooks, so it runs before them).
Left to the end of the interpreter, the executor was collected while the modules were being torn
down, and loky's weakref callback on it then printed ``Exception ignored in: <function
_ExecutorManagerThread.__init__.<locals>.weakref_cb> ... AttributeError: 'NoneType' object has
no attribute 'util'`` after an otherwise clean exit (joblib/loky#311 shows the same traceback).
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import contextvars
import gc
import os
import signal
import threading
import weakref
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # loky is imported with the first search (`import harness` stays light)
    import loky

__all__ = ["GrepWorker", "run_killable", "shutdown", "using"]

T = TypeVar("T")


class GrepWorker:
    """One killable worker process (started on first use). A bench runner owns one per run
    (:func:`using`), so a run that kills or shuts its worker never touches another run's."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.pool: loky.ProcessPoolExecutor | None = None
        _WORKERS.add(self)

    def get(self) -> loky.ProcessPoolExecutor:
        with self._lock:
            if self.pool is None:  # loky's default context: a fresh interpreter, no user __main__
                import loky

                _stop_at_exit()
                self.pool = loky.ProcessPoolExecutor(max_workers=1)
                _POOLS.add(self.pool)
            return self.pool

    def kill(self, which: loky.ProcessPoolExecutor | None = None) -> None:
        """Kill the worker (only if it is still ``which``, when given: a call never kills the
        fresh worker another call started)."""
        with self._lock:
            if which is not None and self.pool is not which:
                return
            pool, self.pool = self.pool, None
        if pool is None:
            return
        for process in list(getattr(pool, "_processes", {}).values()):
            with contextlib.suppress(OSError, TypeError):  # gone already, or never started
                os.kill(process.pid, signal.SIGKILL)
        pool.shutdown(wait=False, kill_workers=True)


#: Every worker not yet collected (the exit hook stops those still running), and every executor.
_WORKERS: weakref.WeakSet[GrepWorker] = weakref.WeakSet()
_POOLS: weakref.WeakSet[loky.ProcessPoolExecutor] = weakref.WeakSet()
_exit_hook = threading.Lock()
_hooked = False


def _stop_at_exit() -> None:
    """Register :func:`_at_exit` once, when the first worker starts: after loky is imported, so
    that it runs before the exit hooks that loky registers (``atexit`` runs the last first)."""
    global _hooked
    with _exit_hook:
        if not _hooked:
            _hooked = True
            atexit.register(_at_exit)


def _at_exit() -> None:
    """Stop every live worker and let its executor go while the interpreter is still whole (see
    the module docs). An executor that outlives that is held by a reference cycle (a
    traceback's frames, say): a garbage collection takes it now, not during the teardown."""
    for worker in list(_WORKERS):
        worker.kill()
    if len(_POOLS):
        gc.collect()


#: The worker of searches made outside a bench run (stopped at interpreter exit).
_DEFAULT = GrepWorker()
_CURRENT: contextvars.ContextVar[GrepWorker | None] = contextvars.ContextVar(
    "harness_grep_worker", default=None
)


def _current() -> GrepWorker:
    return _CURRENT.get() or _DEFAULT


@contextlib.contextmanager
def using(worker: GrepWorker) -> Iterator[GrepWorker]:
    """Searches in this context (and in asyncio tasks it starts) use ``worker``; it is killed
    on the way out."""
    token = _CURRENT.set(worker)
    try:
        yield worker
    finally:
        _CURRENT.reset(token)
        worker.kill()


def shutdown() -> None:
    """Stop the current worker (tests; the default one is also stopped at interpreter exit)."""
    _current().kill()


#: How often a call whose worker was killed for another call runs again.
_RETRIES = 3


async def run_killable(
    fn: Callable[..., T], *args: Any, timeout_s: float, _tries: int = _RETRIES
) -> T:
    """``fn(*args)`` in the worker process; ``TimeoutError`` after ``timeout_s`` (the worker is
    killed), and on cancel the worker is killed too. ``fn`` and its arguments must pickle.

    The worker is shared by the calls of one run: when another call's limit kills it, the calls
    waiting for it run again in a fresh worker (up to 3 times) instead of failing with that
    call's cancellation."""
    owner = _current()
    pool = owner.get()
    from loky.process_executor import ShutdownExecutorError

    future = pool.submit(fn, *args)
    try:
        return await asyncio.wait_for(asyncio.wrap_future(future), timeout_s)
    except (
        asyncio.CancelledError,
        concurrent.futures.process.BrokenProcessPool,  # loky's is a subclass
        ShutdownExecutorError,  # queued when another call's limit killed the worker
    ):
        me = asyncio.current_task()
        ours = me is not None and me.cancelling() > 0
        if not ours and owner.pool is not pool and _tries > 0:  # killed for another call
            return await run_killable(fn, *args, timeout_s=timeout_s, _tries=_tries - 1)
        owner.kill(pool)
        raise
    except TimeoutError:
        owner.kill(pool)
        raise
