"""Is a run's process alive? An ``flock`` that the process holds on ``runs/_alive/<run>.lock``
from the run's start (or resume) to its end.

``bench_runs`` names a run's process by pid and host, and a run ``running`` whose process had
gone was closed as ``interrupted`` (:func:`~harness.store._catalog.recover_stale_runs`) and
refused by ``baseline save`` while its process lived. But a pid is reused: a run killed in a
container whose next life gave pid 1 (or any pid) to another process counted as running for
ever: never closed, and ``baseline save`` refused it ("it is still running (process 1)";
adversary round 21, part B). The kernel drops the lock when the process ends however it ends
(``kill -9`` included), so :func:`alive` tells; the pid is asked only where there is no lock
file (a run of an older harness) or no ``flock`` (a file system without it). Forked children
close their copy of the descriptor (a worker outliving its parent does not keep the run alive).

A run that ends and is recorded as ended removes its file while it still holds the lock
(``release(remove=True)``), and :func:`remove_unheld` removes a dead run's file once the run is
closed: the folder keeps files only for runs that are open or not yet closed. A taker checks,
with the lock held, that the file it locked is still the one at the path, and takes the new
one otherwise (the usual lock-file protocol), so a removal never leaves two holders.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import logging
import os
import time
from pathlib import Path

from harness._files import open_regular, own_folder
from harness.store._forked import dropped, kept

__all__ = ["ALIVE_DIR", "AliveLock", "alive", "held", "remove_unheld", "take"]

log = logging.getLogger("harness.store")

#: The folder of the lock files, under ``runs/``.
ALIVE_DIR = "_alive"


#: Takes of a lock file removed under the taker before it gives up (each removal is a run's end).
_TRIES = 5
#: Pauses between tries to take a lock that another process holds for a moment: a reader
#: (:func:`alive`) holds it for microseconds, unless the machine's load stops it there. (Taken
#: once, a run that met a reader had no lock, and counted as dead: adversary round 22, part B.)
_WAITS = (0.001, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5)


def _path(runs: Path, run_id: str) -> Path:
    digest = hashlib.sha256(run_id.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return runs / ALIVE_DIR / f"{digest}.lock"


class AliveLock:
    """The lock a run's process holds for the run's life (see the module)."""

    def __init__(self, fd: int, path: Path) -> None:
        self._fd: int | None = fd
        self._path = path

    @classmethod
    def hold(cls, runs: Path, run_id: str) -> AliveLock | None:
        """Take ``run_id``'s lock (None when it cannot be taken: the pid is asked then)."""
        path = _path(runs, run_id)
        fd = take(path, f"run {run_id}")
        if fd is None:
            return None
        lock = cls(fd, path)
        kept(lock)
        return lock

    def release(self, *, remove: bool = False) -> None:
        """Drop the lock (idempotent). ``remove``: the run is recorded as ended, and its file
        goes too (removed while held: see the module); else it stays, held by no one."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        dropped(self)
        if remove:
            with contextlib.suppress(OSError):
                self._path.unlink()
        os.close(fd)  # closing the only descriptor drops the lock

    def _forget_in_child(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)  # the parent's lock stays: it has its own descriptor


def alive(runs: Path, run_id: str) -> bool | None:
    """Whether ``run_id``'s process holds its lock: True, False, or None when there is no lock
    file to ask (a run of an older harness, another host's run on a local folder) or no
    ``flock`` here."""
    return held(_path(runs, run_id))


def held(path: Path) -> bool | None:
    """Whether a process holds the lock file ``path`` (:func:`take`): True, False, or None
    when there is no such file or no ``flock`` here."""
    for _ in range(_TRIES):
        try:
            fd = open_regular(path, os.O_RDONLY)
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as exc:
            busy = exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES)
            return True if busy else None
        else:
            if _still_there(fd, path):
                return False
        finally:
            os.close(fd)  # (a lock it took is dropped with it)
    return None  # removed and made again under the reader each time: ask the pid


def take(path: Path, what: str) -> int | None:
    """A descriptor holding an exclusive ``flock`` on the lock file ``path`` (made if absent),
    the file at the path when it is taken; None when it cannot be taken (``what`` names it in
    the debug log)."""
    for _ in range(_TRIES):
        fd = _locked(path, fcntl.LOCK_EX, what)
        if fd is None:
            return None
        if _still_there(fd, path):
            return fd
        os.close(fd)  # removed as it was locked: take the file now at the path
    log.debug("harness: no lock on %s (its file kept being replaced)", what)
    return None


def remove_unheld(runs: Path, run_id: str) -> None:
    """Remove ``run_id``'s lock file if no process holds it (a dead run, closed)."""
    path = _path(runs, run_id)
    fd = _locked(path, fcntl.LOCK_EX, f"run {run_id}", create=False)
    if fd is None:
        return
    try:
        if _still_there(fd, path):
            with contextlib.suppress(OSError):
                path.unlink()
    finally:
        os.close(fd)


def _locked(path: Path, how: int, what: str, *, create: bool = True) -> int | None:
    """A descriptor of ``path`` with ``how`` taken (without waiting), or None."""
    try:
        if create:
            own_folder(path.parent)
        fd = open_regular(path, os.O_RDONLY | (os.O_CREAT if create else 0), 0o644)
    except OSError as exc:
        if create:
            log.debug("harness: no lock on %s (%s)", what, exc)
        return None
    waits = iter(_WAITS)
    while True:
        try:
            fcntl.flock(fd, how | fcntl.LOCK_NB)
            return fd
        except OSError as exc:  # no flock here, held (a resume of its own run), or a reader's
            wait = next(waits, None)
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN) or wait is None:
                os.close(fd)
                log.debug("harness: no lock on %s (%s)", what, exc.strerror)
                return None
        time.sleep(wait)  # a reader (alive) or a removal holds it for a moment


def _still_there(fd: int, path: Path) -> bool:
    """Whether the locked ``fd`` is still the file at ``path`` (not removed since it was opened)."""
    try:
        here = os.lstat(path)
    except OSError:
        return False
    mine = os.fstat(fd)
    return (here.st_dev, here.st_ino) == (mine.st_dev, mine.st_ino)
