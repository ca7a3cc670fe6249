"""BFCL's classes and its multi-turn checker run in warm worker processes that can be killed.

BFCL's classes compute on the model's numbers (``power(3, 20000000)``, ``logarithm(precision=
60000)``): run on the event loop, one call stalled every other cell for seconds and held up
Ctrl-C; its grading re-executed the same calls with no limit. And MathAPI sets ``mpmath``'s
precision, which is global to a process: a call in one thread changed the digits of another
thread's call or grading (5 of 1,462 results came back at 18 digits). Here every BFCL tool call
and every multi-turn grading runs in a worker process of its own while it runs (a loky process,
started fresh without the user's ``__main__``, as grep's worker: see
:mod:`harness.tools._grep_worker`): nothing of BFCL runs in the harness's process, one worker
runs one thing at a time, and a call past its limit, a cancelled one, or one running when
:meth:`BfclWorkers.kill_all` is called (Ctrl-C) has its worker killed at once. A new worker
imports BFCL's modules (:func:`warm_up`) before its first call, outside that call's limit (it
takes about half a second, and many seconds on a loaded machine); it is then kept warm for the
next calls (at most :data:`MAX_IDLE` idle ones). A worker may hold at most
:data:`MEMORY_LIMIT_BYTES` of address space (set as it warms up): BFCL's classes build what the
model's calls ask for, and 85 calls of ``mkdir`` and ``cp`` make a folder tree whose ``find``
lists billions of paths (level 21: a 329 MB result and 1.5 GB held in 4 s; the grading re-ran it
for up to a minute), so past the limit a call fails with ``MemoryError`` instead of taking the
machine's memory.

A bench runner owns one :class:`BfclWorkers` (:func:`using`, a context variable its cells and
grading threads inherit); calls outside a run share a default one, stopped at interpreter exit.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import copy
import ctypes
import functools
import gc
import pickle
import re
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from harness.errors import WorkerDied, WorkerStopped
from harness.grading._bfcl_env import CLASS_MODULES, bfcl_module
from harness.tools._grep_worker import GrepWorker

__all__ = [
    "DEATHS_RETRIED",
    "MAX_IDLE",
    "MEMORY_LIMIT_BYTES",
    "WARM_UP_LIMIT_S",
    "BfclWorkers",
    "WorkerDied",
    "WorkerStopped",
    "cap_memory",
    "current",
    "give_back_memory",
    "restore_globals",
    "using",
    "warm_up",
]

T = TypeVar("T")
#: Idle workers kept warm per owner.
MAX_IDLE = 8
#: How long a new worker may take to start and import BFCL's modules.
WARM_UP_LIMIT_S = 120.0
#: The address space a BFCL worker may hold (a warm worker holds about 65 MB; the largest normal
#: call a few MB; ``square_root(2, precision=10**9)`` about 474 MB before its time limit).
MEMORY_LIMIT_BYTES = 1024 * 1024 * 1024
#: A call whose worker died is run again in a fresh worker this many times: a worker killed
#: from outside (an OOM killer, ``docker``) is no fault of the call's.
DEATHS_RETRIED = 1
_CHECKER = "bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker"
_LONG_CONTEXT = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code.long_context"
_Global = dict[Any, Any] | list[Any] | set[Any]
#: BFCL's mutable module globals as :func:`warm_up` found them: (module, name, the object, a
#: copy to compare with, its value pickled). A class module holds long_context's under its own
#: names, so one object may appear under several.
_pristine: list[tuple[Any, str, _Global, _Global, bytes]] = []
#: Whether :func:`warm_up` ran in this process.
_warm = False


def warm_up() -> None:
    """Cap the worker's memory (:data:`MEMORY_LIMIT_BYTES`), import BFCL's classes and its
    multi-turn checker (in a new worker, before its first call), and keep a copy of the classes'
    mutable module globals for :func:`restore_globals`."""
    global _warm
    cap_memory(MEMORY_LIMIT_BYTES)
    modules = [bfcl_module(name) for name in (*CLASS_MODULES.values(), _LONG_CONTEXT)]
    bfcl_module(_CHECKER)
    _unshare_long_context(bfcl_module(CLASS_MODULES["TravelAPI"]))
    _pristine.clear()
    for module in modules:
        for name, value in vars(module).items():
            if isinstance(value, dict | list | set) and not name.startswith("__"):
                copied = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
                _pristine.append((module, name, value, pickle.loads(copied), copied))
    _warm = True


def _unshare_long_context(module: Any) -> None:
    """Make a long-context TravelAPI instance hold copies of ``long_context``'s extension cards
    and bookings, not the module's dicts: BFCL's ``_add_credit_cards`` puts them in by
    reference, so within one grading the model's instance and the ground truth's shared them,
    and a wrong extra ``purchase_insurance(insurance_cost=999.0)`` on an extension card passed
    (the same call on the scenario's own card fails) (round 12, part C)."""
    cls = module.TravelAPI
    if getattr(cls, "_harness_unshared", False):
        return
    load = cls._load_scenario

    @functools.wraps(load)
    def load_scenario(self: Any, *args: Any, **kwargs: Any) -> Any:
        done = load(self, *args, **kwargs)
        for table in (self.credit_card_list, self.booking_record):
            for key, value in list(table.items()):
                if isinstance(value, dict | list):
                    table[key] = copy.deepcopy(value)
        return done

    cls._load_scenario = load_scenario
    cls._harness_unshared = True


def _warmed(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in a worker that has been warmed up (:func:`warm_up` first if not). loky
    may replace a worker process by itself (with psutil installed it restarts one whose memory
    grew by 300 MB, ``LOKY_MAX_MEMORY_LEAK_SIZE``): the next calls then ran in a process never
    warmed up, with no memory limit and no globals to restore (round 12, part C). BFCL's module
    globals are put back after every call (:func:`restore_globals`): the instances of a tool's
    first call and of a grading take some of them by reference."""
    if not _warm:
        warm_up()
    try:
        return fn(*args)
    finally:
        restore_globals()


def restore_globals() -> int:
    """Put BFCL's module globals back as :func:`warm_up` found them, in place (a class module
    holds the same objects under its own names); returns how many had changed. Comparing them
    takes about 0.1 ms; a changed one is rebuilt from its pickled copy."""
    changed = 0
    restored: set[int] = set()
    for module, name, original, reference, copied in _pristine:
        if vars(module).get(name) is not original:  # rebound: the original object comes back
            setattr(module, name, original)
            changed += 1
        if id(original) in restored or original == reference:
            continue
        fresh = pickle.loads(copied)
        if isinstance(original, dict):
            original.clear()
            original.update(fresh)
        elif isinstance(original, list):
            original[:] = fresh
        else:
            original.clear()
            original.update(fresh)
        restored.add(id(original))
        changed += 1
    return changed


def cap_memory(limit: int) -> None:
    """Lower this process's address-space limit to ``limit`` bytes (never raise it)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limits = [x for x in (soft, hard, limit) if x != resource.RLIM_INFINITY]
    resource.setrlimit(resource.RLIMIT_AS, (min(limits), hard))


def give_back_memory() -> None:
    """Hand the memory a finished call freed back to the system (in a worker): freed heap stays
    with ``malloc``, and under the address-space limit the worker could not even pickle its
    answer after a call that ran out of memory (it died instead)."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).malloc_trim(0)


class _Lease:
    """One worker lent to one call: its warm-up (``None`` when it is warm already) and the
    call."""

    def __init__(self, worker: GrepWorker, warming: concurrent.futures.Future[None] | None):
        self.worker = worker
        self.warming = warming

    def submit(self, fn: Callable[..., T], *args: Any) -> concurrent.futures.Future[T]:
        future: concurrent.futures.Future[T] = self.worker.get().submit(_warmed, fn, *args)
        return future


class BfclWorkers:
    """The killable BFCL worker processes of one owner: one per call running now, idle ones
    kept for the next calls."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[GrepWorker] = []
        self._busy: set[GrepWorker] = set()
        self._stopped = False

    def _take(self) -> tuple[GrepWorker, bool]:
        """A worker for one call, and whether it is new (not warmed up yet)."""
        with self._lock:
            if self._stopped:
                raise WorkerStopped("BFCL's workers were stopped (the run is ending)")
            fresh = not self._idle
            worker = GrepWorker() if fresh else self._idle.pop()
            self._busy.add(worker)
            return worker, fresh

    def _give(self, worker: GrepWorker, keep: bool) -> None:
        with self._lock:
            self._busy.discard(worker)
            if keep and not self._stopped and len(self._idle) < MAX_IDLE:
                self._idle.append(worker)
                return
        worker.kill()

    @contextlib.contextmanager
    def _lease(self) -> Iterator[_Lease]:
        """A worker for one call, given back (kept warm) when the call returned, killed when
        it raised, timed out or was cancelled; a dead worker's error becomes
        :class:`WorkerStopped` (after :meth:`kill_all`) or :class:`WorkerDied`."""
        worker, fresh = self._take()
        keep = False
        try:
            try:
                yield _Lease(worker, worker.get().submit(warm_up) if fresh else None)
            except _dead() as exc:
                raise self._broken(exc) from exc
            keep = True
        finally:
            self._give(worker, keep)

    async def call(self, fn: Callable[..., T], *args: Any, timeout_s: float) -> T:
        """``fn(*args)`` in a worker; ``TimeoutError`` past ``timeout_s``. A timeout or a cancel
        kills the worker (the call stops at once); ``WorkerStopped`` after :meth:`kill_all`.
        A worker that dies during the call (killed from outside: an OOM killer, ``docker``) is
        replaced once, within what is left of ``timeout_s``; :class:`WorkerDied` if that one
        dies too (``fn`` must not change anything outside its worker)."""
        left = timeout_s  # the call's own time: a fresh worker's warm-up has a limit of its own
        for attempt in range(DEATHS_RETRIED + 1):
            try:
                with self._lease() as lease:
                    if lease.warming is not None:
                        await asyncio.wait_for(asyncio.wrap_future(lease.warming), WARM_UP_LIMIT_S)
                    future, began = lease.submit(fn, *args), time.monotonic()
                    try:
                        return await asyncio.wait_for(asyncio.wrap_future(future), left)
                    finally:
                        left = max(0.0, left - (time.monotonic() - began))
            except WorkerDied as died:
                if attempt == DEATHS_RETRIED:
                    raise WorkerDied(f"{died}, and so did the fresh one it ran in next") from None
        raise AssertionError("unreachable")  # pragma: no cover

    def call_sync(self, fn: Callable[..., T], *args: Any, timeout_s: float) -> T:
        """:meth:`call` for a thread: blocks until the result, the limit or :meth:`kill_all`."""
        left = timeout_s
        for attempt in range(DEATHS_RETRIED + 1):
            try:
                with self._lease() as lease:
                    if lease.warming is not None:
                        self._wait(lease.warming, WARM_UP_LIMIT_S)
                    future, began = lease.submit(fn, *args), time.monotonic()
                    try:
                        return self._wait(future, left)
                    finally:
                        left = max(0.0, left - (time.monotonic() - began))
            except WorkerDied as died:
                if attempt == DEATHS_RETRIED:
                    raise WorkerDied(f"{died}, and so did the fresh one it ran in next") from None
        raise AssertionError("unreachable")  # pragma: no cover

    def _wait(self, future: concurrent.futures.Future[T], timeout_s: float) -> T:
        """The future's result, waiting in short steps: :meth:`kill_all` ends the wait at
        once even if the dead worker's future is never settled."""
        deadline = time.monotonic() + timeout_s
        while True:
            if self._stopped:
                raise WorkerStopped("BFCL's workers were stopped (the run is ending)")
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            try:
                return future.result(timeout=min(left, 0.1))
            except TimeoutError:
                continue

    def _broken(self, exc: BaseException) -> BaseException:
        if self._stopped:
            return WorkerStopped("BFCL's workers were stopped (the run is ending)")
        codes = re.search(r"exit codes of the workers are (\{[^}]*\})", str(exc))
        why = f"exit code {codes[1]}" if codes else (str(exc).splitlines() or [repr(exc)])[0]
        return WorkerDied(f"BFCL's worker process died ({why})")

    def kill_all(self) -> None:
        """Kill every worker, busy or idle (their calls end at once), and start none until
        :meth:`reset`."""
        with self._lock:
            self._stopped = True
            workers = [*self._busy, *self._idle]
            self._idle.clear()
        for worker in workers:
            worker.kill()

    def reset(self) -> None:
        """Let calls start workers again."""
        with self._lock:
            self._stopped = False

    def close_idle(self) -> None:
        """Stop the idle workers (the end of a run)."""
        with self._lock:
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.kill()

    @property
    def workers(self) -> int:
        """Workers alive or reserved now, idle or busy."""
        with self._lock:
            return len(self._busy) + len(self._idle)


def _dead() -> tuple[type[BaseException], ...]:
    """What a call's future raises when its worker was killed or died."""
    from loky.process_executor import ShutdownExecutorError

    return (concurrent.futures.process.BrokenProcessPool, ShutdownExecutorError)


_DEFAULT = BfclWorkers()
_CURRENT: contextvars.ContextVar[BfclWorkers | None] = contextvars.ContextVar(
    "harness_bfcl_workers", default=None
)


def current() -> BfclWorkers:
    """The workers of the run in this context (the default ones outside a run)."""
    return _CURRENT.get() or _DEFAULT


@contextlib.contextmanager
def using(workers: BfclWorkers) -> Iterator[BfclWorkers]:
    """BFCL calls and gradings in this context (and the tasks and threads it starts) use
    ``workers``; their idle ones are stopped on the way out."""
    token = _CURRENT.set(workers)
    try:
        yield workers
    finally:
        _CURRENT.reset(token)
        workers.close_idle()
