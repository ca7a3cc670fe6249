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
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import logging
import os
from pathlib import Path

from harness._files import open_regular, own_folder
from harness.store._forked import dropped, kept

__all__ = ["ALIVE_DIR", "AliveLock", "alive"]

log = logging.getLogger("harness.store")

#: The folder of the lock files, under ``runs/``.
ALIVE_DIR = "_alive"


def _path(runs: Path, run_id: str) -> Path:
    digest = hashlib.sha256(run_id.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return runs / ALIVE_DIR / f"{digest}.lock"


class AliveLock:
    """The lock a run's process holds for the run's life (see the module)."""

    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd

    @classmethod
    def hold(cls, runs: Path, run_id: str) -> AliveLock | None:
        """Take ``run_id``'s lock (None when it cannot be taken: the pid is asked then)."""
        path = _path(runs, run_id)
        try:
            own_folder(path.parent)
            fd = open_regular(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            log.debug("harness: no liveness lock for run %s (%s)", run_id, exc)
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:  # no flock here, or held (this process resumes its own run)
            os.close(fd)
            log.debug("harness: no liveness lock for run %s (%s)", run_id, exc.strerror)
            return None
        lock = cls(fd)
        kept(lock)
        return lock

    def release(self) -> None:
        """Drop the lock (idempotent); the file stays, held by no one: the run has ended."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        dropped(self)
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
    path = _path(runs, run_id)
    try:
        fd = open_regular(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as exc:
        held = exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES)
        return True if held else None
    finally:
        os.close(fd)  # (a lock it took is dropped with it)
    return False
