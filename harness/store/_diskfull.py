"""A full disk: a write that fails with ENOSPC or EDQUOT (or EFBIG, past a file-size limit) is
tried again with back-off, for up to ``HARNESS_DISK_FULL_WAIT_S`` seconds (30 by default), before
the run gives up.

Every write of a store shares one :class:`DiskPatience`: the result shards, the span shards, the
catalog's moments (opening and closing a run, compaction) and the run folder. Its clock starts
at the first failure of a streak and stops at the next write that works, so a disk full for a
few seconds costs a few seconds and nothing else (the rows wait in memory meanwhile), and a disk
that stays full is given up on once, after the budget, not once per write: past it, each write
is tried once and fails with :class:`~harness.errors.DiskFull`, which ``harness run`` turns into
exit 3 with the run closed as ``failed`` and resumable with ``--resume``.

The pauses double from 0.1 s up to 5 s (0.1, 0.2, 0.4, ... 3.2, 5, 5 ...), each cut to the time
left: about 11 tries over 30 s.

So that a run given up on can still say so, a writer keeps 1 MiB of room in ``runs/_reserve``
(made when the disk has more than 16 MiB free); giving up deletes it and writes the run's
ending in that room (:func:`spend_reserve`), and the next writer makes it again.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from tenacity import Retrying, retry_if_exception

from harness._files import open_regular
from harness.errors import DiskFull

__all__ = [
    "DEFAULT_WAIT_S",
    "DISK_FULL_ERRNOS",
    "ENV_WAIT_S",
    "DiskPatience",
    "append_whole_lines",
    "disk_full_wait_s",
    "is_disk_full",
    "make_reserve",
    "spend_reserve",
]

log = logging.getLogger("harness.store")

T = TypeVar("T")

ENV_WAIT_S = "HARNESS_DISK_FULL_WAIT_S"
DEFAULT_WAIT_S = 30.0
FIRST_PAUSE_S = 0.1
MAX_PAUSE_S = 5.0
DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
RESERVE = "_reserve"
RESERVE_BYTES = 1024 * 1024
# How DuckDB and Arrow say it (their errors carry no errno attribute).
_MARKERS = ("no space left on device", "disk quota exceeded", "file too large")


def disk_full_wait_s(value: float | None = None) -> float:
    """The budget: ``value``, else ``$HARNESS_DISK_FULL_WAIT_S``, else 30 s."""
    if value is not None:
        return max(0.0, float(value))
    raw = os.environ.get(ENV_WAIT_S, "").strip()
    if not raw:
        return DEFAULT_WAIT_S
    try:
        return max(0.0, float(raw))
    except ValueError:
        log.warning("harness: %s=%r is not a number of seconds; using %g", ENV_WAIT_S, raw,
                    DEFAULT_WAIT_S)  # fmt: skip
        return DEFAULT_WAIT_S


def make_reserve(runs: Path) -> None:
    """Keep :data:`RESERVE_BYTES` of room in ``runs/_reserve`` (best effort; only while the disk
    has more than 16 times that free). Random bytes: a compressing file system keeps them."""
    path = runs / RESERVE
    with contextlib.suppress(OSError):
        if path.stat().st_size >= RESERVE_BYTES:
            return
    tmp = path.with_name(f".{RESERVE}.{os.getpid()}.tmp")
    try:
        if shutil.disk_usage(runs).free < 16 * RESERVE_BYTES:
            return
        with os.fdopen(open_regular(tmp, os.O_WRONLY | os.O_CREAT, truncate=True), "wb") as f:
            f.write(os.urandom(RESERVE_BYTES))
        os.replace(tmp, path)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


def spend_reserve(runs: Path) -> bool:
    """Delete the reserve, giving its room back; whether there was one."""
    try:
        (runs / RESERVE).unlink()
    except OSError:
        return False
    return True


def is_disk_full(exc: BaseException | None) -> bool:
    """Whether ``exc`` (or an exception it was raised from) is a full disk or quota."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, DiskFull):
            return True
        if isinstance(exc, OSError) and exc.errno in DISK_FULL_ERRNOS:
            return True
        # A write past a file-size limit (``ulimit -f``; the system's own "File too large") is
        # no room either: a fresh --db or a compaction under one was a DuckDB traceback, exit 1
        # (adversary round 12 B). An input refused as too large to read (EFBIG too) is not.
        if isinstance(exc, OSError) and exc.errno == errno.EFBIG:
            return exc.strerror == os.strerror(errno.EFBIG)
        text = str(exc).lower()
        if any(m in text for m in _MARKERS):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


