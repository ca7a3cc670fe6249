"""grep's pattern matching in a worker process that a time limit, a cancel or Ctrl-C can kill.

The pattern comes from the model. A backtracking regex can run for minutes while holding the
interpreter lock, so neither a timeout nor a signal handler could stop it in a thread. Here the
search runs in a separate process (one warm worker, started with ``spawn`` on first use); when
the limit passes or the call is cancelled, the worker is killed and the next call starts a new
one. Starting a worker costs about 0.2 s once; a search then costs a round trip.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import multiprocessing
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["run_killable", "shutdown"]

T = TypeVar("T")

_lock = threading.Lock()
_pool: concurrent.futures.ProcessPoolExecutor | None = None


def _get_pool() -> concurrent.futures.ProcessPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            ctx = multiprocessing.get_context("spawn")
            _pool = concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=ctx)
        return _pool


def _kill_pool(which: concurrent.futures.ProcessPoolExecutor | None = None) -> None:
    """Kill the worker (only if it is still ``which``, when given: a call never kills the fresh
    worker another call started)."""
    global _pool
    with _lock:
        if which is not None and _pool is not which:
            return
        pool, _pool = _pool, None
    if pool is None:
        return
    for process in list(getattr(pool, "_processes", {}).values()):
        process.kill()
    pool.shutdown(wait=False, cancel_futures=True)


def shutdown() -> None:
    """Stop the worker (tests; it is also stopped at interpreter exit)."""
    _kill_pool()


#: How often a call whose worker was killed for another call runs again.
_RETRIES = 3


async def run_killable(
    fn: Callable[..., T], *args: Any, timeout_s: float, _tries: int = _RETRIES
) -> T:
    """``fn(*args)`` in the worker process; ``TimeoutError`` after ``timeout_s`` (the worker is
    killed), and on cancel the worker is killed too. ``fn`` and its arguments must pickle.

    The worker is shared: when another call's limit kills it, the calls waiting for it run again
    in a fresh worker (up to 3 times) instead of failing with that call's cancellation."""
    pool = _get_pool()
    future = pool.submit(fn, *args)
    try:
        return await asyncio.wait_for(asyncio.wrap_future(future), timeout_s)
    except (asyncio.CancelledError, concurrent.futures.process.BrokenProcessPool):
        me = asyncio.current_task()
        ours = me is not None and me.cancelling() > 0
        if not ours and _pool is not pool and _tries > 0:  # killed for another call
            return await run_killable(fn, *args, timeout_s=timeout_s, _tries=_tries - 1)
        _kill_pool(pool)
        raise
    except TimeoutError:
        _kill_pool(pool)
        raise
