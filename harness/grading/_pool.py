"""Warm worker processes for python graders (``python -m harness.grading._python_child serve``).

Starting an interpreter and importing harness costs about a quarter of a second, so a worker
serves grade after grade: one JSON line in, one JSON line out. Workers are kept per import path
(the suite folder first), so two suites that each have a ``checks.py`` never share a module
cache. A worker that times out, dies, or is busy when :meth:`GraderPool.kill_all` runs is
killed (its whole process group) and never reused; the next grade starts a fresh one.

Workers belong to a :class:`GraderPool`: each bench runner owns one (passed to graders in their
:class:`~harness.grading._base.GradeContext`), and :data:`DEFAULT_POOL` serves graders called
outside a runner.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import IO, Any

__all__ = ["DEFAULT_POOL", "Answer", "GraderPool", "Worker"]

#: (exit status, None while alive | verdict line | "" | stderr tail, timed out)
Answer = tuple[int | None, str, str, bool]
_MAX_IDLE_PER_KEY = 8
_TAIL_BYTES = 1600


class Worker:
    """One serving child process."""

    def __init__(self) -> None:
        self.err: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - closed by kill()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "harness.grading._python_child", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.err,
            bufsize=0,  # select() on stdout must see every byte (no hidden buffer)
            start_new_session=True,  # Ctrl-C reaches the harness, which kills the group
        )

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def ask(self, payload: dict[str, Any], timeout_s: float) -> Answer:
        """Send one request; returns (exit status if it died, verdict line, stderr tail,
        timed out)."""
        start = os.fstat(self.err.fileno()).st_size
        stdin, stdout = self.proc.stdin, self.proc.stdout
        if stdin is None or stdout is None:  # pragma: no cover - always piped
            raise RuntimeError("grader worker without pipes")
        try:
            stdin.write(json.dumps(payload).encode() + b"\n")
        except (BrokenPipeError, OSError):
            return self._died(start)
        deadline = time.monotonic() + timeout_s
        line = b""
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                return self.proc.poll(), "", "", True
            ready, _, _ = select.select([stdout], [], [], left)
            if ready:
                chunk = stdout.read(65536)
                if not chunk:
                    return self._died(start)
                line += chunk
        return None, line.decode("utf-8", errors="replace"), "", False

    def _died(self, since: int) -> Answer:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=2)
        tail = self._tail(since)
        self.kill()
        return self.proc.returncode, "", tail, False

    def _tail(self, since: int) -> str:
        with contextlib.suppress(OSError):
            size = os.fstat(self.err.fileno()).st_size
            os.lseek(self.err.fileno(), max(since, size - _TAIL_BYTES), os.SEEK_SET)
            return os.read(self.err.fileno(), _TAIL_BYTES).decode("utf-8", errors="replace")
        return ""

    def signal_kill(self) -> None:
        """SIGKILL the worker's process group (safe from any thread)."""
        with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, OSError):
            self.proc.kill()

    def kill(self) -> None:
        """Kill the worker and close its pipes (by the thread that owns it)."""
        self.signal_kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=2)
        for stream in (self.proc.stdin, self.proc.stdout, self.err):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()


class GraderPool:
    """The warm grader workers of one owner (a bench :class:`~harness.bench._runner.Runner`
    makes its own, so two runs in one process never stop or reuse each other's workers)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: dict[tuple[str, ...], list[Worker]] = {}
        self._busy: set[Worker] = set()
        self._stopped = threading.Event()

    def ask(self, key: tuple[str, ...], payload: dict[str, Any], timeout_s: float) -> Answer | None:
        """Grade ``payload`` on an idle worker for ``key`` (or a new one); None once
        :meth:`kill_all` has stopped the pool (until :meth:`reset`)."""
        with self._lock:
            if self._stopped.is_set():
                return None
            idle = self._idle.get(key, [])
            worker = idle.pop() if idle else None
            if worker is not None and not worker.alive:
                worker.kill()
                worker = None
            if worker is None:
                worker = Worker()
            self._busy.add(worker)
        try:
            answer = worker.ask(payload, timeout_s)
        except BaseException:
            worker.kill()
            raise
        finally:
            with self._lock:
                self._busy.discard(worker)
        keep = answer[0] is None and not answer[3] and worker.alive
        with self._lock:
            pool = self._idle.setdefault(key, [])
            if keep and not self._stopped.is_set() and len(pool) < _MAX_IDLE_PER_KEY:
                pool.append(worker)
                return answer
        worker.kill()
        return answer

    def kill_all(self) -> int:
        """Kill every worker, busy or idle, and start no new one until :meth:`reset`; returns
        how many were busy (their :meth:`ask` returns at once, as a died worker)."""
        with self._lock:
            self._stopped.set()
            busy = list(self._busy)
            idle = [w for pool in self._idle.values() for w in pool]
            self._idle.clear()
        for worker in busy:
            worker.signal_kill()
        for worker in idle:
            worker.kill()
        return len(busy)

    def reset(self) -> None:
        """Let :meth:`ask` start workers again."""
        self._stopped.clear()

    def stopped(self) -> bool:
        return self._stopped.is_set()

    def close_idle(self) -> None:
        """Stop the idle workers (end of a run)."""
        with self._lock:
            idle = [w for pool in self._idle.values() for w in pool]
            self._idle.clear()
        for worker in idle:
            worker.kill()

    @property
    def workers(self) -> int:
        """Workers alive now, idle or busy."""
        with self._lock:
            return len(self._busy) + sum(len(p) for p in self._idle.values())


#: The pool of graders run outside a bench runner (``harness.grading.grade`` called directly).
DEFAULT_POOL = GraderPool()