class DiskPatience:
    """The disk-full streak shared by the writes of one store (thread-safe)."""

    def __init__(self, wait_s: float | None = None) -> None:
        self.wait_s = disk_full_wait_s(wait_s)
        self._lock = threading.Lock()
        self._since: float | None = None
        self._next_at = 0.0
        #: Failed writes in the current streak, and in every streak so far.
        self.tries = 0
        self.failures = 0
        #: Streaks that ended with the disk back, and the longest one (s).
        self.recovered = 0
        self.longest_s = 0.0
        self.gave_up = False
        self._given: str | None = None

    @property
    def full(self) -> bool:
        """Whether the last write failed for a full disk (a streak is going on)."""
        return self._since is not None

    def elapsed(self) -> float:
        since = self._since
        return 0.0 if since is None else time.monotonic() - since

    def expired(self) -> bool:
        """Whether the streak has lasted the whole budget, or a write was given up on before:
        writes are then tried once (a run that gave up is ending; it never waits twice)."""
        return self.gave_up or (self._since is not None and self.elapsed() >= self.wait_s)

    def due(self) -> bool:
        """Whether a background writer may try again (its pause is over)."""
        return time.monotonic() >= self._next_at

    def pause(self) -> float:
        """The next pause: doubling from 0.1 s to 5 s, cut to the time left."""
        step = min(MAX_PAUSE_S, FIRST_PAUSE_S * 2.0 ** max(0, self.tries - 1))
        return max(0.0, min(step, self.wait_s - self.elapsed()))

    def failed(self, exc: BaseException, what: str) -> bool:
        """Note a failed write; True when it failed for a full disk (worth trying again)."""
        if isinstance(exc, DiskFull) or not is_disk_full(exc):
            return False
        with self._lock:
            now = time.monotonic()
            if self._since is None:
                self._since = now
                self.tries = 0
                log.warning(
                    "harness: %s: the disk is full (%s); trying again for up to %gs (%s)",
                    what, _first_line(exc), self.wait_s, ENV_WAIT_S,
                )  # fmt: skip
            self.tries += 1
            self.failures += 1
            self._next_at = now + self.pause()
        return True

    def ok(self) -> None:
        """Note a write that worked: a streak ends."""
        with self._lock:
            since = self._since
            if since is None:
                return
            took = time.monotonic() - since
            lost = "" if self.gave_up else "; nothing was lost"
            log.warning("harness: the disk has room again after %.1fs (%d failed writes)%s",
                        took, self.tries, lost)  # fmt: skip
            self.recovered += 1
            self.longest_s = max(self.longest_s, took)
            self._since = None
            self.tries = 0
            self._next_at = 0.0

    def error(self, exc: BaseException, what: str) -> DiskFull:
        """The :class:`DiskFull` of giving up on ``what``."""
        if self._given is None:  # later ones (the run ending) tell the same story
            self._given = (
                f"the disk stayed full for {self.elapsed():.1f}s ({self.tries} tries; "
                f"{ENV_WAIT_S}={self.wait_s:g})"
            )
        self.gave_up = True
        return DiskFull(f"{what}: {self._given}: {_first_line(exc)}")

    def call(self, fn: Callable[[], T], what: str, *, writes: bool = True) -> T:
        """``fn()``, tried again with back-off while it fails for a full disk (until the streak
        has lasted the budget); raises :class:`DiskFull` when it gives up. ``writes=False``: a
        success says nothing about the disk (a read), so the streak goes on."""
        retrying = Retrying(
            retry=retry_if_exception(lambda exc: self.failed(exc, what)),
            stop=lambda state: self.expired(),
            wait=lambda state: self.pause(),
            reraise=True,
        )
        try:
            result = retrying(fn)
        except DiskFull:
            raise
        except Exception as exc:
            if is_disk_full(exc):
                raise self.error(exc, what) from exc
            raise
        if writes:
            self.ok()
        return result


def append_whole_lines(path: Path, text: str) -> None:
    """Append ``text`` (whole lines) to ``path``: all of it or nothing. A write a full disk cuts
    short is cut back off, so the file never ends in a torn line (try again with
    :meth:`DiskPatience.call`)."""
    data = memoryview(text.encode("utf-8", "backslashreplace"))
    fd = open_regular(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644, named_by_user=True)
    try:
        start = os.fstat(fd).st_size
        try:
            written = 0
            while written < len(data):  # unbuffered: nothing is left to flush on the way out
                written += os.write(fd, data[written:])
        except OSError:
            with contextlib.suppress(OSError):  # not for a pipe or a device (/dev/null)
                os.ftruncate(fd, start)
            raise
    finally:
        os.close(fd)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
