"""One writer per run label: a lock file per label beside the store, held while a run of that
label is open.

Two processes running one ``--label`` at once (two ``--resume``, or two fresh runs) each ran
the cells the other had not stored yet: cells ran twice, and one process's end (compacting the
run, removing its temporary files) broke the other. Now :meth:`Store.begin_run
<harness.store.Store.begin_run>` takes an exclusive ``flock`` on ``runs/_labels/<label>.lock``
(beside the database file) before it touches the run, and holds it until the run is finished;
a second process is refused at once with :class:`~harness.errors.LabelBusy` (``harness run``:
exit 2), whose message names the holder: its pid, host, run id and start time, which the holder
writes into the file. The kernel drops the lock when the holder's process ends however it ends
(``kill -9`` included), so a lock is never stale; the files stay (an empty one, or one naming a
dead process, holds nothing). Within one process a second :class:`Store` is refused too; the
store that holds a label may begin runs of it again (nested ``begin_run``).

Forked children close their copy of the descriptor, so a child outliving its parent (a worker)
never keeps the label. On a network file system ``flock`` is as good as the server's locks.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import logging
import os
import re
import socket
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from harness._files import json_of, open_regular, own_folder
from harness.errors import LabelBusy, StoreError
from harness.store._forked import dropped, kept

__all__ = ["LABELS_DIR", "LabelLock", "holder_of", "label_lock_path"]

LABELS_DIR = "_labels"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
#: How long a refused process waits for the holder to have written its name (it writes it
#: right after taking the lock).
_NAME_WAIT_S = 0.5

_NO_LOCKS = frozenset({errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS})

log = logging.getLogger("harness.store")


def label_lock_path(runs: Path, label: str) -> Path:
    """The lock file of ``label`` under the runs folder ``runs`` (readable, and unique per
    label: a digest of the label follows its safe characters)."""
    safe = _UNSAFE.sub("_", label).strip("._")[:60] or "label"
    digest = hashlib.sha256(label.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return runs / LABELS_DIR / f"{safe}-{digest}.lock"


def holder_of(path: Path) -> dict[str, Any] | None:
    """What the lock file says about its holder (None when it says nothing readable)."""
    data = json_of(path)  # a regular file only: a FIFO blocked the read (round 20 B)
    return data if isinstance(data, dict) and "pid" in data else None


class LabelLock:
    """The held lock of one label (see the module). Build one with :meth:`acquire`."""

    def __init__(self, label: str, path: Path, fd: int) -> None:
        self.label = label
        self.path = path
        self._fd: int | None = fd
        self.started = datetime.now().astimezone()
        self.run_id: str | None = None

    @classmethod
    def acquire(cls, runs: Path, label: str) -> LabelLock:
        """Take ``label``'s lock at once, or raise :class:`LabelBusy` naming the holder."""
        path = label_lock_path(runs, label)
        try:  # never through a link planted at the name (its target was truncated)
            own_folder(path.parent)  # nor at the folder's
            fd = open_regular(path, os.O_RDWR | os.O_CREAT)
        except OSError as exc:
            raise StoreError(f"label {label!r}: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in _NO_LOCKS:  # a file system without flock: run, and say so
                log.warning("harness: cannot lock label %r (%s: %s); another process could run "
                            "it at the same time", label, path, exc.strerror)  # fmt: skip
                return cls(label, path, fd)
            os.close(fd)
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise
            raise _busy(label, path) from None
        lock = cls(label, path, fd)
        kept(lock)
        lock._write()
        return lock

    @property
    def held(self) -> bool:
        return self._fd is not None

    def note_run(self, run_id: str) -> None:
        """Name the run in the lock file (for the message of a refused process)."""
        self.run_id = run_id
        self._write()

    def _write(self) -> None:
        """Put the holder's name in the file (best effort: a full disk leaves it empty, and a
        refused process then says "another process")."""
        fd = self._fd
        if fd is None:
            return
        info = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "label": self.label,
            "run_id": self.run_id,
            "started": self.started.isoformat(timespec="seconds"),
        }
        data = (json.dumps(info) + "\n").encode("utf-8", "surrogatepass")
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.pwrite(fd, data, 0)

    def release(self) -> None:
        """Drop the lock (idempotent). The file stays, emptied: unlinking it would let a third
        process lock a new file while a second still waits on the old one."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        dropped(self)
        try:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def _forget_in_child(self) -> None:
        """In a forked child: close the inherited descriptor without unlocking (the lock is the
        parent's; LOCK_UN here would drop it for the parent too)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)


def _busy(label: str, path: Path) -> LabelBusy:
    deadline = time.monotonic() + _NAME_WAIT_S
    info = holder_of(path)
    while info is None and time.monotonic() < deadline:  # the holder is writing its name
        time.sleep(0.02)
        info = holder_of(path)
    hint = "wait for it to end, or use another --label"
    if info is None:
        return LabelBusy(f"label {label!r} is being run by another process ({path}); {hint}")
    pid = info.get("pid")
    where = "" if info.get("host") in (None, socket.gethostname()) else f" on {info['host']}"
    run = f"run {info['run_id']}, " if info.get("run_id") else ""
    started = str(info.get("started") or "?")
    with contextlib.suppress(ValueError):
        started = datetime.fromisoformat(started).strftime("%H:%M:%S")
    return LabelBusy(
        f"label {label!r} is being run by pid {pid}{where} ({run}started {started}); {hint}",
        pid=pid if isinstance(pid, int) else None,
    )
